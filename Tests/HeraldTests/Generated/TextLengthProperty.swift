import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import TestSupport
import Testing
@testable import HeraldConsole

/// Every length limit on text counts Unicode scalars, never `Character`s: a letter followed by any
/// number of combining marks is one character as people count them, and "200 characters" so counted
/// let 300 KB through one field. Text is drawn as combining-mark pile-ups (most of them one `Character`)
/// and as mixed text from every plane, with a scalar count at a limit, just past it, or far past it
/// (up to 300,000 scalars); each field refuses it exactly when it holds more scalars than its limit.
@Suite("Generated inputs: length limits count scalars")
struct TextLengthProperty {
    /// `scalars` Unicode scalars: one to three base letters each followed by a pile of combining marks
    /// (the marks cycle from a drawn start: a draw per scalar would make 300,000 of them slow), or text from
    /// every plane (no control characters), cut to that many scalars.
    static func text(_ draw: inout Draw, scalars: Int) -> String {
        var drawn: [Unicode.Scalar] = []
        drawn.reserveCapacity(scalars + 400)
        if scalars > 20_000 || draw.chance(0.7) {
            let piles = min(scalars, draw.int(1...3)), step = UInt32(draw.int(1...13)), start = UInt32(draw.int(0...0x6F))
            for pile in 0..<piles {
                drawn.append(draw.pick(["a", "ب", "字", "ש"] as [Unicode.Scalar]))
                let marks = (pile == piles - 1 ? scalars - drawn.count : (scalars - piles) / piles)
                for index in 0..<max(0, marks) {
                    drawn.append(Unicode.Scalar(0x0300 + (start + UInt32(index) * step) % 0x70)!)
                }
            }
        } else {
            while drawn.count < scalars { drawn.append(contentsOf: GeneratedText.valid(&draw, maxPieces: 8, maxCharacters: 400).unicodeScalars) }
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: drawn.prefix(scalars))
        return String(view)
    }

    /// A scalar count near `limit`, or far past it.
    static func length(_ draw: inout Draw, limit: Int) -> Int {
        switch draw.int(0...9) {
        case 0: draw.int((limit + 1)...(limit * 4))
        case 1: draw.chance(0.2) ? 300_000 : draw.int((limit * 4)...(limit * 20))
        default: max(1, limit + draw.int(-3...3))
        }
    }

    /// A campaign field with a limit: where its problem is reported, the limit, and how to set it.
    struct Field: @unchecked Sendable {
        let path: String
        let limit: Int
        let set: (inout Campaign, String) -> Void
    }

    static let fields: [Field] = [
        Field(path: "name", limit: CampaignLimits.nameLength) { $0.name = $1 },
        Field(path: "description", limit: CampaignLimits.descriptionLength) { $0.description = $1 },
        Field(path: "message.title.text", limit: CampaignLimits.titleLength) { $0.message.title?.text = $1 },
        Field(path: "message.body.text", limit: CampaignLimits.bodyLength) { $0.message.body?.text = $1 },
        Field(path: "message.primaryAction.text", limit: CampaignLimits.buttonTextLength) { $0.message.primaryAction?.text = $1 },
        Field(path: "data.0.key", limit: CampaignLimits.dataKeyLength) { $0.data.pairs[0].key = $1 },
        Field(path: "data.0.value", limit: CampaignLimits.dataValueLength) { $0.data.pairs[0].value = $1 },
        Field(path: "triggers.1.filters.0.value", limit: CampaignLimits.filterTextLength) {
            $0.triggers[1].filters = [PropertyFilter(property: "product", op: .eq, value: .string($1))]
        },
        Field(path: "targeting.appVersion.value", limit: CampaignLimits.appVersionRuleLength) { $0.targeting.appVersion = .init(op: .contains, value: $1) },
    ]

    static let pushFields: [Field] = [
        Field(path: "push.title", limit: CampaignLimits.titleLength) { $0.push?.title = $1 },
        Field(path: "push.subtitle", limit: CampaignLimits.pushSubtitleLength) { $0.push?.subtitle = $1 },
        Field(path: "push.body", limit: CampaignLimits.bodyLength) { $0.push?.body = $1 },
        Field(path: "push.sound", limit: CampaignLimits.pushNameLength) { $0.push?.sound = $1 },
        Field(path: "push.category", limit: CampaignLimits.pushNameLength) { $0.push?.category = $1 },
        Field(path: "push.threadId", limit: CampaignLimits.pushNameLength) { $0.push?.threadId = $1 },
    ]

