import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

@testable import HeraldConsole

/// Test sends: a campaign as it is now reaches chosen test devices at once, in the console and through the
/// API, and nothing of the live campaign changes.
@Suite("Test sends")
struct TestSendTests {
    struct Fixture {
        let app: TestApp
        let admin: TestBrowser
        let shop: Int64
        let key: String

        /// A card shown on `app_launch`, once per device, for Persian speakers on iOS.
        func campaign(state: CampaignState, name: String = "Nowruz", title: String = "Nowruz sale") throws -> Int64 {
            var targeting = Targeting()
            targeting.languages = ["fa"]
            targeting.platforms = [.ios]
            return try app.database.campaigns.create(
                Campaign(
                    app: shop, name: name, priority: 7, triggers: [Trigger(event: "app_launch")], frequency: Frequency(type: .once),
                    targeting: targeting, message: Message(layout: .modal, title: .init(text: title))),
                state: state, actor: .commandLine, now: app.clock.now)
        }

        func feed(_ installation: String?) throws -> (feed: Feed, response: Response) {
            var headers = [("Authorization", "Bearer \(key)")]
            if let installation { headers.append(("X-Installation-Id", installation)) }
            let response = app.respond(Request(method: "GET", target: "/api/v1/feed", headers: HTTPHeaders(headers)))
            return (try CampaignJSON.decoder().decode(Feed.self, from: Data(response.body)), response)
        }

        func api(_ method: String, _ path: String, _ body: String? = nil, key: String? = nil, type: String = "application/json") -> Response {
            var headers = [("Authorization", "Bearer \(key ?? self.key)")]
            if body != nil { headers.append(("Content-Type", type)) }
            return app.respond(Request(method: method, target: path, headers: HTTPHeaders(headers), body: Array((body ?? "").utf8)))
        }

