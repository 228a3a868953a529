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

    func validate() throws {
        guard URL(string: url)?.host != nil else { throw ValidationError("--url must be an address such as http://127.0.0.1:8080.") }
        guard (1...1000).contains(devices) else { throw ValidationError("--devices must be from 1 to 1000.") }
        guard (1...3600).contains(seconds) else { throw ValidationError("--seconds must be from 1 to 3600.") }
    }

    func run() async throws {
        let server = URL(string: url)!
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-simulate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tally = Tally()
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))

        let progress = Task {
            while true {
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
                let counts = tally.progress
                print("… \(counts["impression", default: 0]) impressions, \(counts["click", default: 0]) clicks, \(counts["dismiss", default: 0]) dismissals, \(counts["error", default: 0]) errors, \(counts["conversion", default: 0]) conversions so far")
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<devices {
                group.addTask {
                    try await SimulatedDevice(index: index, seed: seed &+ UInt64(index), server: server, key: key,
                                              folder: folder.appendingPathComponent("device-\(index)"), tally: tally)
                        .use(until: deadline)
                }
            }
            try await group.waitForAll()
        }
        progress.cancel()
        // The summary must be the last line: wait until progress has stopped printing.
        await progress.value
        let counts = tally.counts
        let summary: [String: Int] = [
            "impressions": counts["impression", default: 0], "clicks": counts["click", default: 0],
            "dismissals": counts["dismiss", default: 0], "errors": counts["error", default: 0],
            "conversions": counts["conversion", default: 0],
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        print(String(decoding: try encoder.encode(summary), as: UTF8.self))
    }
}

/// Events the simulated devices reported so far, and those the server has stored.
final class Tally: Sendable {
    private let uploaded = Mutex<[String: Int]>([:])
    private let reported = Mutex<[String: Int]>([:])

    func report(_ type: String) {
        reported.withLock { $0[type, default: 0] += 1 }
    }

    func add(_ events: [OutgoingEvent]) {
        uploaded.withLock { counts in for event in events { counts[event.type.rawValue, default: 0] += 1 } }
    }

    /// What the server has: the summary.
    var counts: [String: Int] { uploaded.withLock { $0 } }
    /// What devices have reported, uploaded or not: the progress.
    var progress: [String: Int] { reported.withLock { $0 } }
}

/// One device: opens the app, comes and goes, buys things and fires custom events; its user clicks,
/// dismisses, or the image fails, like real users do.
struct SimulatedDevice {
    let client: DeliveryClient
    let user: SimulatedUser
    let tally: Tally

    init(index: Int, seed: UInt64, server: URL, key: String, folder: URL, tally: Tally) throws {
        let platform: Platform = index.isMultiple(of: 3) ? .android : .ios
        // Devices speak six languages in turn, so campaigns with language versions report several.
        let (language, country) = Self.locales[index % Self.locales.count]
        let device = DeviceContext(
            platform: platform, appVersion: index.isMultiple(of: 4) ? "2.3.1" : "2.4.0", language: language, country: country)
        client = try DeliveryClient(configuration: DeliveryConfiguration(
            serverURL: server, apiKey: key, storageFolder: folder, device: device))
        user = SimulatedUser(seed: seed)
        self.tally = tally
    }

    static let locales = [("en", "US"), ("fa", "IR"), ("ar", "EG"), ("de", "DE"), ("ja", "JP"), ("pt-BR", "BR")]

    func use(until deadline: Date) async throws {
        await client.setDisplayDelegate(user)
        await client.refreshFeed()
        await client.triggerEvent("app_launch")
        await react()
        while Date() < deadline {
            try await Task.sleep(for: .milliseconds(user.pause()))
            await client.refreshFeedIfDue()
            switch user.nextAction() {
            case 0:
                await client.appDidEnterBackground()
                await client.appWillEnterForeground()
            case 1:
                await client.triggerEvent("purchase", properties: user.purchase())
            case 2:
                await client.triggerEvent("level_complete", properties: ["level": .number(Double(user.level()))])
            default:
                await client.triggerEvent("session_start")
            }
            await react()
            // Whatever waited on the stack gets its turn once the screen is free.
            _ = await client.displayNext()
            await react()
        }
        try await uploadEverything()
    }

    /// What the user does with the message on screen.
    private func react() async {
        guard let message = await client.currentMessage else { return }
        switch user.reaction() {
        case .fails:
            await client.displayError(message, code: .imageFetch)
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

    /// Uploads until the queue is empty; counts only what the server has.
    private func uploadEverything() async throws {
        for _ in 0..<20 {
            let queued = await client.queuedEvents
            if queued.isEmpty { return }
            if case .uploaded = await client.flushEvents() {
                tally.add(queued)
                return
            }
            try await Task.sleep(for: .seconds(1))
        }
        throw ValidationError("device could not upload its events; is the server up and the key allowed events:write?")
    }
}

/// A user's choices, from a seeded generator so runs repeat.
final class SimulatedUser: DeliveryDisplayDelegate, Sendable {
    enum Reaction { case clicks, dismisses(DismissType), fails }

    private let state: Mutex<UInt64>

    init(seed: UInt64) {
        state = Mutex(seed &* 0x9E37_79B9_7F4A_7C15 | 1)
    }

    private func random() -> Double {
        state.withLock { x in
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            return Double(x % 1_000_000) / 1_000_000
        }
    }

    func display(_ message: InAppMessage) {}
    func withdraw(_ message: InAppMessage) {}
    func noMatchingTrigger(_ event: String) {}

    func pause() -> Int { 150 + Int(random() * 600) }
    func nextAction() -> Int { Int(random() * 4) }
    func level() -> Int { 1 + Int(random() * 20) }
    func converts() -> Bool { random() < 0.3 }

    func purchase() -> [String: FilterValue] {
        ["value": .number((random() * 5_000).rounded() / 100), "product_id": .string(random() < 0.5 ? "sku_1" : "sku_2")]
    }

    func reaction() -> Reaction {
        let roll = random()
        if roll < 0.03 { return .fails }
        if roll < 0.35 { return .clicks }
        return .dismisses(roll < 0.7 ? .auto : (roll < 0.85 ? .swipe : .click))
    }
}
