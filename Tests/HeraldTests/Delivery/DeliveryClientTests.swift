import Foundation
import GRDB
@testable import HeraldDelivery
import HeraldDomain
import HeraldMicroHTTPD
@testable import HeraldSQLite
import HeraldStorage
import Synchronization
import TestSupport
import Testing

/// The delivery client against a real Herald on loopback; server and client share one clock.
@Suite("Delivery client", .serialized)
struct DeliveryClientTests {
    final class Fixture: Sendable {
        let app: TestApp
        let server: HTTPServer
        let shop: Int64
        let key: String
        let devices: TemporaryFolder
        /// The renderers of the fixture's clients: a client holds its renderer weakly, as apps expect.
        let renderers = Mutex<[RecordingDisplay]>([])

        init() async throws {
            app = try await TestApp()
            server = try app.serveOnLoopback()
            shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: app.clock.now).id
            key = try app.database.apiKeys.create(
                appID: shop, name: "sdk", scopes: [.feedRead, .eventsWrite, .campaignsRead], actor: .commandLine, now: app.clock.now).secret
            devices = try TemporaryFolder()
        }

        deinit { server.shutdown(gracePeriod: .zero) }

        var url: URL { URL(string: "http://127.0.0.1:\(server.port)/")! }

        @discardableResult
        func campaign(
            _ name: String, priority: Int = 5, event: String = "app_launch", filters: [PropertyFilter] = [], frequency: Frequency = Frequency(type: .always),
            targeting: Targeting = Targeting(), test: Bool = false, state: CampaignState = .published
        ) throws -> Int64 {
            let campaign = Campaign(
                app: shop, name: name, priority: priority, triggers: [Trigger(event: event, filters: filters)], frequency: frequency,
                targeting: targeting, testOnDevice: test, message: Message(layout: .modal, title: .init(text: name)))
            return try app.database.campaigns.create(campaign, state: state, actor: .commandLine, now: app.clock.now)
        }

        func client(
            _ name: String = "device", device: DeviceContext = DeviceContext(platform: .ios, appVersion: "2.4.0", language: "en-US", country: "US"),
            transport: any DeliveryTransport = ImagesAtHand(), server url: URL? = nil
        ) throws -> (DeliveryClient, RecordingDisplay) {
            let clock = app.clock
            let client = try DeliveryClient(configuration: DeliveryConfiguration(
                serverURL: url ?? self.url, apiKey: key, storageFolder: devices.url.appendingPathComponent(name), device: device,
                transport: transport, clock: { clock.now }))
            let display = RecordingDisplay()
            return (client, display)
        }

