import Foundation
import GRDB
@testable import HeraldDelivery
import HeraldDomain
@testable import HeraldSQLite
import HeraldStorage
import Synchronization
import TestSupport
import Testing

/// The Swift client's push calls against Herald's own server on loopback: the installation's registration
/// with its token, and what received and opened pushes report; then their failure paths on a scripted server.
@Suite("Delivery client: push tokens and notifications", .serialized)
struct DeliveryPushTests {
    typealias Fixture = DeliveryClientTests.Fixture

    /// Forwards to Herald and keeps the registrations sent.
    final class Recording: DeliveryTransport, Sendable {
        private let inner = ImagesAtHand()
        let registrations = Mutex<[TransportRequest]>([])

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if request.method == "PUT" { registrations.withLock { $0.append(request) } }
            return try await inner.send(request)
        }

        var count: Int { registrations.withLock { $0.count } }
    }

    static let deviceToken = Data((0..<32).map { UInt8($0 * 7 % 256) })
    static var deviceTokenHex: String { deviceToken.map { String(format: "%02x", $0) }.joined() }

    static let phone = DeviceContext(
        platform: .ios, appVersion: "2.4.0", language: "pt_BR", country: "br", timeZone: "America/Sao_Paulo", notificationsAllowed: true)

    func stored(_ fixture: Fixture, _ client: DeliveryClient) async throws -> Installation? {
        try fixture.app.database.installations.installation(appID: fixture.shop, id: await client.installationID)
    }

    @Test("registerPushToken registers the installation with what the client knows of the device; the same again sends nothing, also after a restart")
    func registers() async throws {
        let fixture = try await Fixture()
        let transport = Recording()
        let (client, _) = try fixture.client("phone", device: Self.phone, transport: transport)
        #expect(await client.installationRegistration == nil, "nothing to register before a token")
        #expect(await client.registerInstallationIfDue() == .idle)
        #expect(transport.count == 0)

        #expect(await client.registerPushToken(Self.deviceToken) == .registered)
        let row = try #require(try await stored(fixture, client))
        #expect(row.platform == .ios && row.pushProvider == .apns && row.pushToken == Self.deviceTokenHex)
        #expect(row.appVersion == "2.4.0" && row.language == "pt-BR" && row.country == "BR")
        #expect(row.timeZone == "America/Sao_Paulo" && row.notificationsAllowed)

        #expect(await client.registerPushToken(Self.deviceToken) == .idle)
        #expect(await client.registerInstallationIfDue() == .idle)
        let (restarted, _) = try fixture.client("phone", device: Self.phone, transport: transport)
        #expect(await restarted.registerInstallationIfDue() == .idle, "what Herald stored is remembered on the device")
        #expect(transport.count == 1)

        // An app that brings its own installation id later registers again under it
        let clock = fixture.app.clock
        let renamed = try DeliveryClient(configuration: DeliveryConfiguration(
            serverURL: fixture.url, apiKey: fixture.key, storageFolder: fixture.devices.url.appendingPathComponent("phone"), device: Self.phone,
            transport: transport, clock: { clock.now }, installationID: "iid-brought-by-the-app"))
        #expect(await renamed.registerInstallationIfDue() == .registered)
        #expect(try fixture.app.database.installations.installation(appID: fixture.shop, id: "iid-brought-by-the-app")?.pushToken == Self.deviceTokenHex)
    }

    @Test("An unchanged registration goes again once Herald's answer is a week old (moving the installation's registeredAt), or the clock went back a week; a device state saved before answers had times registers once")
    func refreshesWeekly() async throws {
        let fixture = try await Fixture()
        let transport = Recording()
        let clock = fixture.app.clock
        let week = DeliveryClient.registrationRefreshInterval
        #expect(week == 7 * 86_400)
        let (client, _) = try fixture.client("phone", device: Self.phone, transport: transport)
        #expect(await client.registerPushToken(Self.deviceToken) == .registered)
        let first = try #require(try await stored(fixture, client))

        clock.advance(week - 60)
        #expect(await client.registerPushToken(Self.deviceToken) == .idle, "not before the week is out")
        clock.advance(60)
        #expect(await client.registerPushToken(Self.deviceToken) == .registered)
        let refreshed = try #require(try await stored(fixture, client))
        #expect(refreshed.registeredAt.asStored == clock.now.asStored && refreshed.registeredAt > first.registeredAt)
        #expect(refreshed.createdAt.asStored == first.createdAt.asStored && refreshed.rowID == first.rowID)
        #expect(await client.registerInstallationIfDue() == .idle)
        #expect(transport.count == 2)

        // The device clock set back more than a week: the answer's time is in the future, and counts as old.
        clock.advance(-2 * week)
        #expect(await client.registerInstallationIfDue() == .registered)
        #expect(await client.registerInstallationIfDue() == .idle)
        #expect(transport.count == 3)

        // A state file an earlier version wrote has the registration Herald answered but not when.
        let stateFile = fixture.devices.url.appendingPathComponent("phone").appendingPathComponent("state.json")
        var state = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: stateFile)) as? [String: Any])
        #expect(state.removeValue(forKey: "settledAt") != nil)
        try JSONSerialization.data(withJSONObject: state).write(to: stateFile)
        let (upgraded, _) = try fixture.client("phone", device: Self.phone, transport: transport)
        #expect(await upgraded.registerInstallationIfDue() == .registered)
        #expect(await upgraded.registerInstallationIfDue() == .idle)
        #expect(transport.count == 4)
    }

    @Test("A changed token replaces the stored one; a changed device (language, permission, version) is sent again")
    func changes() async throws {
        let fixture = try await Fixture()
        let transport = Recording()
        let (client, _) = try fixture.client("phone", device: Self.phone, transport: transport)
        #expect(await client.registerPushToken(Self.deviceToken) == .registered)

        // A new token from APNs replaces the old one
        let renewed = Data(repeating: 0xEE, count: 32)
        #expect(await client.registerPushToken(renewed) == .registered)
        #expect(try await stored(fixture, client)?.pushToken == String(repeating: "ee", count: 32))
        #expect(try fixture.app.database.installations.withTokens(appID: fixture.shop, provider: .apns, pageSize: 10).installations.count == 1)

        // The user turns notifications off and changes the language; the app updates
        var device = Self.phone
        device.notificationsAllowed = false
        device.language = "fa"
        device.appVersion = "2.5.0"
        await client.updateDevice(device)
        #expect(await client.registerInstallationIfDue() == .registered)
        let row = try #require(try await stored(fixture, client))
        #expect(!row.notificationsAllowed && row.language == "fa" && row.appVersion == "2.5.0")
        #expect(row.pushToken == String(repeating: "ee", count: 32))

        // A change that does not touch the registration (orientation) sends nothing
        device.orientation = .landscape
        await client.updateDevice(device)
        #expect(await client.registerInstallationIfDue() == .idle)

        // An FCM token, as text
        #expect(await client.registerPushToken("dXNlcjpmY20:APA91bH_token-1", provider: .fcm) == .registered)
        let fcm = try #require(try await stored(fixture, client))
        #expect(fcm.pushProvider == .fcm && fcm.pushToken == "dXNlcjpmY20:APA91bH_token-1")
        #expect(transport.count == 4)
    }

    @Test("What Herald would refuse about the device is left out, not the registration; the id travels as one path segment")
    func unreadableDeviceDetails() async throws {
        let fixture = try await Fixture()
        let folder = try TemporaryFolder()
        let clock = fixture.app.clock
        let client = try DeliveryClient(configuration: DeliveryConfiguration(
            serverURL: fixture.url, apiKey: fixture.key, storageFolder: folder.url,
            device: DeviceContext(platform: .android, appVersion: String(repeating: "9", count: 65), language: "English", country: "Deutschland",
                                  timeZone: "Middle/Earth", notificationsAllowed: true),
            transport: ImagesAtHand(), clock: { clock.now }, installationID: "shop/phone 1 — ✓"))
        #expect(await client.registerPushToken("fcm-token", provider: .fcm) == .registered)
        let row = try #require(try fixture.app.database.installations.installation(appID: fixture.shop, id: "shop/phone 1 — ✓"))
        #expect(row.platform == .android && row.pushToken == "fcm-token")
        #expect(row.appVersion == nil && row.language == nil && row.country == nil && row.timeZone == nil)
    }

    @Test("With data collection off no registration leaves the device; turned on, the installation registers")
    func dataCollection() async throws {
        let fixture = try await Fixture()
        let transport = Recording()
        let (client, _) = try fixture.client("phone", device: Self.phone, transport: transport)
        try await client.setAutomaticDataCollectionEnabled(false)
        #expect(await client.registerPushToken(Self.deviceToken) == .idle)
        #expect(transport.count == 0)
        #expect(try await stored(fixture, client) == nil)
        try await client.setAutomaticDataCollectionEnabled(true)
        #expect(await client.registerInstallationIfDue() == .registered)
        #expect(try await stored(fixture, client)?.pushToken == Self.deviceTokenHex)
    }

    @Test("pushReceived records push_received, pushOpened records push_open and fires push_click: Herald stores both under the push campaign")
    func receivedAndOpened() async throws {
        let fixture = try await Fixture()
        // (Push events count only against a push campaign: against an in-app one they are refused.)
        let push = try fixture.app.database.campaigns.create(
            Campaign(app: fixture.shop, name: "Sale push", push: PushNotification(title: "Sale")), state: .published, actor: .commandLine,
            now: fixture.app.clock.now)
        let followUp = try fixture.campaign("After the push", event: "push_click", filters: [
            PropertyFilter(property: "campaign_id", op: .eq, value: .number(Double(push))),
        ])
        let (client, _) = try await DeliveryClientTests.ready(fixture, "phone")

        // An alert arrives (FCM data carries the id as text), then the user opens it (APNs carries a number)
        #expect(await client.pushReceived(userInfo: ["herald_campaign_id": String(push), "aps": ["alert": ["title": "Sale"]]]) == nil)
        #expect(await client.pushOpened(userInfo: ["herald_campaign_id": Int(push), "aps": ["alert": ["title": "Sale"]]])
                == TriggerResult(event: "push_click", outcome: .displayed(followUp)))
        // A push from elsewhere (no Herald campaign) records nothing
        #expect(await client.pushReceived(userInfo: ["aps": ["alert": "Your order shipped"]]) == nil)
        await client.pushOpened(userInfo: ["aps": ["alert": "Your order shipped"]])

        #expect(await client.flushEvents() == .uploaded(accepted: 2, duplicates: 0, rejected: 0))
        let installation = await client.installationID
        let rows = try await fixture.app.database.pool.read { db in
            Set(try Row.fetchAll(db, sql: "SELECT type, campaign_id, installation_id FROM events")
                .map { "\($0["type"] as String) \($0["campaign_id"] as Int64) \($0["installation_id"] as String)" })
        }
        #expect(rows == ["push_received \(push) \(installation)", "push_open \(push) \(installation)"])
        #expect(try fixture.stats(push) == DeliveryClientTests.CampaignTotals(pushesReceived: 1, pushOpens: 1))
    }

    @Test("A silent push (APNs content-available, FCM herald_refresh) fetches the feed at once; an alert does not")
    func silentPushRefreshes() async throws {
        let fixture = try await Fixture()
        _ = try fixture.campaign("First")
        let (client, _) = try await DeliveryClientTests.ready(fixture, "phone")
        #expect(await client.nextFeedRefresh > fixture.app.clock.now, "the next poll is a minute away")

        let published = try fixture.campaign("Published just now")
        #expect(await client.pushReceived(userInfo: ["aps": ["alert": ["title": "Hi"]], "herald_refresh": "0"]) == nil)
        #expect(await client.campaigns.map(\.id).contains(published) == false)
        #expect(await client.pushReceived(userInfo: ["aps": ["content-available": 1]]) == .updated)
        #expect(await client.campaigns.map(\.id).contains(published))

        let another = try fixture.campaign("And another")
        #expect(await client.pushReceived(userInfo: ["herald_refresh": "1", "from": "1234567890"]) == .updated)
        #expect(await client.campaigns.map(\.id).contains(another))
        #expect(await client.pushReceived(userInfo: ["aps": ["content-available": 1]]) == .notModified)
        #expect(await client.queuedEvents.isEmpty, "silent pushes without a campaign record nothing")
    }

    @Test("Silent pushes as payloads carry them: numbers, text, nested dictionaries; anything else is not silent")
    func silentPayloads() {
        let silent: [[AnyHashable: Any]] = [
            ["aps": ["content-available": 1]], ["aps": ["content-available": 1.0, "alert": "x"]], ["aps": ["content-available": "1"]],
            ["aps": ["content-available": Int64(1)] as [String: Any]], ["herald_refresh": "1"],
            ["aps": ["content-available": NSNumber(value: 1)] as [AnyHashable: Any]],
        ]
        for payload in silent { #expect(DeliveryClient.isSilentPush(payload), "\(payload)") }
        let loud: [[AnyHashable: Any]] = [
            [:], ["aps": ["content-available": 0]], ["aps": ["alert": "x"]], ["aps": "content-available"], ["content-available": 1],
            ["herald_refresh": 1], ["herald_refresh": "true"], ["aps": ["content-available": 2]],
        ]
        for payload in loud { #expect(!DeliveryClient.isSilentPush(payload), "\(payload)") }
    }

    // MARK: Failure paths, on a scripted server

    typealias Scripted = DeliveryFailureTests.ScriptedServer

    @Test("A failed registration backs off like uploads and honours Retry-After; a refused one is not sent again until something changes or a week passes")
    func registrationBackoff() async throws {
        let answers = Mutex<[TransportResponse]>([
            TransportResponse(status: 503, headers: ["Retry-After": "30"], body: Data()),
            TransportResponse(status: 500, headers: [:], body: Data()),
            TransportResponse(status: 201, headers: [:], body: Data("{}".utf8)),
            TransportResponse(status: 422, headers: [:], body: Data()),
            TransportResponse(status: 422, headers: [:], body: Data()),
            TransportResponse(status: 200, headers: [:], body: Data("{}".utf8)),
        ])
        let server = Scripted { _ in answers.withLock { $0.removeFirst() } }
        let folder = try TemporaryFolder()
        let clock = TestClock(DeliveryFailureTests.start)
        let client = try DeliveryFailureTests.client(server, folder: folder, clock: clock, random: [0.0])

        #expect(await client.registerPushToken(Self.deviceToken) == .failed("the server answered 503"))
        #expect(await client.nextRegistrationAttempt == clock.now.addingTimeInterval(30))
        #expect(await client.registerInstallationIfDue() == .idle, "waits for Retry-After")
        clock.advance(30)
        #expect(await client.registerInstallationIfDue() == .failed("the server answered 500"))
        #expect(await client.nextRegistrationAttempt == clock.now.addingTimeInterval(1.6), "the second failure: 2 s − 20 %")
        clock.advance(2)
        #expect(await client.registerInstallationIfDue() == .registered)
        let sent = try #require(server.requests.withLock { $0.last })
        #expect(sent.method == "PUT" && sent.url.absoluteString == "https://herald.test/api/v1/installations/iid-secret-7")
        #expect(sent.headers["Authorization"] == "Bearer hrld_first" && sent.headers["Content-Type"] == "application/json")
        let body = try CampaignJSON.decoder(refusingUnknownKeys: true).decode(InstallationRegistration.self, from: sent.body ?? Data())
        #expect(body == InstallationRegistration(
            platform: .ios, pushProvider: .apns, pushToken: Self.deviceTokenHex, appVersion: "2.4.0", language: "en", country: "US",
            timeZone: TimeZoneName.zone(TimeZone.current.identifier).map { _ in TimeZone.current.identifier }, notificationsAllowed: false))

        // Refused as a whole: kept from being sent again, until a week has passed (Herald may take it since) or the device changes
        #expect(await client.registerPushToken("not hex", provider: .apns) == .refused(422))
        #expect(await client.registerInstallationIfDue() == .idle)
        clock.advance(DeliveryClient.registrationRefreshInterval)
        #expect(await client.registerInstallationIfDue() == .refused(422))
        #expect(await client.registerInstallationIfDue() == .idle)
        await client.updateDevice(DeviceContext(platform: .ios, appVersion: "2.4.1", language: "en", country: "US"))
        #expect(await client.registerInstallationIfDue() == .registered)
        #expect(server.requests.withLock { $0.count } == 6)
    }

    @Test("A 401 or 403 on a registration stops the client like the feed, until the app gives a key again")
    func registrationStops() async throws {
        let server = Scripted { request in
            request.headers["Authorization"] == "Bearer hrld_second"
                ? TransportResponse(status: 200, headers: [:], body: Data("{}".utf8)) : TransportResponse(status: 403, headers: [:], body: Data())
        }
        let folder = try TemporaryFolder()
        let client = try DeliveryFailureTests.client(server, folder: folder)
        let app = RecordingAppDelegate()
        await client.setDelegate(app)
        #expect(await client.registerPushToken(Self.deviceToken) == .stopped(403))
        #expect(await client.refreshFeed() == .stopped(403))
        #expect(await client.registerInstallationIfDue() == .stopped(403))
        #expect(server.requests.withLock { $0.count } == 1)
        #expect(app.stops.withLock { $0 } == [403])
        await client.resume(apiKey: "hrld_second")
        #expect(await client.registerInstallationIfDue() == .registered)
    }
}
