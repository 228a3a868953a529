import Foundation
@testable import HeraldConsole
@testable import HeraldDelivery
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// Smaller classes of the hardening issue: identities scoped right, caches and breakdowns bounded,
/// audit lines committed with their change.
@Suite("Bounds: event ids, installation ids, key cache, breakdowns, audit")
struct BoundsTests {
    @Test("Event ids are unique per app: the same id from two apps is two events")
    func eventIDsPerApp() async throws {
        // Given two apps, each with a campaign and an events key
        let fixture = try await EventTests.fixture()
        let now = fixture.app.clock.now
        let blog = try fixture.app.database.apps.create(name: "Blog", platforms: [.web], actor: .commandLine, now: now)
        let post = try fixture.app.database.campaigns.create(
            Campaign(app: blog.id, name: "Hello", triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "Hi"))),
            state: .published, actor: .commandLine, now: now)
        let blogKey = try fixture.app.database.apiKeys.create(appID: blog.id, name: "web", scopes: [.eventsWrite], actor: .commandLine, now: now)
        // When both send an event with the same id
        var shopEvent = EventTests.event("impression", campaign: fixture.campaign, at: now)
        var blogEvent = EventTests.event("impression", campaign: post, at: now, platform: "web")
        shopEvent["id"] = "0195f3c8-0000-7000-8000-000000000001"
        blogEvent["id"] = shopEvent["id"]
        let first = try fixture.answer(fixture.post([shopEvent]))
        let second = try fixture.answer(fixture.post([blogEvent], key: blogKey.secret))
        // Then each is accepted once, and a resend within one app is still a duplicate
        #expect(first["accepted"] as? Int == 1)
        #expect(second["accepted"] as? Int == 1)
        #expect(try fixture.answer(fixture.post([blogEvent], key: blogKey.secret))["duplicates"] as? Int == 1)
    }

    @Test("An installation id holding a slash, a space or non-Latin letters can be erased through its encoded path", arguments: [
        "a/b", "team/ios/123", "with space", "مریم-1", "50%off",
    ])
    func erasableInstallationIDs(installation: String) async throws {
        let fixture = try await EventTests.fixture()
        let now = fixture.app.clock.now
        let answer = try fixture.answer(fixture.post([EventTests.event("impression", campaign: fixture.campaign, at: now, installation: installation)]))
        #expect(answer["accepted"] as? Int == 1)
        let privacy = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "privacy", scopes: [.installationsDelete], actor: .commandLine, now: now)
        let encoded = PercentEncoding.encode(installation)
        let erased = fixture.app.respond(Request(
            method: "DELETE", target: "/api/v1/installations/\(encoded)", headers: HTTPHeaders([("Authorization", "Bearer \(privacy.secret)")])))
        #expect(erased.status == 200, "\(erased.text)")
        #expect(erased.text.contains(#""erasedEvents":1"#))
        #expect(try fixture.app.database.events.count(installationID: installation) == 0)
    }

    @Test("A flood of random API keys never evicts the keys apps use")
    func keyCacheFlood() async throws {
        let fixture = try await FeedTests.fixture()
        #expect(fixture.feed().status == 200)
        let keys = fixture.app.application.services.keys
        #expect(keys.remembered.live == 1)
        for _ in 0..<(KeyAuthenticator.maxUnknown + 500) {
            _ = try keys.authenticate(secret: "hrld_" + UUID().uuidString, now: fixture.app.clock.now)
        }
        // The unknown secrets were cleared when they filled their memory; the live key stayed.
        #expect(keys.remembered.live == 1)
        #expect(keys.remembered.unknown <= KeyAuthenticator.maxUnknown)
        #expect(fixture.feed().status == 200)
    }

    @Test("Thirty thousand conversion names make a bounded answer: the top 20 and the rest counted together")
    func conversionBreakdown() async throws {
        // Given a campaign with 30,000 distinct conversion events on one day (and two of one name)
        let fixture = try await EventTests.fixture()
        let now = fixture.app.clock.now
        var events = (0..<30_000).map { index in
            Event(id: UUID().uuidString, appID: fixture.shop, campaignID: fixture.campaign, type: .conversion, occurredAt: now, platform: "ios",
                  installationID: nil, detail: "event_\(index)", url: nil, test: false)
        }
        events += (0..<5).map { _ in
            Event(id: UUID().uuidString, appID: fixture.shop, campaignID: fixture.campaign, type: .conversion, occurredAt: now, platform: "ios",
                  installationID: nil, detail: "purchase", url: nil, test: false)
        }
        for batch in stride(from: 0, to: events.count, by: 1000) {
            _ = try fixture.app.database.events.ingest(Array(events[batch..<min(batch + 1000, events.count)]), now: now)
        }
        // When the stats and the report are read
        let stats = try fixture.stats("")
        let byEvent = try #require(stats["conversionsByEvent"] as? [String: Int])
        // Then 20 names are listed, the most recorded first among them, and the others are counted, not listed
        #expect(byEvent.count == EventCounts.topConversionEvents)
        #expect(byEvent["purchase"] == 5)
        #expect(stats["otherConversions"] as? Int == 30_005 - byEvent.values.reduce(0, +))
        #expect((stats["totals"] as? [String: Any])?["conversions"] as? Int == 30_005)
        let browser = try await TestApp.signedIn(fixture.app)
        let page = browser.get("/campaigns/\(fixture.campaign)/report")
        #expect(page.status == 200)
        #expect(page.body.count < 200_000, "the page is \(page.body.count) bytes")
        #expect(page.text.contains("All other events"))
    }

    @Test("Changes to apps, keys and installations commit their audit line with them, and a change that does nothing writes none")
    func auditInTheSameTransaction() async throws {
        let fixture = try await EventTests.fixture()
        let now = fixture.app.clock.now
        let audit = fixture.app.database.auditLog
        let before = try audit.count()
        let key = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "temp", scopes: [.feedRead], actor: .commandLine, now: now)
        #expect(try fixture.app.database.apiKeys.revoke(key.key, actor: .commandLine, now: now))
        #expect(try !fixture.app.database.apiKeys.revoke(key.key, actor: .commandLine, now: now))
        _ = try fixture.app.database.events.eraseInstallation("nobody", appID: fixture.shop, actor: .commandLine, now: now)
        let actions = try audit.page(offset: 0, limit: 10).map(\.action)
        #expect(try audit.count() == before + 3)
        #expect(Array(actions.prefix(3)) == ["installation.erase", "key.revoke", "key.create"])
    }

    @Test("A device gives up on an app version pattern that backtracks too long, and counts it as no match", .timeLimit(.minutes(1)))
    func catastrophicVersionPattern() {
        let version = String(repeating: "a", count: 40) + "b"
        let started = ContinuousClock.now
        #expect(!VersionPattern.matches("^(a+)+$", version))
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(VersionPattern.matches(#"^2\.(4|5)\."#, "2.4.0"))
        #expect(!VersionPattern.matches(#"^3\."#, "2.4.0"))
        #expect(!VersionPattern.matches(String(repeating: "a", count: CampaignLimits.appVersionRuleLength + 1), "a"))
        let rule = FeedCampaign(id: 1, targeting: Targeting(appVersion: .init(op: .regex, value: "^(a+)+$")),
                                message: Message(layout: .modal, title: .init(text: "hi")))
        let device = DeviceContext(platform: .ios, appVersion: version, language: "en", country: "US")
        #expect(!Eligibility.targets(rule, device: device, firstOpen: Date(), installationID: "i", now: Date()))
    }

    @Test("An export is made a page at a time: 300 campaigns arrive in several pieces, each bounded, as one valid file")
    func streamedExport() async throws {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let campaigns = (0..<300).map { Campaign(app: shop.id, name: "Campaign \($0)", message: Message(layout: .modal, title: .init(text: "Hi \($0)"))) }
        _ = try app.database.campaigns.createAll(campaigns, state: .draft, actor: .commandLine, now: app.clock.now)
        let stream = CampaignTransfer(database: app.database).exportStream(CampaignQuery(), now: app.clock.now)
        var pieces: [[UInt8]] = []
        while let piece = try stream.next() { pieces.append(piece) }
        #expect(pieces.count == 300 / CampaignTransfer.exportPageSize + 1)
        #expect(pieces.allSatisfy { $0.count < 1024 * 1024 })
        let file = try CampaignJSON.decoder(refusingUnknownKeys: true).decode(CampaignExport.self, from: Data(pieces.joined()))
        #expect(file.campaigns.map(\.name) == campaigns.map(\.name))
        #expect(try stream.next() == nil)
        // An export of nothing is a valid file too.
        var none = CampaignQuery()
        none.search = "no such campaign"
        let empty = try CampaignTransfer(database: app.database).exportStream(none, now: app.clock.now).collect()
        #expect(try CampaignJSON.decoder().decode(CampaignExport.self, from: Data(empty)).campaigns.isEmpty)
    }
}
