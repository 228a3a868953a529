import Foundation
import HeraldDomain
import PropertyBased
import TestSupport
import Testing

/// One generated event: its JSON, and whether the documented rules keep it (and as what).
struct GeneratedEvent: Sendable {
    /// What a kept event adds to the stats.
    struct Kept: Sendable, Hashable {
        let id: String
        let campaign: Int
        let type: String
        let day: String
        let platform: String
        let installation: [UInt8]?
        let test: Bool
        let detail: String
        /// The version shown, in canonical case; nil for the default.
        let language: String?
    }

    let json: JSONValue
    /// nil when a rule refuses it.
    let kept: Kept?
    let reason: String
}

/// A batch as a delivery component (or anything else) might send it.
struct EventBatchCase: Sendable, CustomStringConvertible {
    let body: [UInt8]
    var contentType = "application/json"
    let events: [GeneratedEvent]
    /// 200 with the events checked one by one, or the status refusing the whole batch.
    let status: Int
    /// Earlier kept events (by position in the run's list of kept events) sent again in this batch.
    let resent: [Int]
    /// Its discard counts, and the `discards` member as sent (nil: absent).
    var discards: [GeneratedDiscard] = []
    var discardsMember: JSONValue?

    /// `"discards": null`, which reads as none.
    var sendsNullDiscards: Bool { if case .null? = discardsMember { true } else { false } }

    var description: String {
        "\(status) \(String(decoding: body.prefix(4000), as: UTF8.self))" + (resent.isEmpty ? "" : "\nresending kept events \(resent)")
    }
}

enum EventBatches {
    /// Every type, in-app and push (`EventType.allCases`).
    static let kinds = EventType.allCases.map(\.rawValue)
    static let details = ["click": ["primary", "secondary", "body"], "dismiss": ["auto", "click", "swipe", "unknown"],
                          "error": ["image_fetch", "image_display", "image_format", "unspecified"]]
    static let detailKeys = ["click": "action", "dismiss": "dismissType", "error": "errorCode", "conversion": "event"]
    /// Tags as devices may write them, and as Herald stores them.
    static let languages = [("fa", "fa"), ("ar", "ar"), ("de", "de"), ("ja", "ja"), ("pt-BR", "pt-BR"), ("pt-br", "pt-BR"), ("PT", "pt"),
                            ("zh-hant-tw", "zh-Hant-TW"), ("es-419", "es-419")]
    /// 2020-01-01T00:00:00Z, the earliest time an event may claim.
    static let earliest: Int64 = 1_577_836_800_000

