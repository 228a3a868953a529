import Foundation
import HeraldDomain
import HeraldHTTP
import GRDB
import HeraldStorage
import Synchronization
import TestSupport
import Testing

@testable import HeraldConsole

@Suite("The feed delivery components poll")
struct FeedTests {
    struct Fixture {
        let app: TestApp
        let shop: Int64
        let feedKey: String

        func campaign(
            _ name: String, priority: Int = 5, start: Date? = nil, end: Date? = nil, test: Bool = false,
            state: CampaignState = .published, layout: Message.Layout = .banner
        ) throws -> Int64 {
            var campaign = Campaign(
                app: shop, name: name, priority: priority, schedule: Schedule(start: start, end: end),
                triggers: [Trigger(event: "app_launch")], testOnDevice: test,
                message: Message(layout: layout, title: .init(text: name)), data: CustomData([.init(key: "promo", value: name)]))
            campaign.frequency = Frequency(type: .once)
            return try app.database.campaigns.create(campaign, state: state, actor: .commandLine, now: app.clock.now)
        }

        func feed(key: String? = nil, headers: [(String, String)] = []) -> Response {
            var all = headers
            all.append(("Authorization", "Bearer \(key ?? feedKey)"))
            return app.respond(Request(method: "GET", target: "/api/v1/feed", headers: HTTPHeaders(all)))
        }

        /// The campaigns by their titles: the feed carries no names, and `campaign(_:)` titles each message with its name.
        func titles(_ response: Response) throws -> [String] {
            try CampaignJSON.decoder().decode(Feed.self, from: Data(response.body)).campaigns.map(\.title)
        }
    }

    static func fixture() async throws -> Fixture {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let key = try app.database.apiKeys.create(appID: shop.id, name: "ios", scopes: [.feedRead], actor: .commandLine, now: app.clock.now)
        return Fixture(app: app, shop: shop.id, feedKey: key.secret)
    }