        func stats(_ campaign: Int64) throws -> CampaignTotals {
            let counts = try app.database.events.counts(campaignID: campaign, from: "2000-01-01", to: "2100-01-01")
            var totals = CampaignTotals()
            for row in counts.rows where !row.test {
                switch row.type {
                case .impression: totals.impressions += row.count
                case .click: totals.clicks += row.count
                case .dismiss: totals.dismissals += row.count
                case .error: totals.errors += row.count
                case .conversion: totals.conversions += row.count
                case .pushReceived: totals.pushesReceived += row.count
                case .pushOpen: totals.pushOpens += row.count
                }
            }
            return totals
        }
    }

    struct CampaignTotals: Equatable {
        var impressions = 0, clicks = 0, dismissals = 0, errors = 0, conversions = 0, pushesReceived = 0, pushOpens = 0
    }

    /// Records what the client asks the app to do.
    final class RecordingDisplay: DeliveryDisplayDelegate, Sendable {
        let shown = Mutex<[InAppMessage]>([])
        let unmatched = Mutex<[String]>([])
        let withdrawn = Mutex<[InAppMessage]>([])
        func display(_ message: InAppMessage) { shown.withLock { $0.append(message) } }
        func withdraw(_ message: InAppMessage) { withdrawn.withLock { $0.append(message) } }
        func noMatchingTrigger(_ event: String) { unmatched.withLock { $0.append(event) } }
    }

    /// Starts a client with the display attached, the feed fetched and its images loaded.
    static func ready(_ fixture: Fixture, _ name: String = "device", device: DeviceContext? = nil) async throws -> (DeliveryClient, RecordingDisplay) {
        let (client, display) = try device.map { try fixture.client(name, device: $0) } ?? fixture.client(name)
        fixture.renderers.withLock { $0.append(display) }
        await client.setDisplayDelegate(display)
        #expect(await client.refreshFeed() == .updated)
        await client.waitForImageLoads()
        return (client, display)
    }

    @Test("The highest priority shows; on a tie the most recently started; one message per trigger")
    func priority() async throws {
        let fixture = try await Fixture()
        try fixture.campaign("Low", priority: 3)
        try fixture.campaign("Older top", priority: 1)
        fixture.app.clock.advance(5)
        let newer = try fixture.campaign("Newer top", priority: 1)
        let (client, display) = try await Self.ready(fixture)
        #expect(await client.triggerEvent("app_launch") == .displayed(newer))
        #expect(display.shown.withLock { $0.map(\.campaignID) } == [newer])
    }

    @Test("Triggers match their event and typed property filters; nothing matching tells the delegate")
    func filters() async throws {
        let fixture = try await Fixture()
        let sale = try fixture.campaign("Big purchase", event: "purchase", filters: [
            PropertyFilter(property: "value", op: .gte, value: .number(10)), PropertyFilter(property: "product_id", op: .eq, value: .string("sku_1")),
        ])
        let (client, display) = try await Self.ready(fixture)
        #expect(await client.triggerEvent("purchase", properties: ["value": .number(5), "product_id": .string("sku_1")]) == .noMatch)
        #expect(await client.triggerEvent("purchase", properties: ["value": .string("50"), "product_id": .string("sku_1")]) == .noMatch)
        #expect(await client.triggerEvent("purchase", properties: ["value": .number(10)]) == .noMatch)
        #expect(await client.triggerEvent("app_launch") == .noMatch)
        #expect(display.unmatched.withLock { $0 } == ["purchase", "purchase", "purchase", "app_launch"])
        #expect(await client.triggerEvent("purchase", properties: ["value": .number(12.5), "product_id": .string("sku_1")]) == .displayed(sale))
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

    @Test("Frequency: once ever, at most once every N days; the app's minimum interval between messages")
    func frequencyAndInterval() async throws {
        let fixture = try await Fixture()
        let once = try fixture.campaign("Once", priority: 1, event: "app_launch", frequency: Frequency(type: .once))
        let weekly = try fixture.campaign("Every 2 days", priority: 1, event: "app_foreground", frequency: Frequency(type: .everyNDays, days: 2))
        let always = try fixture.campaign("Always", priority: 1, event: "session_start")
        let (client, _) = try await Self.ready(fixture)

        func showAndClose(_ event: String) async -> TriggerOutcome {
            let outcome = await client.triggerEvent(event)
            if case .displayed = outcome, let message = await client.currentMessage {
                await client.impressionDetected(message)
                await client.messageDismissed(message, type: .click)
            }
            return outcome
        }
        #expect(await showAndClose("app_launch") == .displayed(once))
        fixture.app.clock.advance(31)
        #expect(await showAndClose("app_launch") == .noMatch, "once means once")
        #expect(await showAndClose("app_foreground") == .displayed(weekly))
        fixture.app.clock.advance(86_400)
        #expect(await showAndClose("app_foreground") == .noMatch, "not within 2 days")
        fixture.app.clock.advance(86_400)
        #expect(await showAndClose("app_foreground") == .displayed(weekly))

        // The minimum interval (30 s by default) between any two messages
        fixture.app.clock.advance(10)
        #expect(await showAndClose("session_start") == .throttled(always))
        fixture.app.clock.advance(21)
        #expect(await showAndClose("session_start") == .displayed(always))
        // Configured per app on the server
        try fixture.app.database.apps.setMinInterval(appID: fixture.shop, seconds: 120, actor: .commandLine, now: fixture.app.clock.now)
        await client.refreshFeed()
        fixture.app.clock.advance(60)
        #expect(await showAndClose("session_start") == .throttled(always))
        fixture.app.clock.advance(61)
        #expect(await showAndClose("session_start") == .displayed(always))
    }

    @Test("Waiting messages form a stack, newest first; background and showing re-stack; displayNext shows the top")
    func stack() async throws {
        let fixture = try await Fixture()
        let first = try fixture.campaign("First", event: "a")
        let second = try fixture.campaign("Second", event: "b")
        let third = try fixture.campaign("Third", event: "c")
        let (client, display) = try await Self.ready(fixture)
        #expect(await client.triggerEvent("a") == .displayed(first))
        #expect(await client.triggerEvent("b") == .stacked(second))
        #expect(await client.triggerEvent("c") == .stacked(third))
        #expect(await client.pendingMessages.map(\.campaignID) == [third, second])
        #expect(await client.displayNext() == nil, "one at a time")
        let showing = try #require(await client.currentMessage)
        await client.messageClicked(showing, action: .primary, url: "https://example.com")
        #expect(await client.displayNext() == nil, "inside the minimum interval (30 s) the top stays")
        #expect(await client.pendingMessages.map(\.campaignID) == [third, second])
        fixture.app.clock.advance(30)
        #expect(await client.displayNext()?.campaignID == third)
        await client.messageDismissed(try #require(await client.currentMessage), type: .swipe)

        await client.appDidEnterBackground()
        #expect(await client.triggerEvent("a") == .stacked(first))
        #expect(await client.pendingMessages.map(\.campaignID) == [first, second])
        #expect(await client.displayNext() == nil, "not in the background")
        _ = await client.appWillEnterForeground()
        fixture.app.clock.advance(30)
        #expect(await client.displayNext()?.campaignID == first)
        #expect(display.shown.withLock { $0.map(\.campaignID) } == [first, third, first])
    }

    @Test("While display is suppressed triggers are ignored, not queued; a restart resets suppression")
    func suppression() async throws {
        let fixture = try await Fixture()
        let sale = try fixture.campaign("Sale")
        let (client, display) = try await Self.ready(fixture)
        await client.setMessageDisplaySuppressed(true)
        #expect(await client.triggerEvent("app_launch") == .suppressed)
        #expect(await client.pendingMessages.isEmpty)
        #expect(await client.displayNext() == nil)
        #expect(display.shown.withLock { $0.isEmpty })
        await client.setMessageDisplaySuppressed(false)
        #expect(await client.triggerEvent("app_launch") == .displayed(sale))

        await client.setMessageDisplaySuppressed(true)
        let (restarted, _) = try fixture.client("device")
        #expect(await restarted.messageDisplaySuppressed == false)
    }

    @Test("With data collection off no installation ID leaves the device, and the choice persists")
    func optIn() async throws {
        let fixture = try await Fixture()
        _ = try fixture.campaign("Trial", test: true)
        let live = try fixture.campaign("Live", priority: 9)
        let (client, _) = try await Self.ready(fixture)
        let installation = await client.installationID
        _ = try fixture.app.database.apps.addTestDevice(appID: fixture.shop, installationID: installation, name: "QA", actor: .commandLine, now: fixture.app.clock.now)
        #expect(await client.refreshFeed() == .updated)
        #expect(await client.campaigns.map(\.title) == ["Trial", "Live"], "a test device gets its test campaigns")

        try await client.setAutomaticDataCollectionEnabled(false)
        await client.refreshFeed()
        #expect(await client.campaigns.map(\.title) == ["Live"], "without the installation ID the server cannot know it is a test device")
        #expect(await client.triggerEvent("app_launch") == .displayed(live))
        let message = try #require(await client.currentMessage)
        await client.impressionDetected(message)
        #expect(await client.queuedEvents.allSatisfy { $0.installationId == nil })
        _ = await client.flushEvents()
        #expect(try fixture.app.database.events.count(installationID: installation) == 0)

        let (restarted, _) = try fixture.client("device")
        #expect(await restarted.automaticDataCollectionEnabled == false)
        try await restarted.setAutomaticDataCollectionEnabled(true)
        let (again, _) = try fixture.client("device")
        #expect(await again.automaticDataCollectionEnabled == true)
    }

    @Test("Offline, the last good feed keeps working, also after a restart")
    func offline() async throws {
        let fixture = try await Fixture()
        let sale = try fixture.campaign("Sale")
        let (client, _) = try await Self.ready(fixture)
        #expect(await client.refreshFeed() == .notModified, "the ETag is sent back")
        let unreachable = URL(string: "http://127.0.0.1:9/")!
        let (offline, display) = try fixture.client("device", server: unreachable)
        await offline.setDisplayDelegate(display)
        guard case .failed = await offline.refreshFeed() else { Issue.record("an unreachable server must fail"); return }
        #expect(await offline.campaigns.map(\.title) == ["Sale"], "the feed saved on disk is used after a restart")
        #expect(await offline.triggerEvent("app_launch") == .displayed(sale))
    }

    @Test("Uploads retry after a lost answer without counting twice")
    func retry() async throws {
        let fixture = try await Fixture()
        let sale = try fixture.campaign("Sale")
        let lossy = LossyTransport(losing: 1)
        let (client, display) = try fixture.client("device", transport: lossy)
        await client.setDisplayDelegate(display)
        await client.refreshFeed()
        #expect(await client.triggerEvent("app_launch") == .displayed(sale))
        let message = try #require(await client.currentMessage)
        await client.impressionDetected(message)
        await client.messageClicked(message, action: .primary)

        guard case .failed = await client.flushEvents() else { Issue.record("the first answer is lost"); return }
        #expect(await client.queuedEvents.count == 2, "kept for a retry")
        #expect(await client.flushEvents() == .idle, "waits for the backoff")
        fixture.app.clock.advance(2)
        #expect(await client.flushEvents() == .uploaded(accepted: 0, duplicates: 2, rejected: 0))
        #expect(await client.queuedEvents.isEmpty)
        #expect(try fixture.stats(sale) == CampaignTotals(impressions: 1, clicks: 1))
    }

    @Test("End to end: compose by API, devices fetch and trigger, and the server's stats equal what they reported")
    func endToEnd() async throws {
        let fixture = try await Fixture()
        let writer = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "ci", scopes: [.campaignsWrite, .campaignsRead], actor: .commandLine, now: fixture.app.clock.now)
        let body = #"{"app": \#(fixture.shop), "name": "Welcome", "triggers": [{"event": "app_launch"}], "frequency": {"type": "once"}, "message": {"layout": "banner", "title": {"text": "Hi"}}}"#
        let created = fixture.app.respond(.init(method: "POST", target: "/api/v1/campaigns", headers: .init([("Authorization", "Bearer \(writer.secret)"), ("Content-Type", "application/json")]), body: Array(body.utf8)))
        let id = try #require(try CampaignJSON.decoder().decode(Campaign.self, from: Data(created.body)).id)
        _ = fixture.app.respond(.init(method: "POST", target: "/api/v1/campaigns/\(id)/publish", headers: .init([("Authorization", "Bearer \(writer.secret)")])))

        var reported = CampaignTotals()
        for index in 0..<6 {
            let (client, _) = try await Self.ready(fixture, "device-\(index)")
            for _ in 0..<2 {
                guard case .displayed = await client.triggerEvent("app_launch"), let message = await client.currentMessage else { continue }
                await client.impressionDetected(message)
                reported.impressions += 1
                if index.isMultiple(of: 2) {
                    await client.messageClicked(message, action: .body)
                    reported.clicks += 1
                } else {
                    await client.messageDismissed(message, type: .auto)
                    reported.dismissals += 1
                }
            }
            #expect(await client.flushEvents() == .uploaded(accepted: 2, duplicates: 0, rejected: 0))
        }
        #expect(reported.impressions == 6, "once per device")
        #expect(try fixture.stats(id) == reported)

        // Event ids are UUID version 7, so they sort by the time they were made
        let stored = try await fixture.app.database.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, occurred_at FROM events").map { (id: $0["id"] as String, at: $0["occurred_at"] as String) }
        }
        #expect(stored.count == 12)
        #expect(stored.allSatisfy { UUID(uuidString: $0.id) != nil && Array($0.id)[14] == "7" }, "\(stored.map(\.id))")
        #expect(stored.sorted { $0.id < $1.id }.map(\.at) == stored.map(\.at).sorted())
    }
}

/// Forwards to the real server on loopback (http), and answers every https request (the campaigns'
/// images) itself with a few bytes of PNG, so tests of the client need no network.
struct ImagesAtHand: DeliveryTransport {
    private let server = URLSessionTransport(timeout: 5)

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard request.url.scheme == "https" else { return try await server.send(request) }
        return TransportResponse(status: 200, headers: ["Content-Type": "image/png"], body: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
    }
}

/// Forwards to the real server, but loses the first `losing` answers to event uploads after the
/// server has stored them, as a dropped connection would.
final class LossyTransport: DeliveryTransport, Sendable {
    private let inner = ImagesAtHand()
    private let remaining: Mutex<Int>

    init(losing count: Int) {
        remaining = Mutex(count)
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await inner.send(request)
        let lose = request.url.path.hasSuffix("/events") && remaining.withLock { count in
            defer { count = max(0, count - 1) }
            return count > 0
        }
        if lose { throw URLError(.networkConnectionLost) }
        return response
    }
}
