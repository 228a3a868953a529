import ArgumentParser
import Foundation
import HeraldDelivery
import HeraldDomain
import Synchronization

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run simulated devices with the delivery library against a server; ends with one JSON line of what they reported.")

    @Option(help: "The server's address, such as http://127.0.0.1:8080.")
    var url: String

    @Option(help: "An API key with feed:read and events:write.")
    var key: String

    @Option(help: "How many devices.")
    var devices = 10

    @Option(help: "How long they use the app, in seconds.")
    var seconds = 15

    @Option(help: "Seed for the users' choices, to repeat a run.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp(
        "A testing aid: fetch campaigns' images from this server instead of their hosts, such as http://127.0.0.1:8000.",
        discussion: "Campaign images are https URLs on hosts a test machine may not reach; each image's path and query are asked of this server instead."))
    var imagesFrom: String?

    @Option(help: "Seconds in the background after which a session ends (the delivery client's default is 10).")
    var sessionTimeout: Double = 10

    @Option(help: ArgumentHelp(
        "Register each device's installation with a push token of this provider (apns or fcm).",
        discussion: "Device N's installation id is sim-<seed>-<N>; its token is that id's UTF-8 bytes in hex, padded with zeros to 64 digits, so a test knows every token."))
    var pushProvider: PushProvider?

    @Option(help: "Every device receives a push of this campaign (push_received); --open-pushes says how many open it.")
    var pushCampaign: Int64?

    @Option(help: ArgumentHelp(
        "With --push-campaign: the fraction of devices (0 to 1) that open the push (push_open, and the push_click trigger).",
        discussion: "The first round(fraction × devices) devices open it, so the count is exact."))
    var openPushes: Double = 0

    func validate() throws {
        guard URL(string: url)?.host != nil else { throw ValidationError("--url must be an address such as http://127.0.0.1:8080.") }
        guard (1...1000).contains(devices) else { throw ValidationError("--devices must be from 1 to 1000.") }
        guard (1...3600).contains(seconds) else { throw ValidationError("--seconds must be from 1 to 3600.") }
        if let imagesFrom {
            guard let images = URL(string: imagesFrom), ["http", "https"].contains(images.scheme?.lowercased() ?? ""), images.host != nil else {
                throw ValidationError("--images-from must be an address such as http://127.0.0.1:8000.")
            }
        }
        guard sessionTimeout > 0, sessionTimeout <= 3600 else { throw ValidationError("--session-timeout must be more than 0 and at most 3600 seconds.") }
        if let pushCampaign, pushCampaign < 1 { throw ValidationError("--push-campaign must be a campaign id (1 or more).") }
        guard (0...1).contains(openPushes) else { throw ValidationError("--open-pushes must be a fraction from 0 to 1.") }
        if openPushes > 0, pushCampaign == nil { throw ValidationError("--open-pushes needs --push-campaign, the campaign whose push the devices open.") }
    }

    func run() async throws {
        guard let server = URL(string: url) else { throw ValidationError("--url must be an address such as http://127.0.0.1:8080.") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-simulate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tally = Tally()
        let transport = SimulatorTransport(server: server, imagesFrom: imagesFrom.flatMap(URL.init(string:)), tally: tally)
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        let openers = Int((openPushes * Double(devices)).rounded())

        let progress = Task {
            while true {
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
                let counts = tally.progress
                print("… \(counts["impression", default: 0]) impressions, \(counts["click", default: 0]) clicks, \(counts["dismiss", default: 0]) dismissals, \(counts["error", default: 0]) errors, \(counts["conversion", default: 0]) conversions reported, \(tally.discards.values.reduce(0, +)) messages discarded so far")
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<devices {
                group.addTask {
                    let push = SimulatedDevice.Push(
                        provider: pushProvider, campaign: pushCampaign, opens: index < openers)
                    let device = try SimulatedDevice(
                        index: index, installationID: SimulatedDevice.installationID(seed: seed, index: index), seed: seed &+ UInt64(index),
                        server: server, key: key, transport: transport, sessionTimeout: sessionTimeout,
                        folder: folder.appendingPathComponent("device-\(index)"), tally: tally, push: push)
                    try await device.use(until: deadline)
                }
            }
            try await group.waitForAll()
        }
        progress.cancel()
        // The summary must be the last line: wait until progress has stopped printing.
        await progress.value
        if let status = tally.stopped { throw ValidationError("the server refused the key (\(status)); does it have feed:read and events:write?") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        print(String(decoding: try encoder.encode(tally.summary), as: UTF8.self))
    }
}

/// What the run prints last: the events the server stored, the sessions the devices began, the
/// installations Herald registered, and the messages chosen but not shown, by reason.
struct SimulationSummary: Encodable {
    let impressions, clicks, dismissals, errors, conversions, pushesReceived, pushOpens, sessions, registrations: Int
    let discards: [String: Int]
}

/// Events the simulated devices reported so far, those the server has stored, sessions and discards.
final class Tally: DeliveryDelegate, Sendable {
    private let uploaded = Mutex<[String: Int]>([:])
    private let reported = Mutex<[String: Int]>([:])
    private let discardsByDevice = Mutex<[Int: [DiscardReason: Int]]>([:])
    private let sessions = Mutex(0)
    private let registrations = Mutex(0)
    private let stop = Mutex<Int?>(nil)

    func report(_ type: String) {
        reported.withLock { $0[type, default: 0] += 1 }
    }

    /// Events in a batch the server answered with 2xx: stored.
    func stored(_ events: [OutgoingEvent]) {
        uploaded.withLock { counts in for event in events { counts[event.type.rawValue, default: 0] += 1 } }
    }

    func fired(_ results: [TriggerResult]) {
        let started = results.filter { $0.event == "session_start" }.count
        sessions.withLock { $0 += started }
    }

    /// An installation Herald stored.
    func registered() {
        registrations.withLock { $0 += 1 }
    }

    func discards(_ counts: [DiscardReason: Int], device: Int) {
        discardsByDevice.withLock { $0[device] = counts }
    }

    func deliveryStopped(status: Int) { stop.withLock { $0 = status } }
    func deliveryStorageFailed(_ failure: StorageFailure) { print("a device could not save its \(failure.part.rawValue): \(failure.reason)") }

    var stopped: Int? { stop.withLock { $0 } }
    /// What devices have reported, uploaded or not: the progress.
    var progress: [String: Int] { reported.withLock { $0 } }

    var discards: [String: Int] {
        discardsByDevice.withLock { devices in
            devices.values.reduce(into: [:]) { total, counts in for (reason, count) in counts { total[reason.rawValue, default: 0] += count } }
        }
    }

    var summary: SimulationSummary {
        let counts = uploaded.withLock { $0 }
        return SimulationSummary(
            impressions: counts["impression", default: 0], clicks: counts["click", default: 0], dismissals: counts["dismiss", default: 0],
            errors: counts["error", default: 0], conversions: counts["conversion", default: 0],
            pushesReceived: counts[EventType.pushReceived.rawValue, default: 0], pushOpens: counts[EventType.pushOpen.rawValue, default: 0],
            sessions: sessions.withLock { $0 }, registrations: registrations.withLock { $0 }, discards: discards)
    }
}

/// The devices' way to the server: events counted once the server has them, and images, with
/// `--images-from`, fetched from a local server instead of their hosts.
struct SimulatorTransport: DeliveryTransport {
    let server: URL
    let imagesFrom: URL?
    let tally: Tally
    private let network = URLSessionTransport(timeout: 10)

    init(server: URL, imagesFrom: URL?, tally: Tally) {
        self.server = server
        self.imagesFrom = imagesFrom
        self.tally = tally
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        var request = request
        let isHerald = request.url.host == server.host && request.url.port == server.port
        if !isHerald, let imagesFrom, var local = URLComponents(url: imagesFrom, resolvingAgainstBaseURL: false),
           let original = URLComponents(url: request.url, resolvingAgainstBaseURL: false) {
            local.path = original.path
            local.query = original.query
            if let url = local.url { request.url = url }
        }
        let response = try await network.send(request)
        if isHerald, request.method == "POST", (200..<300).contains(response.status), let body = request.body,
           let batch = try? CampaignJSON.decoder().decode(EventBatch.self, from: body) {
            tally.stored(batch.events)
        }
        return response
    }

    private struct EventBatch: Decodable { let events: [OutgoingEvent] }
}

/// One device: registers its push token when asked, receives and opens a push campaign's notification
/// when asked, opens the app, comes and goes (sometimes long enough for a new session), buys things,
/// fires custom events and opens pushes (without a push campaign, pushes of no campaign, which report
/// nothing); its user clicks, dismisses, or the message fails to draw, like real users do.
struct SimulatedDevice {
    /// What the device does with pushes.
    struct Push {
        /// Registers a token of this provider.
        let provider: PushProvider?
        /// Receives this campaign's push (and without one, opens pushes of no campaign now and then).
        let campaign: Int64?
        /// Opens the campaign's push.
        let opens: Bool
    }

    let index: Int
    let client: DeliveryClient
    let user: SimulatedUser
    let tally: Tally
    let sessionTimeout: TimeInterval
    let installationID: String
    let push: Push

    /// Device `index`'s installation id in a run with `seed`: the same in every run with that seed, so a
    /// second run's devices are the first run's installations.
    static func installationID(seed: UInt64, index: Int) -> String { "sim-\(seed)-\(index)" }

    /// The push token a device registers: its installation id's UTF-8 bytes in hex, padded with zeros to the
    /// 64 digits of an APNs token (Herald takes no shorter one; a valid FCM token too), so a test can tell which
    /// installation a notification was sent to.
    static func pushToken(installationID: String) -> String {
        let hex = installationID.utf8.map { String(format: "%02x", $0) }.joined()
        return hex + String(repeating: "0", count: max(0, 64 - hex.count))
    }

    init(
        index: Int, installationID: String, seed: UInt64, server: URL, key: String, transport: SimulatorTransport, sessionTimeout: TimeInterval,
        folder: URL, tally: Tally, push: Push
    ) throws {
        // An APNs token comes from an iOS device; otherwise a third of the devices are Android phones.
        let platform: Platform = push.provider != .apns && index.isMultiple(of: 3) ? .android : .ios
        // Devices speak six languages in turn, so campaigns with language versions report several.
        let (language, country, timeZone) = Self.locales[index % Self.locales.count]
        let device = DeviceContext(
            platform: platform, appVersion: index.isMultiple(of: 4) ? "2.3.1" : "2.4.0", language: language, country: country,
            orientation: index.isMultiple(of: 5) ? .landscape : .portrait, timeZone: timeZone, notificationsAllowed: true)
        client = try DeliveryClient(configuration: DeliveryConfiguration(
            serverURL: server, apiKey: key, storageFolder: folder, device: device, transport: transport, installationID: installationID,
            sessionTimeout: sessionTimeout))
        user = SimulatedUser(seed: seed)
        self.index = index
        self.tally = tally
        self.sessionTimeout = sessionTimeout
        self.installationID = installationID
        self.push = push
    }

    /// Language, country and time zone, in turn.
    static let locales = [
        ("en", "US", "America/New_York"), ("fa", "IR", "Asia/Tehran"), ("ar", "EG", "Africa/Cairo"), ("de", "DE", "Europe/Berlin"),
        ("ja", "JP", "Asia/Tokyo"), ("pt-BR", "BR", "America/Sao_Paulo"),
    ]

    func use(until deadline: Date) async throws {
        await client.setDelegate(tally)
        await client.setDisplayDelegate(user)
        if let provider = push.provider { try await register(provider) }
        await client.refreshFeed()
        tally.fired(await client.start())
        if let campaign = push.campaign {
            let notification: [AnyHashable: Any] = ["herald_campaign_id": campaign, "aps": ["alert": ["title": "Simulated push"]]]
            await client.pushReceived(userInfo: notification)
            if push.opens { tally.fired([await client.pushOpened(userInfo: notification)]) }
        }
        await react()
        while Date() < deadline {
            try await Task.sleep(for: .milliseconds(user.pause()))
            await client.tick()
            await client.refreshFeedIfDue()
            switch user.nextAction() {
            case .background(let seconds):
                await client.appDidEnterBackground()
                try await Task.sleep(for: .milliseconds(Int(1000 * min(seconds * sessionTimeout, max(0, deadline.timeIntervalSinceNow)))))
                tally.fired(await client.appWillEnterForeground())
            case .purchase(let properties):
                await client.triggerEvent("purchase", properties: properties)
            case .levelComplete(let level):
                await client.triggerEvent("level_complete", properties: ["level": .number(Double(level))])
            case .pushOpened where push.campaign == nil:
                // A push from elsewhere, no campaign of Herald's: it reports nothing and fires `push_click` bare.
                // (Naming a feed campaign made push_open events against in-app campaigns.)
                tally.fired([await client.pushOpened(userInfo: [:])])
            case .pushOpened:
                // This run's pushes are the campaign's: opened once, at the start, by the devices that open it.
                break
            }
            await react()
            // Whatever waited on the stack gets its turn once the screen is free.
            await client.displayNext()
            await react()
        }
        try await uploadEverything()
        tally.discards(await client.discards, device: index)
    }

    /// What the user does with the message on screen.
    private func react() async {
        tally.discards(await client.discards, device: index)
        guard let message = await client.currentMessage else { return }
        switch user.reaction() {
        case .fails:
            await client.displayError(message, code: .imageDisplay)
            tally.report("error")
        case .clicks:
            await client.impressionDetected(message)
            await client.messageClicked(message, action: message.message.primaryAction == nil ? .body : .primary, url: message.message.primaryAction?.url)
            tally.report("impression")
            tally.report("click")
            if message.trigger == "purchase" && user.converts() {
                await client.recordConversion("purchase", for: message)
                tally.report("conversion")
            }
        case .dismisses(let type):
            await client.impressionDetected(message)
            await client.messageDismissed(message, type: type)
            tally.report("impression")
            tally.report("dismiss")
        }
    }

    /// Registers the installation with its token, trying again (with the client's backoff) until Herald stores it.
    private func register(_ provider: PushProvider) async throws {
        var result = await client.registerPushToken(Self.pushToken(installationID: installationID), provider: provider)
        for _ in 0..<20 {
            switch result {
            case .registered:
                tally.registered()
                return
            case .stopped, .refused:
                throw ValidationError("Herald refused the registration of \(installationID): \(result)")
            case .failed, .idle:
                let wait = max(0.1, await client.nextRegistrationAttempt.timeIntervalSinceNow)
                try await Task.sleep(for: .milliseconds(Int(1000 * min(wait, 5))))
                result = await client.registerInstallationIfDue()
            }
        }
        throw ValidationError("device \(installationID) could not register; is the server up and the key allowed events:write?")
    }

    /// Uploads until the queue is empty.
    private func uploadEverything() async throws {
        for _ in 0..<20 {
            if await client.queuedEvents.isEmpty { return }
            if case .stopped = await client.flushEvents() { return }
            if await client.queuedEvents.isEmpty { return }
            try await Task.sleep(for: .seconds(1))
        }
        throw ValidationError("device could not upload its events; is the server up and the key allowed events:write?")
    }
}

/// A user's choices, from a seeded generator so runs repeat (as far as the network's timing lets them).
final class SimulatedUser: DeliveryDisplayDelegate, Sendable {
    enum Reaction { case clicks, dismisses(DismissType), fails }

    enum Action {
        /// To the background for this many session timeouts (under 1: the session goes on).
        case background(Double)
        case purchase([String: FilterValue])
        case levelComplete(Int)
        case pushOpened
    }

    /// The xorshift state.
    private let state: Mutex<UInt64>

    init(seed: UInt64) {
        state = Mutex(seed &* 0x9E37_79B9_7F4A_7C15 | 1)
    }

    private func nextBits() -> UInt64 {
        state.withLock { x in
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            return x
        }
    }

    private func random() -> Double {
        Double(nextBits() % 1_000_000) / 1_000_000
    }

    func display(_ message: InAppMessage) {}
    func withdraw(_ message: InAppMessage) {}
    func noMatchingTrigger(_ event: String) {}

    /// Now and then the app is busy (a keyboard up, a checkout): later, or not at all.
    func displayDecision(for message: InAppMessage) -> DisplayDecision {
        let roll = random()
        return roll < 0.03 ? .later : (roll < 0.05 ? .discard : .show)
    }

    func pause() -> Int { 150 + Int(random() * 600) }
    func level() -> Int { 1 + Int(random() * 20) }
    func converts() -> Bool { random() < 0.3 }

    func nextAction() -> Action {
        switch Int(random() * 8) {
        case 0: .background(random() < 0.5 ? random() * 0.5 : 1 + random() * 0.5)
        case 1, 2, 3: .purchase(["value": .number((random() * 5_000).rounded() / 100), "product_id": .string(random() < 0.5 ? "sku_1" : "sku_2")])
        case 4, 5, 6: .levelComplete(level())
        default: .pushOpened
        }
    }

    func reaction() -> Reaction {
        let roll = random()
        if roll < 0.03 { return .fails }
        if roll < 0.35 { return .clicks }
        return .dismisses(roll < 0.7 ? .auto : (roll < 0.85 ? .swipe : .click))
    }
}