    @Test("No key, an unknown key and a key without feed:read get 401, 401 and 403")
    func authentication() async throws {
        let fixture = try await Self.fixture()
        let none = fixture.app.respond(Request(method: "GET", target: "/api/v1/feed"))
        #expect(none.status == 401)
        #expect(none.text.contains(#""code":"unauthorized""#))
        #expect(fixture.feed(key: "hrld_unknown").status == 401)
        let eventsOnly = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "events", scopes: [.eventsWrite], actor: .commandLine, now: fixture.app.clock.now)
        let forbidden = fixture.feed(key: eventsOnly.secret)
        #expect(forbidden.status == 403)
        #expect(forbidden.text.contains("feed:read"))
    }

    @Test("A key whose app is deleted after the key was checked gets 401, and the feed service says why without HTTP")
    func appDeletedAfterTheKeyWasChecked() async throws {
        let fixture = try await Self.fixture()
        let key = try #require(try fixture.app.database.apiKeys.authenticate(secret: fixture.feedKey))
        let gone = APIKey(id: key.id, appID: 9_999, name: key.name, prefix: key.prefix, scopes: key.scopes, createdAt: key.createdAt)
        let feeds = FeedService(database: fixture.app.database)
        #expect(throws: AppDeleted.self) { try feeds.snapshot(appID: gone.appID, installationID: nil, now: fixture.app.clock.now) }
        let context = RequestContext(request: Request(method: "GET", target: "/api/v1/feed"), now: fixture.app.clock.now)
        let refusal = #expect(throws: HTTPError.self) { try FeedHandler(feeds: feeds).feed(context, key: gone) }
        #expect(refusal?.status == 401)
    }

    @Test("Published campaigns only, highest priority first, ties to the most recently started")
    func contentAndOrder() async throws {
        let fixture = try await Self.fixture()
        _ = try fixture.campaign("Draft", priority: 1, state: .draft)
        _ = try fixture.campaign("Low", priority: 9)
        fixture.app.clock.advance(10)
        _ = try fixture.campaign("Top", priority: 1)
        _ = try fixture.campaign("Older tie", priority: 4)
        fixture.app.clock.advance(10)
        _ = try fixture.campaign("Newer tie", priority: 4)
        _ = try fixture.campaign("Future", priority: 1, start: fixture.app.clock.now.addingTimeInterval(3600))
        let paused = try fixture.campaign("Paused", priority: 2)
        try fixture.app.database.campaigns.setState(id: paused, to: .paused, actor: .commandLine, now: fixture.app.clock.now)

        let response = fixture.feed()
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(try fixture.titles(response) == ["Top", "Newer tie", "Older tie", "Low"])
        let feed = try CampaignJSON.decoder().decode(Feed.self, from: Data(response.body))
        #expect(feed.schemaVersion == 1)
        #expect(feed.app == Feed.App(id: fixture.shop, name: "Shop", minIntervalSeconds: 30))
        #expect(feed.pollAfterSeconds == 60)
        let top = try #require(feed.campaigns.first)
        #expect(top.message.title?.text == "Top")
        #expect(top.triggers == [Trigger(event: "app_launch")])
        #expect(top.data.pairs == [CustomData.Pair(key: "promo", value: "Top")])
        #expect(top.startedAt != nil)
        #expect(top.test == nil)
        #expect(!response.text.contains("\"test\""))
    }

    @Test("ETag on every answer; If-None-Match gets 304 with no body; a change gets a new ETag")
    func etags() async throws {
        let fixture = try await Self.fixture()
        let id = try fixture.campaign("Sale")
        let first = fixture.feed()
        let etag = try #require(first.headers["ETag"])
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        #expect(first.headers["Cache-Control"] == "public, max-age=0, s-maxage=10")
        #expect(first.headers["Vary"] == "Authorization, X-Installation-Id, Accept-Encoding, Origin")
        #expect(first.headers["Content-Encoding"] == nil)

        let again = fixture.feed(headers: [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.headers["ETag"] == etag)

        // Rebuilding with the same content keeps the ETag
        fixture.app.clock.advance(120)
        #expect(fixture.feed().headers["ETag"] == etag)

        // Pausing changes the ETag and removes the campaign
        try fixture.app.database.campaigns.setState(id: id, to: .paused, actor: .commandLine, now: fixture.app.clock.now)
        let changed = fixture.feed(headers: [("If-None-Match", etag)])
        #expect(changed.status == 200)
        #expect(changed.headers["ETag"] != etag)
        #expect(try fixture.titles(changed).isEmpty)
    }

    @Test("A request that accepts gzip gets the same feed gzipped once per change, with an ETag of its own; others get it plain")
    func gzip() async throws {
        let fixture = try await Self.fixture()
        for index in 0..<20 { _ = try fixture.campaign("Sale \(index)") }
        let plain = fixture.feed()
        let gzipped = fixture.feed(headers: [("Accept-Encoding", "br;q=1.0, gzip;q=0.8, *;q=0.1")])
        #expect(gzipped.status == 200)
        #expect(gzipped.headers["Content-Encoding"] == "gzip")
        #expect(gzipped.headers["Content-Type"] == "application/json")
        #expect(gunzip(gzipped.body) == plain.body)
        #expect(gzipped.body.count * 4 < plain.body.count)
        let plainTag = try #require(plain.headers["ETag"]), gzipTag = try #require(gzipped.headers["ETag"])
        #expect(gzipTag != plainTag && gzipTag.hasPrefix("\"") && gzipTag.hasSuffix("\""))
        // The bytes were compressed when the feed was built, not per request.
        #expect(fixture.feed(headers: [("Accept-Encoding", "gzip")]).sharedBody === gzipped.sharedBody)

        for refused in ["gzip;q=0", "identity", "deflate", "*;q=0"] {
            let answer = fixture.feed(headers: [("Accept-Encoding", refused)])
            #expect(answer.headers["Content-Encoding"] == nil && answer.body == plain.body, "\(refused)")
        }
        // Each tag revalidates its own bytes: a 304 is never an answer for bytes in another coding.
        let notModified = fixture.feed(headers: [("Accept-Encoding", "gzip"), ("If-None-Match", gzipTag)])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(fixture.feed(headers: [("If-None-Match", plainTag)]).status == 304)
        #expect(fixture.feed(headers: [("If-None-Match", gzipTag)]).status == 200)
        #expect(fixture.feed(headers: [("Accept-Encoding", "gzip"), ("If-None-Match", plainTag)]).status == 200)
    }

    @Test("The app's feed may be kept by a shared cache for a few seconds; a test device's never")
    func sharedCaches() async throws {
        let fixture = try await Self.fixture()
        _ = try fixture.app.database.apps.addTestDevice(
            appID: fixture.shop, installationID: "iid-tester", name: "QA", actor: .commandLine, now: fixture.app.clock.now)
        _ = try fixture.campaign("Live")
        #expect(fixture.feed().headers["Cache-Control"] == "public, max-age=0, s-maxage=\(FeedService.sharedCacheSeconds)")
        #expect(fixture.feed(headers: [("X-Installation-Id", "iid-stranger")]).headers["Cache-Control"]?.hasPrefix("public") == true)
        for encoding in ["gzip", "identity"] {
            let tester = fixture.feed(headers: [("X-Installation-Id", "iid-tester"), ("Accept-Encoding", encoding)])
            #expect(tester.headers["Cache-Control"] == "private, no-cache")
            let tag = try #require(tester.headers["ETag"])
            let again = fixture.feed(headers: [("X-Installation-Id", "iid-tester"), ("Accept-Encoding", encoding), ("If-None-Match", tag)])
            #expect(again.status == 304 && again.headers["Cache-Control"] == "private, no-cache")
        }
        // Errors are not kept either: a cache in front must not remember a refusal.
        #expect(fixture.feed(key: "hrld_unknown").headers["Cache-Control"]?.contains("public") != true)
    }

    @Test("Requests that arrive while a change is being built into the feed get the previous bytes: one rebuild, not one per request")
    func oneRebuildAtATime() async throws {
        let fixture = try await Self.fixture()
        for index in 0..<600 { _ = try fixture.campaign("Sale \(index)") }
        let feeds = fixture.app.application.services.feeds
        let before = try #require(fixture.feed().headers["ETag"])
        let rebuildsBefore = feeds.rebuilds.load(ordering: .relaxed)

        // Given a change, when 8 requests arrive at once
        _ = try fixture.campaign("New")
        // (threads of their own: a dispatch queue would run only a few of them at once)
        let start = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let etags = Mutex<[String]>([])
        for _ in 0..<8 {
            Thread {
                start.wait()
                let etag = fixture.feed().headers["ETag"] ?? ""
                etags.withLock { $0.append(etag) }
                done.signal()
            }.start()
        }
        for _ in 0..<8 { start.signal() }
        for _ in 0..<8 { done.wait() }

        // Then the feed was rebuilt once; each got the new feed or the previous one, never an error
        #expect(feeds.rebuilds.load(ordering: .relaxed) == rebuildsBefore + 1)
        let after = try #require(fixture.feed().headers["ETag"])
        #expect(after != before)
        #expect(etags.withLock { $0 }.allSatisfy { $0 == before || $0 == after })
    }

    @Test("A change another process made reaches the feed within recheckAfter through a background check and rebuild, the old bytes served meanwhile; without a change nothing is rebuilt")
    func refreshInTheBackground() async throws {
        let fixture = try await Self.fixture()
        _ = try fixture.campaign("Sale")
        let feeds = fixture.app.application.services.feeds
        let before = try #require(fixture.feed().headers["ETag"])

        // Given no change, checks past recheckAfter rebuild nothing
        let unchanged = feeds.rebuilds.load(ordering: .relaxed)
        for _ in 0..<5 {
            fixture.app.clock.advance(FeedService.recheckAfter)
            #expect(fixture.feed().headers["ETag"] == before)
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(feeds.rebuilds.load(ordering: .relaxed) == unchanged, "an unchanged database costs a row read, not a rebuild")

        // When another process (its own connection: this one's change counter does not move) pauses the campaign
        let other = try DatabaseQueue(path: fixture.app.folder.url.appendingPathComponent("herald.sqlite").path)
        try await other.write { db in try db.execute(sql: "UPDATE campaigns SET state = 'paused'") }
        #expect(fixture.feed().headers["ETag"] == before, "until the next check the feed is as built")

        // Then after recheckAfter the request that notices is answered at once with what was built, and a rebuild starts
        fixture.app.clock.advance(FeedService.recheckAfter)
        #expect(fixture.feed().headers["ETag"] == before)
        var refreshed: String?
        for _ in 0..<500 where refreshed == nil {
            if let etag = fixture.feed().headers["ETag"], etag != before { refreshed = etag }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(refreshed != nil, "the background check brought the other process's change")
        #expect(feeds.rebuilds.load(ordering: .relaxed) == unchanged + 1)
        #expect(try fixture.titles(fixture.feed()).isEmpty)
    }

    @Test("A 304 is answered from memory, without the database")
    func notModifiedWithoutDatabase() async throws {
        let fixture = try await Self.fixture()
        _ = try fixture.campaign("Sale")
        let etag = try #require(fixture.feed().headers["ETag"])
        try fixture.app.database.close()
        let response = fixture.feed(headers: [("If-None-Match", etag)])
        #expect(response.status == 304)
    }

    @Test("Campaigns enter at their start and leave at their end, with no edit or restart")
    func scheduleBoundaries() async throws {
        let fixture = try await Self.fixture()
        let now = fixture.app.clock.now
        _ = try fixture.campaign("Window", start: now.addingTimeInterval(60), end: now.addingTimeInterval(120))
        #expect(try fixture.titles(fixture.feed()).isEmpty)
        fixture.app.clock.advance(59)
        #expect(try fixture.titles(fixture.feed()).isEmpty)
        fixture.app.clock.advance(1)
        #expect(try fixture.titles(fixture.feed()) == ["Window"])
        fixture.app.clock.advance(59)
        #expect(try fixture.titles(fixture.feed()) == ["Window"])
        fixture.app.clock.advance(1)
        #expect(try fixture.titles(fixture.feed()).isEmpty)
    }

    @Test("Test campaigns reach only the app's test devices, marked test, whatever their schedule")
    func testDevices() async throws {
        let fixture = try await Self.fixture()
        _ = try fixture.app.database.apps.addTestDevice(
            appID: fixture.shop, installationID: "iid-tester", name: "QA", actor: .commandLine, now: fixture.app.clock.now)
        _ = try fixture.campaign("Live", priority: 5)
        _ = try fixture.campaign("Trial", priority: 1, start: fixture.app.clock.now.addingTimeInterval(86_400), test: true, state: .draft)

        #expect(try fixture.titles(fixture.feed()) == ["Live"])
        #expect(try fixture.titles(fixture.feed(headers: [("X-Installation-Id", "iid-stranger")])) == ["Live"])
        let tester = fixture.feed(headers: [("X-Installation-Id", "iid-tester")])
        let feed = try CampaignJSON.decoder().decode(Feed.self, from: Data(tester.body))
        #expect(feed.campaigns.map(\.title) == ["Trial", "Live"])
        #expect(feed.campaigns.first?.test == true)
        #expect(feed.campaigns.last?.test == nil)
        #expect(feed.pollAfterSeconds == 10)
        #expect(tester.headers["ETag"] != fixture.feed().headers["ETag"])

        // Another app's key never sees them
        let other = try fixture.app.database.apps.create(name: "Other", platforms: [.web], actor: .commandLine, now: fixture.app.clock.now)
        let otherKey = try fixture.app.database.apiKeys.create(appID: other.id, name: "web", scopes: [.feedRead], actor: .commandLine, now: fixture.app.clock.now)
        #expect(try fixture.titles(fixture.feed(key: otherKey.secret, headers: [("X-Installation-Id", "iid-tester")])).isEmpty)
    }

    @Test("The feed carries each campaign's language versions as stored, byte for byte, to everyone and to test devices")
    func languageVersions() async throws {
        // Given a published card with versions in five languages and a test campaign with one
        let fixture = try await Self.fixture()
        _ = try fixture.app.database.apps.addTestDevice(
            appID: fixture.shop, installationID: "iid-tester", name: "QA", actor: .commandLine, now: fixture.app.clock.now)
        let card = DeliveryLanguageTests.versionedCard(app: fixture.shop)
        _ = try fixture.app.database.campaigns.create(card, state: .published, actor: .commandLine, now: fixture.app.clock.now)
        var trial = Campaign(app: fixture.shop, name: "Trial", triggers: [Trigger(event: "app_launch")], testOnDevice: true,
                             message: Message(layout: .modal, title: .init(text: "Hi"), translations: ["ar": .init(title: .init(text: "مرحبا"))]))
        trial.frequency = Frequency(type: .once)
        _ = try fixture.app.database.campaigns.create(trial, state: .draft, actor: .commandLine, now: fixture.app.clock.now)

        // When devices read the feed
        let everyone = fixture.feed()
        let tester = fixture.feed(headers: [("X-Installation-Id", "iid-tester")])

        // Then `message.translations` is there unchanged: the same values, and the same bytes Campaign JSON writes for them
        let feed = try CampaignJSON.decoder().decode(Feed.self, from: Data(everyone.body))
        #expect(feed.campaigns.map(\.message.translations) == [card.message.translations])
        let written = String(decoding: try CampaignJSON.encoder().encode(card.message.translations), as: UTF8.self)
        #expect(everyone.text.contains(#""translations":\#(written)"#))
        #expect(everyone.text.contains("Fru\u{308}hlingsangebot") && everyone.text.contains("春のセール 🌸"))
        let forTester = try CampaignJSON.decoder().decode(Feed.self, from: Data(tester.body))
        #expect(forTester.campaigns.map(\.title).sorted() == ["Hi", "Spring sale"])
        #expect(forTester.campaigns.allSatisfy { $0.message.translations == ($0.test == true ? trial : card).message.translations })
    }

    @Test("A feed campaign carries what a device acts on and nothing else: no name, description or status")
    func onlyWhatDevicesNeed() async throws {
        // Given a published campaign with a marketer's name and description, and a test campaign
        let fixture = try await Self.fixture()
        _ = try fixture.app.database.apps.addTestDevice(
            appID: fixture.shop, installationID: "iid-tester", name: "QA", actor: .commandLine, now: fixture.app.clock.now)
        var campaign = Campaign(
            app: fixture.shop, name: "Q4 win-back, low spenders", description: "Internal: only for churned users",
            triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "We miss you")))
        campaign.frequency = Frequency(type: .once)
        let id = try fixture.app.database.campaigns.create(campaign, state: .published, actor: .commandLine, now: fixture.app.clock.now)
        _ = try fixture.campaign("Trial", test: true, state: .draft)

        // When a test device reads the feed
        let response = fixture.feed(headers: [("X-Installation-Id", "iid-tester")])

        // Then each campaign has exactly the keys of the semantics, and the marketers' words are nowhere
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let campaigns = try #require(object["campaigns"] as? [[String: Any]])
        let allowed: Set<String> = ["id", "priority", "schedule", "triggers", "frequency", "targeting", "message", "data", "startedAt", "test"]
        #expect(campaigns.count == 2)
        #expect(campaigns.allSatisfy { Set($0.keys).isSubset(of: allowed) }, "\(campaigns.map(\.keys))")
        #expect(campaigns.allSatisfy { $0["name"] == nil && $0["description"] == nil && $0["status"] == nil })
        #expect(!response.text.contains("Q4 win-back") && !response.text.contains("Internal: only"))
        #expect(campaigns.contains { ($0["id"] as? NSNumber)?.int64Value == id && $0["startedAt"] != nil && $0["test"] == nil })
    }

    @Test("A client reads a feed from a newer Herald: keys it does not know are ignored, at every level")
    func newerFeedFields() throws {
        let newer = #"""
            {"schemaVersion": 1, "app": {"id": 1, "name": "Shop", "minIntervalSeconds": 30, "quietHours": "22-7"},
             "generatedAt": "2026-01-01T09:00:00Z", "pollAfterSeconds": 60, "campaigns": [
               {"id": 7, "priority": 2, "triggers": [{"event": "app_launch", "window": 5}], "frequency": {"type": "always", "cap": 3},
                "message": {"layout": "modal", "title": {"text": "Hi", "font": "serif"}, "haptics": true}, "audience": "vip"}]}
            """#
        let feed = try CampaignJSON.decoder().decode(Feed.self, from: Data(newer.utf8))
        #expect(feed.campaigns == [FeedCampaign(
            id: 7, priority: 2, triggers: [Trigger(event: "app_launch")], frequency: Frequency(type: .always),
            message: Message(layout: .modal, title: .init(text: "Hi")))])
    }

    @Test("A revoked key stops reading the feed at once")
    func revokedKey() async throws {
        let fixture = try await Self.fixture()
        #expect(fixture.feed().status == 200)
        let key = try #require(try fixture.app.database.apiKeys.all(appID: fixture.shop).first)
        _ = try fixture.app.database.apiKeys.revoke(key, actor: .commandLine, now: fixture.app.clock.now)
        #expect(fixture.feed().status == 401)
    }
}

extension FeedCampaign {
    /// The default version's title: what these tests name campaigns by, since the feed carries no names.
    var title: String { message.title?.text ?? "" }
}