        func json(_ response: Response) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        }
    }

    static func fixture() async throws -> Fixture {
        let (app, admin) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .web], actor: .commandLine, now: app.clock.now)
        for (installation, name) in [("iid-sara", "Sara's iPhone"), ("iid-omid", "Omid's Pixel")] {
            _ = try app.database.apps.addTestDevice(appID: shop.id, installationID: installation, name: name, actor: .commandLine, now: app.clock.now)
        }
        let key = try app.database.apiKeys.create(
            appID: shop.id, name: "ci", scopes: [.feedRead, .eventsWrite, .campaignsRead, .campaignsWrite], actor: .commandLine, now: app.clock.now)
        return Fixture(app: app, admin: admin, shop: shop.id, key: key.secret)
    }

    @Test("An in-app draft sent as a test is in the chosen device's feed at once, for an hour, and nowhere else; the campaign is untouched")
    func inAppDraftReachesOnlyTheChosenDevice() async throws {
        let fixture = try await Self.fixture()
        let id = try fixture.campaign(state: .draft)
        let before = try #require(try fixture.app.database.campaigns.find(id: id))
        let everyoneBefore = try fixture.feed(nil).response

        let sent = try fixture.admin.submit("/campaigns/\(id)/test-sends", from: "/campaigns/\(id)", ["devices": "iid-sara"])
        #expect(sent.status == 303)
        #expect(sent.headers["Location"] == "/campaigns/\(id)#test-sends")

        // Only Sara's device has it, flagged test, shown whenever its trigger fires, whoever the device is, first in priority.
        let (sara, saraResponse) = try fixture.feed("iid-sara")
        let copy = try #require(sara.campaigns.first { $0.id == id })
        #expect(copy.test == true)
        #expect(copy.priority == 1)
        #expect(copy.frequency == Frequency(type: .always))
        #expect(copy.targeting == Targeting())
        #expect(copy.message.title?.text == "Nowruz sale")
        #expect(copy.startedAt == fixture.app.clock.now.storedPrecision)
        #expect(saraResponse.headers["Cache-Control"] == "private, no-cache")
        #expect(try fixture.feed("iid-omid").feed.campaigns.allSatisfy { $0.id != id }, "another test device")
        #expect(try fixture.feed("iid-stranger").feed.campaigns.isEmpty, "an installation that is no test device")
        let everyone = try fixture.feed(nil).response
        #expect(everyone.headers["ETag"] == everyoneBefore.headers["ETag"], "everyone's feed is the same bytes")

        // The live campaign: same state, revision, time and author.
        let after = try #require(try fixture.app.database.campaigns.find(id: id))
        #expect(after == before)
        #expect(try fixture.app.database.campaigns.revisions(id: id).count == 1)
        let line = try #require(try fixture.app.database.auditLog.latest(action: "campaign.test_send"))
        #expect(line.actor == "admin@example.com")
        #expect(line.details == "revision 1 to 1 test devices: Sara's iPhone")

        // The page says where it stands.
        let page = fixture.admin.get("/campaigns/\(id)").text
        #expect(page.contains("Test of “\u{2068}Nowruz\u{2069}” sent to 1 test device."))
        #expect(page.contains(#"<tr data-test-send-status="in_feed"><td dir="auto">Sara&#39;s iPhone</td>"#)
            || page.contains(#"<tr data-test-send-status="in_feed"><td dir="auto">Sara&#x27;s iPhone</td>"#))

        // An hour later it has left the feed.
        fixture.app.clock.advance(TestSend.inAppLifetime)
        #expect(try fixture.feed("iid-sara").feed.campaigns.allSatisfy { $0.id != id })
        #expect(fixture.admin.get("/campaigns/\(id)").text.contains(#"data-test-send-status="expired""#))
    }

    @Test("A running campaign's test replaces its live copy on the chosen device only; the test's events are counted apart")
    func runningCampaignTestIsKeptApart() async throws {
        let fixture = try await Self.fixture()
        let id = try fixture.campaign(state: .published)
        var edited = try #require(try fixture.app.database.campaigns.find(id: id))
        fixture.app.clock.advance(60)
        let sent = fixture.api("POST", "/api/v1/campaigns/\(id)/test-sends", #"{"installationIds": ["iid-sara", "iid-omid", "iid-sara"]}"#)
        #expect(sent.status == 201)
        let document = try fixture.json(sent)
        #expect((document["devices"] as? [[String: Any]])?.map { $0["installationId"] as? String } == ["iid-sara", "iid-omid"], "each device once")
        #expect((document["devices"] as? [[String: Any]])?.allSatisfy { $0["status"] as? String == "in_feed" } == true)
        #expect(sent.headers["Location"] == "/api/v1/campaigns/\(id)/test-sends/\(document["id"] as? Int ?? 0)")

        let sara = try fixture.feed("iid-sara").feed.campaigns.filter { $0.id == id }
        #expect(sara.count == 1 && sara.first?.test == true, "the test copy, once")
        let everyone = try fixture.feed(nil).feed.campaigns.filter { $0.id == id }
        #expect(everyone.count == 1 && everyone.first?.test == nil && everyone.first?.priority == 7, "the live campaign, as it was")
        edited.updatedAt = edited.updatedAt.storedPrecision
        #expect(try fixture.app.database.campaigns.find(id: id)?.revision == edited.revision)

        // Events from the test device count as test events, not the campaign's.
        let events = """
            {"events": [{"id": "\(UUID().uuidString)", "type": "impression", "campaignId": \(id), "occurredAt": "\(UTCTime.rfc3339(fixture.app.clock.now))",
              "platform": "ios", "installationId": "iid-sara"}]}
            """
        #expect(fixture.api("POST", "/api/v1/events", events).status == 200)
        let day = UTCTime.day(fixture.app.clock.now)
        let stats = try fixture.json(fixture.api("GET", "/api/v1/campaigns/\(id)/stats?from=\(day)&to=\(day)"))
        #expect((stats["totals"] as? [String: Any])?["impressions"] as? Int == 0)
        #expect((stats["test"] as? [String: Any])?["impressions"] as? Int == 1)
    }

    @Test("Refusals say why and send nothing: no device, a device that is no test device, a message devices would not show, an archived campaign")
    func refusals() async throws {
        let fixture = try await Self.fixture()
        let id = try fixture.campaign(state: .draft)
        let none = try fixture.admin.submit("/campaigns/\(id)/test-sends", from: "/campaigns/\(id)", [:])
        #expect(none.status == 422)
        #expect(none.text.contains(#"<p class="field-error" id="field-devices-error" role="alert">Choose at least one test device.</p>"#))
        let stranger = try fixture.admin.submit("/campaigns/\(id)/test-sends", from: "/campaigns/\(id)", pairs: [("devices", "iid-sara"), ("devices", "iid-x")])
        #expect(stranger.status == 422)
        #expect(stranger.text.contains("\u{2068}iid-x\u{2069} is no longer a test device of this app."))
        #expect(stranger.text.contains(#"value="iid-sara" checked"#), "the choice is kept")

        // A card without its image: devices would drop it.
        let broken = try fixture.app.database.campaigns.create(
            Campaign(app: fixture.shop, name: "Broken", triggers: [Trigger(event: "app_launch")], message: Message(layout: .card, title: .init(text: "No image"))),
            state: .draft, actor: .commandLine, now: fixture.app.clock.now)
        let invalid = try fixture.admin.submit("/campaigns/\(broken)/test-sends", from: "/campaigns/\(broken)", ["devices": "iid-sara"])
        #expect(invalid.status == 422)
        #expect(invalid.text.contains("This campaign cannot be sent as a test yet: devices would not show it"))
        #expect(invalid.text.contains("message.imageUrl"))
        let apiInvalid = fixture.api("POST", "/api/v1/campaigns/\(broken)/test-sends", #"{"installationIds": ["iid-sara"]}"#)
        #expect(apiInvalid.status == 422 && apiInvalid.text.contains(#""path":"message.imageUrl""#))

        try fixture.app.database.campaigns.setState(id: id, to: .archived, actor: .commandLine, now: fixture.app.clock.now)
        #expect(try fixture.admin.submit("/campaigns/\(id)/test-sends", from: "/campaigns/\(id)", ["devices": "iid-sara"]).status == 409)
        #expect(try fixture.app.database.testSends.recent(campaignID: id, limit: 10).isEmpty)
        #expect(try fixture.app.database.testSends.recent(campaignID: broken, limit: 10).isEmpty)
        #expect(try fixture.app.database.auditLog.latest(action: "campaign.test_send") == nil)
    }

    @Test("Viewers see the tests but cannot send one")
    func viewersCannotSend() async throws {
        let fixture = try await Self.fixture()
        let id = try fixture.campaign(state: .draft)
        #expect(try fixture.admin.submit("/campaigns/\(id)/test-sends", from: "/campaigns/\(id)", ["devices": "iid-sara"]).status == 303)
        try fixture.app.createUser(email: "viewer@example.com", role: .viewer)
        let viewer = fixture.app.browser(address: "10.0.0.2")
        #expect(try viewer.submit("/login", from: "/login", ["email": "viewer@example.com", "password": "correct horse battery"]).status == 303)
        let page = viewer.get("/campaigns/\(id)").text
        #expect(page.contains(#"id="test-sends""#) && page.contains(#"data-test-send-status="in_feed""#))
        #expect(!page.contains(#"action="/campaigns/\#(id)/test-sends""#))
        #expect(try viewer.submit("/campaigns/\(id)/test-sends", from: "/campaigns/\(id)", ["devices": "iid-sara"]).status == 403)
    }

    @Test("The API refuses what is not a list of test devices, naming the field, and reads back a test of its own app only")
    func apiRefusalsAndReading() async throws {
        let fixture = try await Self.fixture()
        let id = try fixture.campaign(state: .draft)
        let duplicates: String = "{\"installationIds\": [" + Array(repeating: "\"iid-sara\"", count: 51).joined(separator: ",") + "]}"
        let strangers: String = "{\"installationIds\": [" + (0..<51).map { "\"iid-\($0)\"" }.joined(separator: ",") + "]}"
        let cases: [(String, Int, String)] = [
            (#"{"installationIds": []}"#, 422, #""path":"installationIds""#),
            (#"{"installationIds": ["iid-sara", "nope"]}"#, 422, #""path":"installationIds.1""#),
            (#"{"installationIds": "iid-sara"}"#, 400, "installationIds"),
            (#"{"installationIds": ["iid-sara"], "extra": 1}"#, 422, "extra"),
            (#"{}"#, 400, "installationIds"),
            ("[", 400, "not valid JSON"),
            (duplicates, 201, "iid-sara"),
            (strangers, 422, "at most 50"),
        ]
        for (body, status, says) in cases {
            let response = fixture.api("POST", "/api/v1/campaigns/\(id)/test-sends", body)
            #expect(response.status == status, "\(body.prefix(60)): \(response.text)")
            #expect(response.text.contains(says), "\(body.prefix(60)): \(response.text)")
        }
        #expect(fixture.api("POST", "/api/v1/campaigns/\(id)/test-sends", "installationIds=iid-sara", type: "application/x-www-form-urlencoded").status == 415)
        let readOnly = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "ro", scopes: [.campaignsRead], actor: .commandLine, now: fixture.app.clock.now)
        #expect(fixture.api("POST", "/api/v1/campaigns/\(id)/test-sends", #"{"installationIds": ["iid-sara"]}"#, key: readOnly.secret).status == 403)

        let sent = try fixture.json(fixture.api("POST", "/api/v1/campaigns/\(id)/test-sends", #"{"installationIds": ["iid-omid"]}"#))
        let testID = try #require(sent["id"] as? Int)
        let read = fixture.api("GET", "/api/v1/campaigns/\(id)/test-sends/\(testID)", key: readOnly.secret)
        #expect(read.status == 200)
        #expect(try fixture.json(read)["channel"] as? String == "in_app")
        #expect(fixture.api("GET", "/api/v1/campaigns/\(id)/test-sends/\(testID + 100)").status == 404)
        let other = try fixture.app.database.apps.create(name: "Other", platforms: [.ios], actor: .commandLine, now: fixture.app.clock.now)
        let otherKey = try fixture.app.database.apiKeys.create(appID: other.id, name: "o", scopes: [.campaignsRead, .campaignsWrite], actor: .commandLine, now: fixture.app.clock.now)
        #expect(fixture.api("GET", "/api/v1/campaigns/\(id)/test-sends/\(testID)", key: otherKey.secret).status == 404)
        #expect(fixture.api("POST", "/api/v1/campaigns/\(id)/test-sends", #"{"installationIds": ["iid-omid"]}"#, key: otherKey.secret).status == 404)
    }

    @Test("A campaign keeps its newest tests; a device no longer a test device loses its test; an app holds at most 100 test devices")
    func bounds() async throws {
        let fixture = try await Self.fixture()
        let id = try fixture.campaign(state: .draft)
        for _ in 0..<(TestSend.keptPerCampaign + 3) {
            #expect(fixture.api("POST", "/api/v1/campaigns/\(id)/test-sends", #"{"installationIds": ["iid-sara"]}"#).status == 201)
        }
        #expect(try fixture.app.database.testSends.recent(campaignID: id, limit: 100).count == TestSend.keptPerCampaign)
        #expect(try fixture.feed("iid-sara").feed.campaigns.filter { $0.id == id }.count == 1, "the newest copy only")
        let sara = try #require(try fixture.app.database.apps.testDevices(appID: fixture.shop).first { $0.installationID == "iid-sara" })
        try fixture.app.database.apps.removeTestDevice(id: sara.id, appID: fixture.shop, actor: .commandLine, now: fixture.app.clock.now)
        #expect(try fixture.feed("iid-sara").feed.campaigns.isEmpty)

        for number in 0..<(TestDevice.maxPerApp - 1) {
            _ = try fixture.app.database.apps.addTestDevice(appID: fixture.shop, installationID: "bulk-\(number)", name: "Bulk \(number)", actor: .commandLine, now: fixture.app.clock.now)
        }
        let refused = try fixture.admin.submit("/apps/\(fixture.shop)/devices", from: "/apps/\(fixture.shop)", ["deviceName": "One more", "installationId": "one-more"])
        #expect(refused.status == 422)
        #expect(refused.text.contains("An app has at most 100 test devices"))
    }
}