    @Test func campaignFieldsRefuseMoreScalarsThanTheirLimit() {
        let inApp = RulesFixtures.campaign(.card)
        let push = Campaign(app: 7, name: "Sale", push: PushNotification(title: "Sale", body: "Half price today"))
        var run = GeneratedRun("campaign text limits in scalars", cases: 1500)
        run.run(Generated.cases { draw -> (field: Int, text: String) in
            let field = draw.int(0...(Self.fields.count + Self.pushFields.count - 1))
            let limit = (Self.fields + Self.pushFields)[field].limit
            return (field, Self.text(&draw, scalars: Self.length(&draw, limit: limit)))
        }) { input, run in
            let field = (Self.fields + Self.pushFields)[input.field]
            var campaign = input.field < Self.fields.count ? inApp : push
            field.set(&campaign, input.text)
            let tooLong = campaign.problems(for: .draft).contains { $0.path == field.path && ($0.text?.key.hasSuffix("too_long") ?? false) }
            let over = input.text.unicodeScalars.count > field.limit
            run.expect(tooLong == over, "\(field.path): \(input.text.unicodeScalars.count) scalars (\(input.text.count) characters) against \(field.limit), refused: \(tooLong)",
                       input: "\(field.path): \(input.text.unicodeScalars.count) scalars")
            run.note(over ? (input.text.count <= field.limit ? "over in scalars, within in characters" : "over") : "within")
        }
        #expect(run.failures == 0)
    }

    @Test func namesAndInstallationIDsRefuseMoreScalarsThanTheirLimit() async throws {
        let app = try await TestApp { $0.liftRegistrationLimits() }
        let registry = AppRegistry(database: app.database)
        let shop = try registry.createApp(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let key = try registry.createKey(appID: shop.id, name: "sdk", scopes: [.eventsWrite], actor: .commandLine, now: app.clock.now).secret
        let checks: [(name: String, limit: Int, accepts: @Sendable (String) -> Bool)] = [
            ("app name", 80, { name in
                // Two drawn names may be the same app's: only a refusal for the name's length counts here.
                do {
                    _ = try registry.createApp(name: name, platforms: [.ios], actor: .commandLine, now: app.clock.now)
                    return true
                } catch let errors as InputProblems {
                    return !errors.items.contains { $0.field == "name" && $0.message.hasPrefix("Use at most 80") }
                } catch {
                    return false
                }
            }),
            ("person's name", 100, { name in
                !Accounts.problems(email: "a@example.com", name: name, password: "correct horse battery").items.contains { $0.field == "name" }
            }),
            ("installation id", InstallationID.maxLength, { id in
                let response = app.respond(Request(
                    method: "PUT", target: "/api/v1/installations/" + PercentEncoding.encode(id),
                    headers: HTTPHeaders([("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")]),
                    body: Array(#"{"platform": "ios", "notificationsAllowed": true}"#.utf8)))
                return (200...201).contains(response.status)
            }),
        ]
        var run = GeneratedRun("names and installation ids in scalars", cases: 600)
        let limits = checks.map(\.limit)
        run.run(Generated.cases { draw -> (check: Int, text: String) in
            let check = draw.int(0...(limits.count - 1))
            // Names are trimmed: a letter at each end keeps the count what was drawn.
            var scalars = Self.text(&draw, scalars: Self.length(&draw, limit: limits[check])).unicodeScalars
            scalars.replaceSubrange(scalars.startIndex..<scalars.index(after: scalars.startIndex), with: ["x"])
            if scalars.count > 1 { scalars.replaceSubrange(scalars.index(before: scalars.endIndex)..<scalars.endIndex, with: ["y"]) }
            return (check, String(scalars))
        }) { input, run in
            let check = checks[input.check]
            let over = input.text.unicodeScalars.count > check.limit
            run.expect(check.accepts(input.text) != over, "\(check.name): \(input.text.unicodeScalars.count) scalars against \(check.limit)",
                       input: "\(check.name): \(input.text.unicodeScalars.count) scalars")
            run.note(over ? "refused" : "accepted")
        }
        #expect(run.failures == 0)
    }

    @Test("A campaign name of 200 letters with 30 marks each (200 characters, 6,200 scalars) is a 422 on the API; one letter with 300,000 marks a 400 at once; neither stored")
    func pileUpThroughTheAPI() async throws {
        let app = try await TestApp()
        let registry = AppRegistry(database: app.database)
        let shop = try registry.createApp(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let key = try registry.createKey(appID: shop.id, name: "ci", scopes: [.campaignsWrite, .campaignsRead], actor: .commandLine, now: app.clock.now).secret
        func create(named name: String) throws -> Response {
            let body = try JSONSerialization.data(withJSONObject: [
                "app": shop.id, "name": name, "message": ["layout": "banner", "title": ["text": "Hello"]],
            ] as [String: Any])
            return app.respond(Request(
                method: "POST", target: "/api/v1/campaigns",
                headers: HTTPHeaders([("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")]), body: Array(body)))
        }
        let marked = String(repeating: "a" + String(repeating: "\u{301}", count: 30), count: 200)
        #expect(marked.count == 200 && marked.unicodeScalars.count == 6_200)
        let tooLong = try create(named: marked)
        #expect(tooLong.status == 422 && tooLong.text.contains("\"path\":\"name\""), "\(tooLong.status) \(tooLong.text.prefix(300))")
        let piled = try create(named: "a" + String(repeating: "\u{301}", count: 300_000))
        #expect(piled.status == 400 && piled.text.contains("combining marks"), "\(piled.status) \(piled.text.prefix(300))")
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)
    }
}
