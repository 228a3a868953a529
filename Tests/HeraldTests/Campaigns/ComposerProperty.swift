import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import PropertyBased
import TestSupport
import Testing

/// A composer submission: the fields, and the campaign they must save (nil for fields that may be refused).
struct ComposerCase: Sendable, CustomStringConvertible {
    let fields: [(String, String)]
    let expected: Campaign?

    var description: String { fields.map { "\($0.0)=\(JSONValue.quoted($0.1))" }.joined(separator: "\n") }
}

enum ComposerCases {
    static func generator(app: Int64) -> Generator<ComposerCase, Shrink.None<ComposerCase>> {
        Generated.cases { draw in
            if draw.chance(0.7) {
                let campaign = draw.chance(0.3) ? pushCampaign(&draw, app: app) : campaign(&draw, app: app)
                return ComposerCase(fields: CampaignForm.encode(campaign).pairs.map { ($0.name, $0.value) }, expected: campaign)
            }
            return ComposerCase(fields: wild(&draw, app: app), expected: nil)
        }
    }

    /// Text as the composer keeps it: trimmed, never blank.
    static func text(_ draw: inout Draw, pieces: Int = 4, multiline: Bool = false, characters: Int = 60) -> String {
        GeneratedText.valid(&draw, maxPieces: pieces, multiline: multiline, maxCharacters: characters).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A valid campaign the composer can show and save unchanged: times on the minute in the campaign's
    /// zone (and not in an hour the zone repeats), numbers and texts as its fields write them.
    static func campaign(_ draw: inout Draw, app: Int64) -> Campaign {
        let layout = draw.pick(Message.Layout.allCases)
        var message = Message(layout: layout)
        if draw.chance(0.8) { message.title = .init(text: text(&draw, multiline: true), color: draw.chance(0.3) ? ValidCampaign.color(&draw) : nil) }
        if draw.chance(0.6) { message.body = .init(text: text(&draw, pieces: 10, multiline: true, characters: 500), color: draw.chance(0.3) ? ValidCampaign.color(&draw) : nil) }
        if draw.chance(0.7) { message.imageUrl = ValidCampaign.https(&draw) }
        if draw.chance(0.3) { message.landscapeImageUrl = ValidCampaign.https(&draw) }
        if draw.chance(0.5) { message.backgroundColor = ValidCampaign.color(&draw) }
        func button(_ draw: inout Draw) -> Message.Button {
            Message.Button(text: text(&draw, pieces: 2, characters: 40), textColor: draw.chance(0.3) ? ValidCampaign.color(&draw) : nil,
                           buttonColor: draw.chance(0.3) ? ValidCampaign.color(&draw) : nil, url: draw.chance(0.8) ? ValidCampaign.link(&draw) : nil)
        }
        if draw.chance(0.6) { message.primaryAction = button(&draw) }
        if draw.chance(0.4) { message.secondaryAction = button(&draw) }
        if draw.chance(0.5) { message.action = .init(url: ValidCampaign.link(&draw)) }
        if draw.chance(0.4) { message.dismiss = .init(seconds: draw.int(1...120)) }
        if draw.chance(0.4) { message.slideFrom = draw.pick(Message.SlideEdge.allCases) }
        if draw.chance(0.4) { message.orientation = draw.pick(Message.Orientation.allCases) }
        // Language versions: the composer once dropped them on every save.
        if draw.chance(0.4) {
            var versions: [String: MessageTranslation] = [:]
            for tag in draw.list(1...3, { $0.pick(["fa", "ar", "de", "ja", "pt-BR", "zh-Hant", "he"]) }) {
                var version = MessageTranslation()
                if draw.chance(0.6) { version.title = .init(text: text(&draw, multiline: true)) }
                if draw.chance(0.4) { version.body = .init(text: text(&draw, pieces: 6, multiline: true, characters: 300)) }
                if draw.chance(0.3) { version.imageUrl = ValidCampaign.https(&draw) }
                if draw.chance(0.2) { version.landscapeImageUrl = ValidCampaign.https(&draw) }
                if draw.chance(0.4) {
                    // Its text, its action, or both.
                    let url = draw.chance(0.5) ? ValidCampaign.link(&draw) : nil
                    version.primaryAction = .init(text: url == nil || draw.chance(0.6) ? text(&draw, pieces: 2, characters: 40) : nil, url: url)
                }
                if draw.chance(0.3) { version.secondaryAction = .init(text: text(&draw, pieces: 2, characters: 40)) }
                if draw.chance(0.3) { version.action = .init(url: ValidCampaign.link(&draw)) }
                versions[tag] = version
            }
            message.translations = versions
        }

        var campaign = Campaign(app: app, name: text(&draw, pieces: 6, characters: 200), message: message.keepingLayoutFields)
        if draw.chance(0.5) { campaign.description = text(&draw, pieces: 12, multiline: true, characters: 2000) }
        campaign.priority = draw.int(1...10)
        campaign.schedule = schedule(&draw)
        campaign.triggers = draw.list(0...3) { draw in
            let kind = draw.int(0...2)
            if kind == 0 { return Trigger(event: draw.pick(Trigger.builtInEvents)) }
            return Trigger(event: kind == 1 ? Trigger.purchaseEvent : draw.pick(ValidCampaign.customEvents), filters: draw.list(0...3, filter))
        }
        if draw.chance(0.3) {
            let event = draw.chance(0.5) ? Trigger.purchaseEvent : draw.pick(ValidCampaign.customEvents)
            campaign.conversion = ConversionGoal(event: event, filters: draw.list(0...3, filter), windowHours: draw.int(CampaignLimits.conversionWindowHours))
        }
        let type = draw.pick(Frequency.Kind.allCases)
        campaign.frequency = Frequency(type: type, days: type == .everyNDays ? draw.int(1...365) : nil)
        var targeting = Targeting()
        if draw.chance(0.4) { targeting.platforms = Array(Set(draw.list(1...3) { $0.pick(Platform.allCases) })).sorted { $0.rawValue < $1.rawValue } }
        if draw.chance(0.3) {
            let op = draw.pick(Targeting.VersionRule.Operator.allCases)
            targeting.appVersion = .init(op: op, value: op == .regex ? draw.pick(["^1\\.", "(beta|rc)"]) : text(&draw, pieces: 2, characters: 100))
        }
        if draw.chance(0.3) { targeting.languages = draw.list(1...4) { $0.pick(ValidCampaign.languages) } }
        if draw.chance(0.3) { targeting.countries = draw.list(1...4) { $0.pick(ValidCampaign.countries) } }
        if draw.chance(0.3) { targeting.userProperties = draw.list(1...3, filter) }
        if draw.chance(0.3) {
            let bounds = [draw.int(0...36_500), draw.int(0...36_500)].sorted()
            targeting.daysSinceFirstOpen = .init(min: draw.chance(0.7) ? bounds[0] : nil, max: draw.chance(0.7) ? bounds[1] : nil)
            if targeting.daysSinceFirstOpen == .init() { targeting.daysSinceFirstOpen = nil }
        }
        if draw.chance(0.3) { targeting.percentage = draw.int(1...100) }
        campaign.targeting = targeting
        campaign.testOnDevice = draw.chance(0.2)
        campaign.data = customData(&draw, pairs: 0...5, keyCharacters: 100, valueCharacters: 1000)
        return campaign
    }

    /// A valid push campaign the push composer can show and save unchanged: the targeting the server
    /// evaluates, custom data under keys the payload does not use, every version within both providers' limits.
    static func pushCampaign(_ draw: inout Draw, app: Int64) -> Campaign {
        var push = PushNotification()
        push.silent = draw.chance(0.1)
        if !push.silent {
            if draw.chance(0.8) { push.title = text(&draw, pieces: 3, characters: 80) }
            if draw.chance(0.4) { push.subtitle = text(&draw, pieces: 2, characters: 40) }
            if draw.chance(0.8) || push.title == nil { push.body = text(&draw, pieces: 8, multiline: true, characters: 300) }
            if draw.chance(0.3) { push.imageUrl = ValidCampaign.https(&draw) }
            if draw.chance(0.3) { push.badge = draw.chance(0.3) ? draw.pick([0, CampaignLimits.badge.upperBound]) : draw.int(CampaignLimits.badge) }
            if draw.chance(0.3) { push.sound = draw.pick(["default", "chime.caf"]) }
            if draw.chance(0.4) {
                var versions: [String: PushTranslation] = [:]
                for tag in draw.list(1...3, { $0.pick(["fa", "ar", "de", "ja", "pt-BR", "he"]) }) {
                    var version = PushTranslation()
                    if draw.chance(0.7) { version.title = text(&draw, pieces: 3, characters: 80) }
                    if draw.chance(0.6) { version.body = text(&draw, pieces: 6, multiline: true, characters: 300) }
                    if draw.chance(0.2) { version.subtitle = text(&draw, pieces: 2, characters: 40) }
                    if draw.chance(0.2) { version.imageUrl = ValidCampaign.https(&draw) }
                    if draw.chance(0.2) { version.url = ValidCampaign.link(&draw) }
                    versions[tag] = version
                }
                push.translations = versions
            }
        }
        if draw.chance(0.3) { push.category = draw.pick(["OFFER", "REPLY", "open_sale"]) }
        if draw.chance(0.3) { push.threadId = text(&draw, pieces: 2, characters: 40) }
        if draw.chance(0.4) { push.url = ValidCampaign.link(&draw) }

        var campaign = Campaign(app: app, name: text(&draw, pieces: 6, characters: 200), push: push)
        if draw.chance(0.3) { campaign.description = text(&draw, pieces: 6, multiline: true, characters: 500) }
        // Not shown for a notification, and kept as they were.
        campaign.priority = draw.int(1...10)
        let type = draw.pick(Frequency.Kind.allCases)
        campaign.frequency = Frequency(type: type, days: type == .everyNDays ? draw.int(1...365) : nil)
        campaign.schedule = schedule(&draw)
        campaign.push?.inDeviceTimeZone = campaign.schedule.start != nil && draw.chance(0.4)
        var targeting = Targeting()
        if draw.chance(0.4) { targeting.platforms = Array(Set(draw.list(1...3) { $0.pick(Platform.allCases) })).sorted { $0.rawValue < $1.rawValue } }
        if draw.chance(0.3) { targeting.appVersion = .init(op: .equals, value: draw.pick(["1.0", "2.4.1"])) }
        if draw.chance(0.3) { targeting.languages = draw.list(1...4) { $0.pick(ValidCampaign.languages) } }
        if draw.chance(0.3) { targeting.countries = draw.list(1...4) { $0.pick(ValidCampaign.countries) } }
        if draw.chance(0.3) { targeting.percentage = draw.int(1...100) }
        campaign.targeting = targeting
        campaign.testOnDevice = draw.chance(0.2)
        campaign.data = customData(&draw, pairs: 0...3, keyCharacters: 40, valueCharacters: 200) { !PushPayload.isReserved($0) }
        return campaign
    }

    /// Pairs under distinct keys that `allowed` takes, some values empty.
    static func customData(
        _ draw: inout Draw, pairs: ClosedRange<Int>, keyCharacters: Int, valueCharacters: Int, allowed: (String) -> Bool = { _ in true }
    ) -> CustomData {
        var keys: Set<String> = []
        return CustomData(draw.list(pairs) { draw -> CustomData.Pair? in
            let key = text(&draw, pieces: 2, characters: keyCharacters)
            guard allowed(key), keys.insert(key).inserted else { return nil }
            return CustomData.Pair(key: key, value: draw.chance(0.1) ? "" : GeneratedText.valid(&draw, maxPieces: 6, multiline: true, maxCharacters: valueCharacters))
        }.compactMap { $0 })
    }

    static func filter(_ draw: inout Draw) -> PropertyFilter {
        let property = draw.chance(0.5) ? draw.pick(["product_id", "value", "vip"]) : text(&draw, pieces: 2, characters: 40)
        let op = draw.pick(FilterOperator.allCases)
        let value: FilterValue? = switch op {
        case .exists: nil
        case .gt, .gte, .lt, .lte: .number(number(&draw))
        case .contains: .string(text(&draw, pieces: 3))
        case .eq, .ne: draw.pick([.string(text(&draw, pieces: 3)), .number(number(&draw)), .bool(draw.chance(0.5))])
        }
        return PropertyFilter(property: property, op: op, value: value)
    }

    static func number(_ draw: inout Draw) -> Double {
        switch draw.int(0...3) {
        case 0: Double(draw.int(-1000...1000))
        case 1: draw.double(-1e6...1e6)
        case 2: draw.pick([0, 1e15, -1e15, 1e300, .leastNonzeroMagnitude, 0.1, 9.99, 123_456_789_012_345.6])
        default: draw.double(-1e20...1e20)
        }
    }

    static func schedule(_ draw: inout Draw) -> Schedule {
        let zone = draw.pick(ValidCampaign.timeZones)
        var schedule = Schedule(timeZone: zone)
        let times = [GeneratedTime.instant(&draw), GeneratedTime.instant(&draw)].map { milliseconds in
            // On the minute, a day inside the supported range, so the zone's local year keeps four digits.
            Date(timeIntervalSince1970: Double(min(max(milliseconds, GeneratedTime.first + 86_400_000), GeneratedTime.last - 86_400_000) / 60_000 * 60))
        }.sorted()
        let shown = times.filter { date in
            guard let timeZone = TimeZone(identifier: zone) else { return false }
            // A local time the zone repeats (clocks going back) names two instants; the form cannot say which.
            return (try? LocalDateTime.parse(LocalDateTime.format(date, timeZone: zone), in: timeZone).get()) == date
        }
        if shown.count == 2, shown[0] < shown[1] {
            if draw.chance(0.6) { schedule.start = shown[0] }
            if draw.chance(0.6) { schedule.end = shown[1] }
        }
        return schedule
    }

    /// Any composer field with any value, unknown fields, row buttons and far more rows than any page has.
    static func wild(_ draw: inout Draw, app: Int64) -> [(String, String)] {
        let names = ["channel", "push.title", "push.body", "push.badge", "push.silent", "push.inDeviceTimeZone", "push.translations",
                     "push.translations.fa.body", "name", "description", "priority", "message.layout", "message.title.text", "message.imageUrl", "message.dismiss.seconds",
                     "schedule.timeZone", "schedule.startMode", "schedule.start", "schedule.endMode", "schedule.end", "frequency.type",
                     "frequency.days", "targeting.percentage", "targeting.daysSinceFirstOpen.min", "targeting.languages", "targeting.platforms",
                     "targeting.appVersion.op", "targeting.appVersion.value", "testOnDevice", "data.0.key", "data.0.value",
                     "data.99999999999999999999.key", "data.-1.key", "data.+1.value", "triggers.0.event", "triggers.0.filters.0.property",
                     "triggers.0.filters.0.op", "triggers.0.filters.0.type", "triggers.0.filters.0.value", "conversion.event",
                     "conversion.windowHours", "conversion.filters.0.property", "conversion.filters.0.value", "intent", "unknown", ""]
        let values = ["", " ", "0", "-1", "1e999", "٣", "9223372036854775808", "2026-13-01T10:00", "2026-03-29T02:30", "2026-11-01T01:30",
                      "0000-01-01T00:00", "9999-12-31T23:59", "10000-01-01T00:00", "Mars/Olympus", "Europe/Berlin", "at", "publish", "never",
                      "every_n_days", "number", "bool", "gt", "exists", "add:data", "remove:triggers.0", "up:data.1", "add:triggers.0.filters",
                      "remove:x.y", "up:data.99999999999999999999", "refresh", "javascript:alert(1)", "#GGG", "true", "card", "push", "in_app", "fa",
                      "add-language", "remove-language:fa", "99999", "-5", "721", "purchase", "add:conversion.filters", "remove:conversion.filters.0"]
        var fields = [("app", draw.chance(0.9) ? String(app) : draw.pick(["", "0", "99999", "x"]))]
        for _ in 0..<draw.int(0...40) {
            fields.append((draw.pick(names), draw.chance(0.7) ? draw.pick(values) : GeneratedText.withControl(&draw)))
        }
        if draw.chance(0.05) {
            // Rows up to and past the form's field limit.
            fields += (0..<draw.pick([600, 1000, 1001])).flatMap { [("data.\($0).key", "k\($0)"), ("data.\($0).value", "v")] }
        }
        return fields
    }
}

@Suite("Generated composer submissions against the application", .serialized)
struct GeneratedComposerProperty {
    @Test("Generated composer submissions are never a 5xx; a valid campaign saves as shown, and its edit form saves it unchanged")
    func composerForms() async throws {
        let fixture = try await GeneratedFixture.make()
        let token = try #require(TestBrowser.csrfToken(in: fixture.browser.get("/campaigns/new").text))
        var run = GeneratedRun("composer submissions", cases: 150)
        run.run(ComposerCases.generator(app: fixture.shop)) { submission, run in
            // The push composer's live count reads any form the composer could send, and always answers its JSON.
            let count = fixture.browser.post("/campaigns/push-bytes", [("csrf_token", token)] + submission.fields)
            let versions = (try? JSONSerialization.jsonObject(with: Data(count.body)) as? [String: Any])?["versions"] as? [[String: Any]]
            run.expect(count.status == 200 && versions != nil || count.status == 413, "the count answered \(count.status): \(count.text.prefix(300))", input: submission)
            if submission.expected?.channel == .push {
                run.expect(versions?.count == (submission.expected?.push?.translations?.count ?? 0) + 1, "a count for each version", input: submission)
            }
            let answer = fixture.browser.post("/campaigns", [("csrf_token", token)] + submission.fields)
            run.note("\(answer.status)")
            let allowed: Set<Int> = submission.expected == nil ? [200, 303, 413, 422] : [303]
            run.expect(allowed.contains(answer.status), "answered \(answer.status): \(GeneratedCampaignJSONProperty.pageText(answer.text))", input: submission)
            guard answer.status == 303, let location = answer.headers["Location"], let id = Int64(location.split(separator: "/").last ?? "") else {
                return
            }
            let stored = fixture.api("GET", "/api/v1/campaigns/\(id)")
            run.expect(stored.status == 200, "GET answered \(stored.status)", input: submission)
            let saved = try JSONValue.parse(stored.body).removing(GeneratedCampaignJSONProperty.outputOnly)
            if let expected = submission.expected {
                let wanted = try JSONValue.parse(Array(CampaignJSON.encoder().encode(expected.content)))
                if let difference = firstDifference(saved, wanted) {
                    run.fail("the saved campaign differs from the one submitted, at \(difference)\nsaved: \(saved.text.prefix(3000))", input: submission)
                }
            }
            // What the edit form shows, saved without a change, is the same campaign.
            let edit = fixture.browser.get("/campaigns/\(id)/edit")
            run.expect(edit.status == 200, "the edit form answered \(edit.status)", input: submission)
            let current = try CampaignJSON.decoder().decode(Campaign.self, from: Data(stored.body))
            let resubmitted = fixture.browser.post(
                "/campaigns/\(id)", [("csrf_token", token), ("revision", "1")] + CampaignForm.encode(current).pairs.map { ($0.name, $0.value) })
            run.expect(resubmitted.status == 303, "saving the edit form unchanged answered \(resubmitted.status): \(GeneratedCampaignJSONProperty.pageText(resubmitted.text))", input: submission)
            let again = try JSONValue.parse(fixture.api("GET", "/api/v1/campaigns/\(id)").body).removing(GeneratedCampaignJSONProperty.outputOnly)
            if let difference = firstDifference(again, saved) {
                run.fail("saving the edit form unchanged changed the campaign at \(difference)", input: submission)
            }
            run.note("saved and re-saved")
        }
    }
}
