import Foundation
@testable import HeraldConsole
@testable import HeraldDelivery
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// Event ids scoped to their app; installation ids of any text erasable through their encoded path.
extension EventTests {
    @Test("An event is its app, occurrence time and id: a resend is a duplicate; the same id from two apps, or at another time, is another event")
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
        // And the same id at another time is another event, not a retry
        var later = EventTests.event("impression", campaign: post, at: now.addingTimeInterval(-60), platform: "web")
        later["id"] = blogEvent["id"]
        #expect(try fixture.answer(fixture.post([later], key: blogKey.secret))["accepted"] as? Int == 1)
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

    // MARK: Found by generated inputs (the `*Property` suites, Fuzz/, schemathesis), each pinned by a hand-written case

    @Test("An event time on a day or at a time that does not exist is rejected, not counted on the day Foundation rolls it over to", arguments: [
        "2026-04-31T10:00:00Z", "2026-02-29T10:00:00Z", "2026-09-20T24:00:00Z", "2026-09-20T10:15:60Z", "2026-09-20T10:15:00+0100",
    ])
    func impossibleEventTimes(time: String) async throws {
        let fixture = try await EventTests.fixture()
        var event = EventTests.event("impression", campaign: fixture.campaign, at: fixture.app.clock.now)
        event["occurredAt"] = time
        let answer = try fixture.answer(fixture.post([event]))
        #expect(answer["accepted"] as? Int == 0)
        let rejected = try #require(answer["rejected"] as? [[String: Any]])
        #expect((rejected.first?["error"] as? String)?.contains("occurredAt") == true, "\(rejected)")
    }

    @Test("A path segment that starts with a combining mark is still a segment: its installation's events can be erased")
    func combiningMarkAfterSlash() async throws {
        let fixture = try await EventTests.fixture()
        let installation = "\u{301}iid-\u{E002A}"
        _ = fixture.post([EventTests.event("impression", campaign: fixture.campaign, at: fixture.app.clock.now, installation: installation)])
        let privacy = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "privacy", scopes: [.installationsDelete], actor: .commandLine, now: fixture.app.clock.now)
        let answer = fixture.app.respond(Request(
            method: "DELETE", target: "/api/v1/installations/" + PercentEncoding.encode(installation),
            headers: HTTPHeaders([("Authorization", "Bearer \(privacy.secret)")])))
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.text.contains(#""erasedEvents":1"#))
    }
}