    /// `campaigns` are in-app campaigns of the app, `pushCampaign` a push campaign of it.
    static func generator(
        campaigns: [Int64], pushCampaign: Int64, otherAppCampaign: Int64, testDevice: String, now: Date
    ) -> Generator<EventBatchCase, Shrink.None<EventBatchCase>> {
        let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded())
        return Generated.cases { draw in
            let size = draw.chance(0.03) ? draw.pick([1000, 1001]) : draw.int(0...40)
            let events = (0..<size).map { _ in
                size > 40 ? impression(&draw, campaign: campaigns[0], now: nowMilliseconds)
                    : event(&draw, campaigns: campaigns, push: pushCampaign, other: otherAppCampaign, testDevice: testDevice, now: nowMilliseconds)
            }
            var members: [(key: String, value: JSONValue)] = [("events", .array(events.map(\.json)))]
            let discards = DiscardBatches.member(
                &draw, campaigns: campaigns, push: pushCampaign, other: otherAppCampaign, testDevice: testDevice, now: nowMilliseconds)
            if let member = discards.json { members.insert(("discards", member), at: draw.int(0...1)) }
            if draw.chance(0.2) { members.insert(("batch", .object([("sdk", .string("herald-swift")), ("sent", .array([.number(1), .null]))])), at: draw.int(0...1)) }
            let resent = draw.chance(0.3) ? draw.list(1...5) { $0.int(0...10_000) } : []
            let json = JSONValue.object(members)
            switch draw.int(0...19) {
            case 0:
                return EventBatchCase(body: broken(&draw, json), events: [], status: 400, resent: [])
            case 1:
                var refused = EventBatchCase(body: Array(json.text.utf8), events: [], status: 415, resent: [])
                refused.contentType = draw.pick(["text/html", "application/x-ndjson", "", "multipart/form-data; boundary=x"])
                return refused
            default:
                var batch = EventBatchCase(
                    body: Array(json.text.utf8), events: events, status: size > 1000 || discards.tooMany ? 422 : 200, resent: resent,
                    discards: discards.discards, discardsMember: discards.json)
                // A browser's beacon sends the same JSON as text/plain.
                if draw.chance(0.1) { batch.contentType = draw.pick(["text/plain;charset=UTF-8", "text/plain"]) }
                return batch
            }
        }
    }

    static func broken(_ draw: inout Draw, _ json: JSONValue) -> [UInt8] {
        let text = Array(json.text.utf8)
        return switch draw.int(0...5) {
        case 0: Array(text.prefix(draw.int(0...(text.count - 1))))
        case 1: text + Array(draw.pick(["x", "}", ",", "[]"]).utf8)
        case 2: Array(#"{"events": [{"id": "\#u{FF}"}]}"#.utf8).map { $0 == 0xC3 ? 0xFF : $0 }
        case 3: Array(draw.pick([#"{"events": {}}"#, #"{"event": []}"#, "[]", "null", #"{"events": "x"}"#, "", #"{"events": [], "discards": {}}"#,
                                 #"{"discards": [], "events": [], "discards": 1}"#]).utf8)
        case 4: Array(("{\"deep\": " + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + ", \"events\": []}").utf8)
        default: Array(#"{"events": [{"id": "\ud800"}]}"#.utf8)
        }
    }

    static func impression(_ draw: inout Draw, campaign: Int64, now: Int64) -> GeneratedEvent {
        let id = uuid(&draw)
        let time = now - draw.int64(0...86_400_000)
        let json = JSONValue.object([("id", .string(id)), ("type", .string("impression")), ("campaignId", .number(Double(campaign))),
                                     ("occurredAt", .string(GeneratedTime.written(time))), ("platform", .string("ios"))])
        return GeneratedEvent(json: json, kept: .init(id: id.lowercased(), campaign: Int(campaign), type: "impression", day: day(time), platform: "ios",
                                                      installation: nil, test: false, detail: "", language: nil), reason: "")
    }

    /// An event, valid or broken in one documented way: in-app events about one of `campaigns`, push events
    /// about `push`, unless the event is drawn about a campaign of the other channel.
    static func event(_ draw: inout Draw, campaigns: [Int64], push: Int64, other: Int64, testDevice: String, now: Int64) -> GeneratedEvent {
        let type = draw.pick(kinds)
        let isPush = EventType(rawValue: type)?.channel == .push
        var id = uuid(&draw)
        var campaign: JSONValue = .number(Double(isPush ? push : draw.pick(campaigns)))
        var time = draw.chance(0.8) ? now - draw.int64(0...86_400_000 * 300) : draw.int64(earliest...now)
        if draw.chance(0.05) { time = draw.pick([earliest, now + 3_600_000]) }
        var occurredAt = JSONValue.string(GeneratedTime.text(&draw, for: time))
        var platform = draw.pick(Platform.allCases).rawValue
        var installation: String? = switch draw.int(0...4) {
        case 0: nil
        case 1: testDevice
        case 2: GeneratedText.valid(&draw, maxPieces: 4, maxCharacters: 200)
        default: "iid-\(draw.int(0...30))"
        }
        var detail = ""
        var members: [(key: String, value: JSONValue)] = []
        // Absent, null, or a tag in any case; each event of a display says which version it showed.
        var language: String?
        switch draw.int(0...4) {
        case 0: break
        case 1: members.append(("language", .null))
        default:
            let (written, canonical) = draw.pick(languages)
            members.append(("language", .string(written)))
            language = canonical
        }
        if let key = detailKeys[type] {
            detail = type == "conversion" ? draw.pick(ValidCampaign.customEvents + ["purchase"]) : draw.pick(details[type]!)
            members.append((key, .string(detail)))
        }
        if type == "click", draw.chance(0.5) {
            members.append(("url", .string(draw.chance(0.9) ? ValidCampaign.https(&draw) : "https://example.com/" + String(repeating: "u", count: 1980))))
        }
        var reason = ""
        switch draw.int(0...24) {
        case 0: id = draw.pick(["", "not-a-uuid", String(id.dropLast()), id + "0", id.replacingOccurrences(of: "-", with: "_"), "{\(id)}"]); reason = "id"
        case 1: members.append(("type", .string(draw.pick(["Impression", "view", "", "click "])))); reason = "type"
        case 2: campaign = draw.pick([.number(Double(other)), .number(999_999), .null, .string("1"), .literal("1.5"), .literal("1e400")]); reason = "campaignId"
        case 3: occurredAt = draw.pick([.string(GeneratedTime.written(earliest - 1)), .string(GeneratedTime.written(now + 3_600_001)),
                                        .string(GeneratedTime.invalid(&draw)), .number(1_790_000_000), .null]); reason = "occurredAt"
        case 4: platform = draw.pick(["iOS", "windows", "", "ios "]); reason = "platform"
        case 5: installation = draw.pick(["", GeneratedText.characters(201)]); reason = "installationId"
        case 6:
            if let key = detailKeys[type] {
                members.removeAll { $0.key == key }
                let wrong = type == "conversion" ? ["1x", "firebase_x", "", "a-b", "GA_x"] : ["tap", "PRIMARY", "", " body"]
                if draw.chance(0.5) { members.append((key, .string(draw.pick(wrong)))) }
                reason = key
            }
        case 7:
            if type == "click" {
                members.removeAll { $0.key == "url" }
                members.append(("url", .string("https://example.com/" + String(repeating: "u", count: 1981))))
                reason = "url"
            }
        case 8: members.append(("platform", .number(1))); reason = "a number for platform"
        case 9:
            members.removeAll { $0.key == "language" }
            members.append(("language", draw.pick([.string(""), .string("english"), .string("fa_IR"), .string("pt-BR-x"), .string("e\u{301}n"),
                                                   .string(String(repeating: "a", count: 13)), .string(GeneratedText.characters(40)), .number(1), .bool(true)])))
            reason = "language"
        case 10, 11:
            // About a campaign of the other channel: a push event of an in-app campaign, an in-app event of a push campaign.
            campaign = .number(Double(isPush ? draw.pick(campaigns) : push)); reason = "channel"
        default: break
        }
        if let installation { members.append(("installationId", .string(installation))) } else if draw.chance(0.3) { members.append(("installationId", .null)) }
        members += [("id", .string(id)), ("campaignId", campaign), ("occurredAt", occurredAt)]
        // Each key once: with a repeated key, which value counts would depend on the shuffled order.
        for (key, value) in [("platform", JSONValue.string(platform)), ("type", .string(type))] where !members.contains(where: { $0.key == key }) {
            members.append((key, value))
        }
        if draw.chance(0.1) { members.append(("extra", .object([("nested", .array([.bool(true)]))]))) }
        for index in members.indices.reversed() where index > 0 { members.swapAt(index, draw.int(0...index)) }
        guard reason.isEmpty, case .number(let campaignID) = campaign else {
            return GeneratedEvent(json: .object(members), kept: nil, reason: reason)
        }
        let canonical = id.lowercased()
        return GeneratedEvent(json: .object(members), kept: .init(
            id: canonical, campaign: Int(campaignID), type: type, day: day(time), platform: platform,
            installation: installation.map { Array($0.utf8) }, test: installation == testDevice, detail: detail, language: language), reason: "")
    }

    static func uuid(_ draw: inout Draw) -> String {
        let hex = Array("0123456789abcdef")
        let text = String((0..<32).map { _ in draw.pick(hex) })
        let parts = [text.prefix(8), text.dropFirst(8).prefix(4), text.dropFirst(12).prefix(4), text.dropFirst(16).prefix(4), text.dropFirst(20)]
        let id = parts.joined(separator: "-")
        return draw.chance(0.2) ? id.uppercased() : id
    }

    static func day(_ milliseconds: Int64) -> String {
        String(GeneratedTime.written(milliseconds).prefix(10))
    }
}

@Suite("Generated event batches against the application", .serialized)
struct GeneratedEventProperty {
    @Test("Generated event batches are never a 5xx; each event is kept or rejected by the documented rules, once per id, and the kept ones add up in the stats")
    func eventBatches() async throws {
        let fixture = try await GeneratedFixture.make()
        let now = fixture.app.clock.now
        let campaigns = try (1...3).map { index in
            try fixture.app.database.campaigns.create(
                Campaign(app: fixture.shop, name: "Campaign \(index)", message: Message(layout: .modal, title: .init(text: "hi"))),
                state: .published, actor: .commandLine, now: now)
        }
        let push = try fixture.app.database.campaigns.create(
            Campaign(app: fixture.shop, name: "Push", push: PushNotification(title: "hi")), state: .draft, actor: .commandLine, now: now)
        var stored: [(kept: GeneratedEvent.Kept, json: JSONValue)] = []
        var ids: Set<String> = []
        var storedDiscards: [(kept: GeneratedDiscard.Kept, json: JSONValue)] = []
        var discardIDs: Set<String> = []
        var run = GeneratedRun("event batches", cases: 250)
        let generator = EventBatches.generator(
            campaigns: campaigns, pushCampaign: push, otherAppCampaign: fixture.otherCampaign, testDevice: fixture.testDevice, now: now)
        run.run(generator) { batch, run in
            var events = batch.events.map { ($0.json, $0.kept) }
            var discards = batch.discards.map { ($0.json, $0.kept) }
            if batch.status == 200, batch.events.count <= 40, !stored.isEmpty {
                events += batch.resent.map { stored[$0 % stored.count] }.map { ($0.json, $0.kept) }
            }
            if batch.status == 200, !batch.sendsNullDiscards, !storedDiscards.isEmpty {
                discards += batch.resent.map { storedDiscards[$0 % storedDiscards.count] }.map { ($0.json, $0.kept) }
            }
            var members: [(key: String, value: JSONValue)] = [("events", .array(events.map(\.0)))]
            if batch.sendsNullDiscards {
                members.append(("discards", .null))
            } else if !discards.isEmpty {
                members.append(("discards", .array(discards.map(\.0))))
            }
            let body = batch.status == 200 ? Array(JSONValue.object(members).text.utf8) : batch.body
            let answer = fixture.api("POST", "/api/v1/events", body: body, contentType: batch.contentType)
            run.note("\(answer.status)")
            run.expect(answer.status == batch.status, "answered \(answer.status), not \(batch.status): \(answer.text.prefix(1000))", input: batch)
            guard answer.status == 200, batch.status == 200 else { return }
            let result = try JSONValue.parse(answer.body)
            Self.expectAnswer(result, events, id: \.id, kept: &stored, ids: &ids, what: "events", batch: batch, &run)
            Self.expectAnswer(result["discards"], discards, id: \.id, kept: &storedDiscards, ids: &discardIDs, what: "discard counts", batch: batch, &run)
        }
        let (from, to) = (EventBatches.day(Int64(now.timeIntervalSince1970 * 1000) - 365 * 86_400_000), EventBatches.day(Int64(now.timeIntervalSince1970 * 1000) + 3_600_000))
        for campaign in campaigns + [push] {
            let inRange = storedDiscards.map(\.kept).filter { $0.campaign == Int(campaign) && !$0.test && $0.day >= from && $0.day <= to }
            let expected = Dictionary(grouping: inRange, by: \.reason)
                .mapValues { JSONValue.number(Double($0.reduce(0) { $0 + $1.count })) }
            let stats = try? JSONValue.parse(fixture.api("GET", "/api/v1/campaigns/\(campaign)/stats?from=\(from)&to=\(to)").body)
            if let difference = firstDifference(stats?["discardsByReason"] ?? .null, .object(expected.map { ($0.key, $0.value) })) {
                run.fail("discardsByReason of campaign \(campaign) differs at \(difference)", input: campaign)
            }
        }
        for campaign in campaigns + [push] {
            Self.expectStats(fixture, campaign: campaign, stored.map(\.kept).filter { $0.campaign == Int(campaign) }, &run)
        }
        Self.expectPushEvents(fixture, campaign: push, stored.map(\.kept).filter { $0.campaign == Int(push) }, &run)
    }

    /// The answer (the events', or its `discards`) says how many items were new, how many were already stored
    /// (by id), and rejects exactly the items the rules refuse, by index; the new ones join `kept`.
    static func expectAnswer<Kept>(
        _ answer: JSONValue?, _ sent: [(JSONValue, Kept?)], id: KeyPath<Kept, String>, kept: inout [(kept: Kept, json: JSONValue)],
        ids: inout Set<String>, what: String, batch: EventBatchCase, _ run: inout GeneratedRun
    ) {
        var accepted = 0, duplicates = 0
        for (json, item) in sent {
            guard let item else { continue }
            if ids.insert(item[keyPath: id]).inserted {
                accepted += 1
                kept.append((item, json))
            } else {
                duplicates += 1
            }
        }
        let rejected: [Int] = if case .array(let items)? = answer?["rejected"] { items.compactMap { $0["index"]?.numberValue.map(Int.init) } } else { [] }
        let refused = sent.indices.filter { sent[$0].1 == nil }
        let disagreeing = Set(rejected).symmetricDifference(refused).sorted().map { "\($0): \(sent[$0].0.text.prefix(3000))" }
        run.expect(rejected == refused, "rejected \(what) \(rejected), the rules refuse \(refused); they disagree on \(disagreeing)", input: batch)
        run.expect(answer?["accepted"]?.numberValue == Double(accepted) && answer?["duplicates"]?.numberValue == Double(duplicates),
                   "answered \(answer?.text.prefix(300) ?? "nothing"), expected \(accepted) \(what) accepted and \(duplicates) duplicates", input: batch)
        run.note("\(what) kept", accepted)
        run.note("\(what) rejected", refused.count)
        run.note("\(what) sent again", duplicates)
    }

    /// The push campaign's rollups hold exactly its kept events, all of them push events: none of an in-app
    /// campaign's events was stored against it (and the stats' in-app figures of it are zero, `expectStats`).
    static func expectPushEvents(_ fixture: GeneratedFixture, campaign: Int64, _ kept: [GeneratedEvent.Kept], _ run: inout GeneratedRun) {
        do {
            let rows = try fixture.app.database.events.counts(campaignID: campaign, from: "2000-01-01", to: "2100-12-31", devices: false).rows
            run.expect(rows.allSatisfy { $0.type.channel == .push }, "in-app events stored against a push campaign: \(rows.filter { $0.type.channel != .push })",
                       input: campaign)
            for type in Channel.push.eventTypes {
                let stored = rows.filter { $0.type == type && !$0.test }.reduce(0) { $0 + $1.count }
                let expected = kept.count { $0.type == type.rawValue && !$0.test }
                run.expect(stored == expected, "\(stored) \(type.rawValue) events of the push campaign stored, not \(expected)", input: campaign)
            }
        } catch {
            run.fail("the push campaign's counts did not read: \(error)", input: campaign)
        }
    }

    /// The stats of `campaign`, over ranges covering every day with events, count exactly the kept events.
    static func expectStats(_ fixture: GeneratedFixture, campaign: Int64, _ kept: [GeneratedEvent.Kept], _ run: inout GeneratedRun) {
        var days = Set(kept.map(\.day)).sorted()
        while let first = days.first {
            let start = GeneratedTime.calendar.date(from: DateComponents(
                year: Int(first.prefix(4)), month: Int(first.dropFirst(5).prefix(2)), day: Int(first.suffix(2))))!
            let last = EventBatches.day(Int64(start.timeIntervalSince1970 * 1000) + 365 * 86_400_000)
            let inRange = kept.filter { $0.day >= first && $0.day <= last }
            days.removeAll { $0 <= last }
            let answer = fixture.api("GET", "/api/v1/campaigns/\(campaign)/stats?from=\(first)&to=\(last)")
            run.expect(answer.status == 200, "stats answered \(answer.status): \(answer.text.prefix(300))", input: first)
            guard let stats = try? JSONValue.parse(answer.body) else { continue }
            for (key, test) in [("totals", false), ("test", true)] {
                let events = inRange.filter { $0.test == test }
                for (field, type) in [("impressions", "impression"), ("clicks", "click"), ("dismissals", "dismiss"), ("errors", "error"), ("conversions", "conversion")] {
                    let expected = events.count { $0.type == type }
                    run.expect(stats.at("\(key).\(field)")?.numberValue == Double(expected),
                               "\(key).\(field) of campaign \(campaign) from \(first) to \(last) is \(stats.at("\(key).\(field)")?.text ?? "absent"), not \(expected)", input: first)
                }
                let devices = Set(events.compactMap(\.installation)).count
                run.expect(stats.at("\(key).uniqueDevices")?.numberValue == Double(devices),
                           "\(key).uniqueDevices is \(stats.at("\(key).uniqueDevices")?.text ?? "absent"), not \(devices)", input: first)
            }
            let live = inRange.filter { !$0.test }
            for (field, type) in [("clicksByAction", "click"), ("dismissalsByType", "dismiss"), ("errorsByCode", "error"), ("conversionsByEvent", "conversion")] {
                let expected = Dictionary(grouping: live.filter { $0.type == type }, by: \.detail).mapValues { JSONValue.number(Double($0.count)) }
                if let difference = firstDifference(stats[field] ?? .null, .object(expected.map { ($0.key, $0.value) })) {
                    run.fail("\(field) of campaign \(campaign) differs at \(difference)", input: first)
                }
            }
            expectLanguages(stats, live, campaign: campaign, from: first, &run)
            if case .array(let daily)? = stats["daily"] {
                run.expect(daily.count == 366, "\(daily.count) days in the daily series of a 366-day range", input: first)
                for day in daily {
                    guard case .string(let date)? = day["date"] else { continue }
                    let expected = live.count { $0.day == date && $0.type == "impression" }
                    run.expect(day["impressions"]?.numberValue == Double(expected), "\(date): \(day["impressions"]?.text ?? "absent") impressions, not \(expected)", input: first)
                }
            }
        }
    }

    /// `byLanguage` lists every language shown (the run sends fewer than `EventCounts.topLanguages`), most
    /// impressions first, the default version without `language`, each with exactly its events' counts.
    static func expectLanguages(_ stats: JSONValue, _ live: [GeneratedEvent.Kept], campaign: Int64, from first: String, _ run: inout GeneratedRun) {
        guard case .array(let rows)? = stats["byLanguage"] else {
            run.fail("no byLanguage array in the stats of campaign \(campaign)", input: first)
            return
        }
        let fields = [("impressions", "impression"), ("clicks", "click"), ("dismissals", "dismiss"), ("errors", "error"), ("conversions", "conversion")]
        let expected = Dictionary(grouping: live, by: \.language).mapValues { events in
            fields.map { _, type in Double(events.count { $0.type == type }) }
        }
        var seen: [String?: [Double]] = [:]
        for row in rows {
            let language: String? = if case .string(let tag)? = row["language"] { tag } else { nil }
            seen[language] = fields.map { row[$0.0]?.numberValue ?? -1 }
        }
        run.expect(seen == expected, "byLanguage of campaign \(campaign) from \(first) is \(seen), not \(expected)", input: first)
        let impressions = rows.map { $0["impressions"]?.numberValue ?? 0 }
        run.expect(impressions == impressions.sorted(by: >), "byLanguage is not in order of impressions: \(impressions)", input: first)
        run.expect(stats.at("otherLanguages.impressions")?.numberValue == 0, "otherLanguages is not empty", input: first)
    }
}
