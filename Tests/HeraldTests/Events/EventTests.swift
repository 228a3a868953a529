import Foundation
import HeraldDomain
import HeraldHTTP
@testable import HeraldSQLite
import HeraldStorage
import Synchronization
import Testing

@Suite("Event ingestion and stats")
struct EventTests {
    struct Fixture {
        let app: TestApp
        let shop: Int64
        let campaign: Int64
        let eventsKey: String
        let readKey: String

        func post(_ events: [[String: Any]], key: String? = nil) -> Response {
            let body = try! JSONSerialization.data(withJSONObject: ["events": events])
            return app.respond(Request(
                method: "POST", target: "/api/v1/events",
                headers: HTTPHeaders([("Authorization", "Bearer \(key ?? eventsKey)"), ("Content-Type", "application/json")]),
                body: Array(body)))
        }

        func answer(_ response: Response) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        }

        func stats(_ query: String) throws -> [String: Any] {
            let response = app.respond(Request(
                method: "GET", target: "/api/v1/campaigns/\(campaign)/stats?\(query)",
                headers: HTTPHeaders([("Authorization", "Bearer \(readKey)")])))
            #expect(response.status == 200, "\(response.text)")
            return try answer(response)
        }
    }

    static func fixture() async throws -> Fixture {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: app.clock.now)
        let campaign = try app.database.campaigns.create(
            Campaign(app: shop.id, name: "Sale", triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "Hi"))),
            state: .published, actor: .commandLine, now: app.clock.now)
        let events = try app.database.apiKeys.create(appID: shop.id, name: "sdk", scopes: [.eventsWrite], actor: .commandLine, now: app.clock.now)
        let read = try app.database.apiKeys.create(appID: shop.id, name: "reader", scopes: [.campaignsRead], actor: .commandLine, now: app.clock.now)
        return Fixture(app: app, shop: shop.id, campaign: campaign, eventsKey: events.secret, readKey: read.secret)
    }

    static func event(
        _ type: String, campaign: Int64, at date: Date, platform: String = "ios", installation: String? = "iid-1", extra: [String: Any] = [:]
    ) -> [String: Any] {
        var event: [String: Any] = [
            "id": UUID().uuidString, "type": type, "campaignId": campaign,
            "occurredAt": ISO8601DateFormatter().string(from: date), "platform": platform,
        ]
        if let installation { event["installationId"] = installation }
        return event.merging(extra) { $1 }
    }

    @Test("Good items are kept, bad items are rejected by index, and a resent batch counts once")
    func partialRejectionAndIdempotency() async throws {
        let fixture = try await Self.fixture()
        let now = fixture.app.clock.now
        var batch = (0..<5).map { _ in Self.event("impression", campaign: fixture.campaign, at: now) }
        batch.insert(Self.event("explode", campaign: fixture.campaign, at: now), at: 1)
        batch.insert(Self.event("impression", campaign: 999_999, at: now), at: 3)
        var missingID = Self.event("impression", campaign: fixture.campaign, at: now)
        missingID["id"] = nil
        batch.append(missingID)
        batch.append(Self.event("impression", campaign: fixture.campaign, at: now.addingTimeInterval(86_400 * 3)))
        batch.append(Self.event("click", campaign: fixture.campaign, at: now))  // no action

        let first = fixture.post(batch)
        #expect(first.status == 200)
        let answer = try fixture.answer(first)
        #expect(answer["accepted"] as? Int == 5)
        #expect(answer["duplicates"] as? Int == 0)
        let rejected = try #require(answer["rejected"] as? [[String: Any]])
        #expect(rejected.compactMap { $0["index"] as? Int } == [1, 3, 7, 8, 9])
        #expect((rejected.first?["error"] as? String)?.contains("`type`") == true)

        let again = try fixture.answer(fixture.post(batch))
        #expect(again["accepted"] as? Int == 0)
        #expect(again["duplicates"] as? Int == 5)
        #expect(try fixture.stats("")["totals"].flatMap { $0 as? [String: Any] }?["impressions"] as? Int == 5)
    }

    @Test("An event about the other channel's campaigns is refused by itself, with the reason: push events of in-app campaigns, display events of push campaigns")
    func eventsBelongToTheirCampaignsChannel() async throws {
        // Given an in-app campaign and a push campaign of the app
        let fixture = try await Self.fixture()
        let now = fixture.app.clock.now
        let push = try fixture.app.database.campaigns.create(
            Campaign(app: fixture.shop, name: "Sale push", push: PushNotification(title: "Sale")), state: .published, actor: .commandLine, now: now)
        // When a batch mixes each event type against both
        let batch = EventType.allCases.flatMap { type in
            [fixture.campaign, push].map { campaign in
                Self.event(type.rawValue, campaign: campaign, at: now, extra: ["action": "primary", "dismissType": "auto", "errorCode": "unspecified", "event": "purchase"])
            }
        }
        let answer = try fixture.answer(fixture.post(batch))
        // Then each event of the campaign's own channel is kept, and each of the other is rejected saying why
        let kept = batch.indices.filter { index in
            let type = EventType(rawValue: batch[index]["type"] as? String ?? "")
            return type?.channel == ((batch[index]["campaignId"] as? Int64) == push ? .push : .inApp)
        }
        #expect(kept.count == 7)
        #expect(answer["accepted"] as? Int == kept.count)
        let rejected = try #require(answer["rejected"] as? [[String: Any]])
        #expect(rejected.compactMap { $0["index"] as? Int } == batch.indices.filter { !kept.contains($0) })
        let reasons = rejected.compactMap { $0["error"] as? String }
        #expect(reasons.contains("`campaignId` \(push) is a push campaign: its events are push_received or push_open, not impression."))
        #expect(reasons.contains("`campaignId` \(fixture.campaign) is an in-app campaign: its events are impression, click, dismiss, error or conversion, not push_open."))
        // And nothing of the other channel reached either campaign's rollups
        let inApp = try fixture.app.database.events.counts(campaignID: fixture.campaign, from: "2000-01-01", to: "2100-01-01").rows
        let pushRows = try fixture.app.database.events.counts(campaignID: push, from: "2000-01-01", to: "2100-01-01").rows
        #expect(inApp.allSatisfy { $0.type.channel == .inApp } && inApp.count == 5)
        #expect(pushRows.allSatisfy { $0.type.channel == .push } && pushRows.count == 2)
    }

    @Test("Discard counts come with the events: each kept once per id and refused one by one with the reason; the stats show them by reason and in the funnel")
    func discardCounts() async throws {
        // Given an in-app campaign, a push campaign, a campaign of another app, and a test device
        let fixture = try await Self.fixture()
        let now = fixture.app.clock.now
        let today = UTCTime.day(now)
        let push = try fixture.app.database.campaigns.create(
            Campaign(app: fixture.shop, name: "Sale push", push: PushNotification(title: "Sale")), state: .published, actor: .commandLine, now: now)
        let other = try fixture.app.database.apps.create(name: "Other", platforms: [.ios], actor: .commandLine, now: now)
        let elsewhere = try fixture.app.database.campaigns.create(
            Campaign(app: other.id, name: "Elsewhere", message: Message(layout: .modal, title: .init(text: "Hi"))), state: .published,
            actor: .commandLine, now: now)
        _ = try fixture.app.database.apps.addTestDevice(appID: fixture.shop, installationID: "iid-qa", name: "QA", actor: .commandLine, now: now)
        func count(_ reason: String, _ number: Any, campaign: Int64? = nil, day: String? = nil, id: String? = nil, installation: String? = nil) -> [String: Any] {
            var count: [String: Any] = ["id": id ?? UUID().uuidString, "campaignId": campaign ?? fixture.campaign, "reason": reason, "day": day ?? today, "count": number]
            if let installation { count["installationId"] = installation }
            return count
        }
        let good = [
            count("orientation", 2), count("throttled", 3), count("stack_full", 1, installation: "iid-1"), count("timeout", 4, installation: "iid-qa"),
            count("delegate", DiscardCount.maxCount),
        ]
        let bad = [
            count("bored", 1), count("orientation", 0), count("orientation", DiscardCount.maxCount + 1), count("orientation", 1.5),
            count("orientation", "2"), count("orientation", 1, campaign: push), count("orientation", 1, campaign: elsewhere),
            count("orientation", 1, day: "2019-12-31"), count("orientation", 1, day: UTCTime.day(now.addingTimeInterval(2 * 86_400))),
            count("orientation", 1, day: "21/11/2026"), count("orientation", 1, id: "not-a-uuid"), count("orientation", 1, installation: ""),
        ]
        func post(_ discards: Any) -> Response {
            let body = try! JSONSerialization.data(withJSONObject: ["events": [Self.event("impression", campaign: fixture.campaign, at: now)], "discards": discards])
            return fixture.app.respond(Request(
                method: "POST", target: "/api/v1/events",
                headers: HTTPHeaders([("Authorization", "Bearer \(fixture.eventsKey)"), ("Content-Type", "application/json")]), body: Array(body)))
        }
        // When a batch carries them with an event
        let first = post(good + bad)
        #expect(first.status == 200, "\(first.text)")
        let answer = try fixture.answer(first)
        #expect(answer["accepted"] as? Int == 1)
        // Then the good ones are kept and each bad one is refused by its index, saying which field is wrong
        let discards = try #require(answer["discards"] as? [String: Any])
        #expect(discards["accepted"] as? Int == good.count && discards["duplicates"] as? Int == 0)
        let rejected = try #require(discards["rejected"] as? [[String: Any]])
        #expect(rejected.compactMap { $0["index"] as? Int } == Array(good.count..<(good.count + bad.count)))
        let reasons = rejected.compactMap { $0["error"] as? String }
        for (index, field) in ["`reason`", "`count`", "`count`", "`count`", "`count`", "push campaign", "`campaignId`", "`day`", "`day`", "`day`", "`id`",
                               "`installationId`"].enumerated() {
            let reason = index < reasons.count ? reasons[index] : "none"
            #expect(reason.contains(field), "\(index): \(reason)")
        }
        // And a retried upload counts once
        let again = try #require(try fixture.answer(post(good))["discards"] as? [String: Any])
        #expect(again["accepted"] as? Int == 0 && again["duplicates"] as? Int == good.count)

        // And the stats show the real devices' discards by reason, and chosen = shown (an impression per post) + discarded
        let stats = try fixture.stats("")
        #expect(stats["discardsByReason"] as? [String: Int] == ["orientation": 2, "throttled": 3, "stack_full": 1, "delegate": DiscardCount.maxCount])
        let funnel = try #require(stats["funnel"] as? [String: Any])
        // Both impressions from one device: one device shown, none converted, a rate of 0
        #expect(["chosen", "shown", "clicked", "converted", "shownDevices", "convertedDevices"].map { funnel[$0] as? Int }
            == [2 + 6 + DiscardCount.maxCount, 2, 0, 0, 1, 0])
        #expect(funnel["conversionRate"] as? Double == 0 && funnel["devicesEstimated"] as? Bool == false)

        // And a batch without discards (or with null) is answered with none; too many, or not an array, refuse the batch
        #expect((try fixture.answer(post(NSNull()))["discards"] as? [String: Any])?["accepted"] as? Int == 0)
        let tooMany = post((0...DiscardCount.maxPerBatch).map { _ in count("orientation", 1) })
        #expect(tooMany.status == 422 && tooMany.text.contains("discards"))
        #expect(post("orientation").status == 400)
    }

    @Test("Limits and keys: 1001 events are refused, a feed-only key gets 403, bad JSON 400")
    func limits() async throws {
        let fixture = try await Self.fixture()
        let many = (0..<1001).map { _ in Self.event("impression", campaign: fixture.campaign, at: fixture.app.clock.now) }
        let tooMany = fixture.post(many)
        #expect(tooMany.status == 422)
        #expect(tooMany.text.contains("at most 1000 events"))
        let feedOnly = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "feed", scopes: [.feedRead], actor: .commandLine, now: fixture.app.clock.now)
        #expect(fixture.post([], key: feedOnly.secret).status == 403)
        let broken = fixture.app.respond(Request(
            method: "POST", target: "/api/v1/events",
            headers: HTTPHeaders([("Authorization", "Bearer \(fixture.eventsKey)"), ("Content-Type", "application/json")]),
            body: Array(#"{"events": [{"id": 1}"#.utf8)))
        #expect(broken.status == 400)
        let wrongTypes = try fixture.answer(fixture.post([["id": 5, "type": "impression"], ["campaignId": "seven"], "text" as Any].map { $0 as? [String: Any] ?? [:] }))
        #expect((wrongTypes["rejected"] as? [Any])?.count == 3)
    }

    @Test("The batch body is read strictly: escapes and non-ASCII text kept, each malformed body a 400 naming the problem")
    func batchBodies() async throws {
        let fixture = try await Self.fixture()
        func post(_ body: [UInt8]) -> Response {
            fixture.app.respond(Request(
                method: "POST", target: "/api/v1/events",
                headers: HTTPHeaders([("Authorization", "Bearer \(fixture.eventsKey)"), ("Content-Type", "application/json")]), body: body))
        }
        let at = ISO8601DateFormatter().string(from: fixture.app.clock.now)

        // Given an event whose installation id has escapes, a surrogate pair and Persian text, with extra nested fields
        let id = UUID().uuidString
        let escaped = #"{"note": {"a": [1, 2.5e3, true, null]}, "events": [ {"id": "\#(id)", "type": "impression", "campaignId": \#(fixture.campaign), "#
            + #""occurredAt": "\#(at)", "platform": "ios", "installationId": "a\"b\\c\u00e9\ud83d\ude00 مریم", "extra": {"x": [{}]}},"#
            + #" 7, {"id": null, "campaignId": 1.5}, {"campaignId": "1"}, {"type": ["impression"]} ] }"#
        let answer = try fixture.answer(post(Array(escaped.utf8)))

        // Then the good one is stored with its id in lower case and its text exact; the others are rejected by index with the reason
        #expect(answer["accepted"] as? Int == 1)
        let rejected = (answer["rejected"] as? [[String: Any]] ?? []).map { "\($0["index"] ?? "")=\($0["error"] ?? "")" }
        #expect(rejected == [
            "1=Each event must be a JSON object.",
            "2=`campaignId` must be a campaign id (a whole number).",
            "3=`campaignId` must be a campaign id (a whole number).",
            "4=`type` must be a string.",
        ])
        #expect(try fixture.app.database.events.count(installationID: "a\"b\\cé😀 مریم") == 1)

        // And malformed bodies are refused whole, saying what is wrong
        let malformed: [(body: [UInt8], says: String)] = [
            (Array(#"{"events": [{"id": "x"}"#.utf8), "ends too early"),
            (Array(#"{"events": {}}"#.utf8), "Wrong type at `events`: expected an array."),
            (Array(#"{"other": []}"#.utf8), "Missing `events` at the top level."),
            (Array(#"{"events": []} x"#.utf8), "unexpected text after the JSON object"),
            (Array(#"{"events": [{"id": "\ud800"}]}"#.utf8), "unpaired surrogate"),
            (Array(#"{"events": [{"id": "a"#.utf8) + [0xC3, 0x28] + Array(#""}]}"#.utf8), "not valid UTF-8 at byte 21"),
            (Array(#"{"events": [{"x": 01}]}"#.utf8), "not valid JSON"),
            (Array(#"{"events": ["#.utf8) + Array(repeating: UInt8(ascii: "["), count: 100_000), "more than 32 levels deep"),
            ([], "ends too early"),
        ]
        for (body, says) in malformed {
            let response = post(body)
            #expect(response.status == 400, "\(String(decoding: body.prefix(60), as: UTF8.self))")
            #expect(response.text.contains(says), "\(response.text)")
        }
        #expect(try fixture.app.database.events.count(installationID: "a") == 0)
    }

    @Test("Stats: exact totals, breakdowns, unique devices and a 3-day daily series; test devices apart")
    func stats() async throws {
        let fixture = try await Self.fixture()
        _ = try fixture.app.database.apps.addTestDevice(appID: fixture.shop, installationID: "iid-qa", name: "QA", actor: .commandLine, now: fixture.app.clock.now)
        let day1 = try #require(UTCTime.date(day: "2026-09-20")).addingTimeInterval(3600)
        let day2 = day1.addingTimeInterval(86_400), day3 = day2.addingTimeInterval(86_400)
        let c = fixture.campaign
        let events: [[String: Any]] = [
            Self.event("impression", campaign: c, at: day1, installation: "a"),
            Self.event("impression", campaign: c, at: day1, installation: "b"),
            Self.event("impression", campaign: c, at: day1, platform: "android", installation: nil),
            Self.event("click", campaign: c, at: day1, installation: "a", extra: ["action": "primary", "url": "https://example.com"]),
            Self.event("impression", campaign: c, at: day3, installation: "a"),
            Self.event("click", campaign: c, at: day3, installation: "a", extra: ["action": "secondary"]),
            Self.event("dismiss", campaign: c, at: day3, installation: "b", extra: ["dismissType": "swipe"]),
            Self.event("dismiss", campaign: c, at: day3, installation: "b", extra: ["dismissType": "auto"]),
            Self.event("error", campaign: c, at: day3, platform: "android", installation: "c", extra: ["errorCode": "image_fetch"]),
            Self.event("conversion", campaign: c, at: day3, installation: "a", extra: ["event": "purchase"]),
            Self.event("impression", campaign: c, at: day2, installation: "iid-qa"),
            Self.event("click", campaign: c, at: day2, installation: "iid-qa", extra: ["action": "body"]),
        ]
        fixture.app.clock.advance(86_400 * 400)
        #expect(try fixture.answer(fixture.post(events))["rejected"].flatMap { $0 as? [Any] }?.isEmpty == true)

        let stats = try fixture.stats("from=2026-09-20&to=2026-09-22")
        let totals = try #require(stats["totals"] as? [String: Any])
        #expect(totals["impressions"] as? Int == 4)
        #expect(totals["clicks"] as? Int == 2)
        #expect(totals["dismissals"] as? Int == 2)
        #expect(totals["errors"] as? Int == 1)
        #expect(totals["conversions"] as? Int == 1)
        #expect(totals["uniqueDevices"] as? Int == 3)
        #expect(totals["ctr"] as? Double == 0.5)
        #expect(stats["clicksByAction"] as? [String: Int] == ["primary": 1, "secondary": 1])
        #expect(stats["dismissalsByType"] as? [String: Int] == ["swipe": 1, "auto": 1])
        #expect(stats["errorsByCode"] as? [String: Int] == ["image_fetch": 1])
        let android = try #require((stats["byPlatform"] as? [String: Any])?["android"] as? [String: Any])
        #expect(android["impressions"] as? Int == 1)
        #expect(android["errors"] as? Int == 1)
        // Devices per platform they sent from: c on Android (the impression without an installation is no
        // device), a and b on iOS; the test device apart
        #expect(android["uniqueDevices"] as? Int == 1)
        let ios = try #require((stats["byPlatform"] as? [String: Any])?["ios"] as? [String: Any])
        #expect(ios["uniqueDevices"] as? Int == 2)
        let daily = try #require(stats["daily"] as? [[String: Any]])
        #expect(daily.map { $0["date"] as? String } == ["2026-09-20", "2026-09-21", "2026-09-22"])
        #expect(daily.map { $0["impressions"] as? Int } == [3, 0, 1])
        #expect(daily.map { $0["clicks"] as? Int } == [1, 0, 1])
        let test = try #require(stats["test"] as? [String: Any])
        #expect(test["impressions"] as? Int == 1)
        #expect(test["clicks"] as? Int == 1)
        #expect(test["uniqueDevices"] as? Int == 1)

        let oneDay = try fixture.stats("from=2026-09-22&to=2026-09-22")
        #expect((oneDay["totals"] as? [String: Any])?["uniqueDevices"] as? Int == 3)
        #expect((try fixture.stats("from=2026-09-20&to=2026-09-20")["totals"] as? [String: Any])?["uniqueDevices"] as? Int == 2)
    }

    @Test("Rollups always equal counts over raw events, after random batches with duplicates")
    func rollupsMatchRawEvents() async throws {
        let fixture = try await Self.fixture()
        var generator = SystemRandomNumberGenerator()
        let types: [(String, [String: Any])] = [
            ("impression", [:]), ("click", ["action": "primary"]), ("click", ["action": "body"]),
            ("dismiss", ["dismissType": "click"]), ("error", ["errorCode": "unspecified"]), ("conversion", ["event": "signup"]),
        ]
        var sent: [[String: Any]] = []
        for _ in 0..<8 {
            var batch: [[String: Any]] = (0..<Int.random(in: 20...120, using: &generator)).map { _ in
                let (type, extra) = types.randomElement(using: &generator)!
                return Self.event(type, campaign: fixture.campaign,
                                  at: fixture.app.clock.now.addingTimeInterval(-Double.random(in: 0...(5 * 86_400), using: &generator)),
                                  platform: ["ios", "android", "web"].randomElement(using: &generator)!,
                                  installation: "iid-\(Int.random(in: 0..<15, using: &generator))", extra: extra)
            }
            batch += sent.shuffled(using: &generator).prefix(10)  // resends
            sent += batch
            _ = fixture.post(batch)
        }
        let (raw, rolled) = try await fixture.app.database.pool.read { db in
            (try Int.fetchAll(db, sql: "SELECT COUNT(*) FROM events GROUP BY campaign_id, day, platform, test, type, detail ORDER BY campaign_id, day, platform, test, type, detail"),
             try Int.fetchAll(db, sql: "SELECT count FROM event_rollups ORDER BY campaign_id, day, platform, test, type, detail"))
        }
        #expect(!raw.isEmpty)
        #expect(raw == rolled)
        let unique = Set(sent.compactMap { $0["id"] as? String }).count
        #expect(raw.reduce(0, +) == unique)
    }

    @Test("Erasing an installation removes its raw events and keeps the counts")
    func erasure() async throws {
        let fixture = try await Self.fixture()
        let now = fixture.app.clock.now
        _ = fixture.post([Self.event("impression", campaign: fixture.campaign, at: now, installation: "gone"),
                          Self.event("impression", campaign: fixture.campaign, at: now, installation: "kept")])
        let admin = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "privacy", scopes: [.installationsDelete], actor: .commandLine, now: now)
        let forbidden = fixture.app.respond(Request(method: "DELETE", target: "/api/v1/installations/gone",
                                                    headers: HTTPHeaders([("Authorization", "Bearer \(fixture.eventsKey)")])))
        #expect(forbidden.status == 403)
        let erased = fixture.app.respond(Request(method: "DELETE", target: "/api/v1/installations/gone",
                                                 headers: HTTPHeaders([("Authorization", "Bearer \(admin.secret)")])))
        #expect(erased.status == 200)
        #expect(erased.text.contains(#""erasedEvents":1"#))
        #expect(try fixture.app.database.events.count(installationID: "gone") == 0)
        #expect(try fixture.app.database.events.count(installationID: "kept") == 1)
        #expect((try fixture.stats("")["totals"] as? [String: Any])?["impressions"] as? Int == 2)
        #expect(try fixture.app.database.auditLog.page(offset: 0, limit: 1).first?.action == "installation.erase")
    }

    @Test("Concurrent batches (written together by group commit) each get their own counts; a shared id counts once")
    func concurrentBatches() async throws {
        // Given eight batches of 200 events posted at once from threads, every batch sharing one id
        let fixture = try await Self.fixture()
        let shared = UUID().uuidString
        let start = fixture.app.clock.now.addingTimeInterval(-60)
        let answers = Mutex<[(accepted: Int, duplicates: Int)]>([])
        let posts = DispatchGroup()
        for batch in 0..<8 {
            DispatchQueue.global().async(group: posts) {
                var events = (0..<199).map { index in
                    Self.event("impression", campaign: fixture.campaign, at: start, installation: "iid-\(batch)-\(index % 10)")
                }
                events.append(Self.event("impression", campaign: fixture.campaign, at: start, installation: "iid-shared").merging(["id": shared]) { $1 })
                let answer = try? fixture.answer(fixture.post(events))
                let counts = (accepted: answer?["accepted"] as? Int ?? -1, duplicates: answer?["duplicates"] as? Int ?? -1)
                answers.withLock { $0.append(counts) }
            }
        }
        #expect(posts.wait(timeout: .now() + 60) == .success)

        // Then 199 of each are new, the shared id is new for exactly one batch, and the rollups agree
        let all = answers.withLock { $0 }
        #expect(all.count == 8)
        #expect(all.map(\.accepted).sorted() == [199, 199, 199, 199, 199, 199, 199, 200])
        #expect(all.map(\.duplicates).reduce(0, +) == 7)
        let totals = try fixture.stats("")["totals"] as? [String: Any]
        #expect(totals?["impressions"] as? Int == 8 * 199 + 1)
        #expect(totals?["uniqueDevices"] as? Int == 8 * 10 + 1)
    }

    @Test("UTC days and timestamps are written as GRDB writes dates (Foundation, rounded to the millisecond), before 1970 and in leap years too")
    func utcTimeText() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        var generator = SystemRandomNumberGenerator()
        // A quarter and three quarters of a millisecond past whole ones: Foundation rounds to the nearest
        // millisecond, and no sample sits near the halfway point.
        let edges = [-86_400.0, -0.001, 0, 951_782_400, 1_709_164_800.999, 4_102_444_799.999]
        let random = (0..<2000).map { _ in Double(Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &generator)) / 1000 }
        let samples = (edges + random).flatMap { [$0 + 0.000_25, $0 + 0.000_75] }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(UTCTime.timestamp(date) == formatter.string(from: date), "\(seconds)")
            #expect(UTCTime.day(date) == String(formatter.string(from: date).prefix(10)), "\(seconds)")
        }
    }
}
