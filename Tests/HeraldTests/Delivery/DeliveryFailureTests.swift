import Foundation
@testable import HeraldDelivery
import HeraldDomain
import Synchronization
import TestSupport
import Testing

/// What the conformance vectors leave to the client's own tests: the network's failure paths (backoff,
/// `Retry-After`, 401/403), the event queue on disk, storage errors, and the installation id on the wire.
@Suite("Delivery client: failure paths")
struct DeliveryFailureTests {
    /// A server scripted per test: answers each request with `answer`, and keeps every request.
    final class ScriptedServer: DeliveryTransport, Sendable {
        let requests = Mutex<[TransportRequest]>([])
        let answer: @Sendable (TransportRequest) -> TransportResponse

        init(answer: @escaping @Sendable (TransportRequest) -> TransportResponse) {
            self.answer = answer
        }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            requests.withLock { $0.append(request) }
            return answer(request)
        }

        var feedRequests: [TransportRequest] { requests.withLock { $0.filter { $0.url.path.hasSuffix("/api/v1/feed") } } }
        var uploads: [TransportRequest] { requests.withLock { $0.filter { $0.url.path.hasSuffix("/api/v1/events") } } }
    }

    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static func feed(_ campaigns: [FeedCampaign], minInterval: Int = 0) throws -> TransportResponse {
        let feed = Feed(app: .init(id: 1, name: "Shop", minIntervalSeconds: minInterval), generatedAt: start, pollAfterSeconds: 60, campaigns: campaigns)
        return TransportResponse(status: 200, headers: ["ETag": "\"f\(campaigns.count)\""], body: try CampaignJSON.encoder().encode(feed))
    }

    static let sale = FeedCampaign(id: 1, triggers: [Trigger(event: "buy")], frequency: Frequency(type: .always),
                                   message: Message(layout: .modal, title: .init(text: "Sale")))

    static func uploaded(_ count: Int) -> TransportResponse {
        TransportResponse(status: 200, headers: [:], body: Data(#"{"accepted": \#(count), "duplicates": 0, "rejected": []}"#.utf8))
    }

    /// Herald's answer to an upload: every event of the batch accepted.
    static func acknowledging(_ request: TransportRequest) -> TransportResponse {
        struct Batch: Decodable { let events: [OutgoingEvent] }
        let batch = try? CampaignJSON.decoder().decode(Batch.self, from: request.body ?? Data())
        return uploaded(batch?.events.count ?? 0)
    }

    /// A client on `server`, with a clock the test moves and a fixed sequence for the jitter.
    static func client(
        _ server: ScriptedServer, folder: TemporaryFolder, clock: TestClock = TestClock(start), random: [Double] = [0.5],
        dataCollection: Bool = true
    ) throws -> DeliveryClient {
        let draws = Mutex(random)
        return try DeliveryClient(configuration: DeliveryConfiguration(
            serverURL: URL(string: "https://herald.test/")!, apiKey: "hrld_first", storageFolder: folder.url,
            device: DeviceContext(platform: .ios, appVersion: "2.4.0", language: "en", country: "US"), transport: server,
            clock: { clock.now }, random: { draws.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] } },
            installationID: "iid-secret-7", automaticDataCollectionByDefault: dataCollection))
    }

    /// Shows the sale and reports an impression and a dismissal: two events.
    static func showSale(_ client: DeliveryClient, renderer: RecordingRenderer) async throws {
        await client.setDisplayDelegate(renderer)
        #expect(await client.triggerEvent("buy") == .displayed(1))
        let message = try #require(await client.currentMessage)
        await client.impressionDetected(message)
        await client.messageDismissed(message, type: .click)
    }

    @Test("Backoff: 1, 2, 4 … seconds, at most 5 minutes, each within ±20 % as the random source says")
    func backoffBounds() {
        var backoff = Backoff()
        func same(_ a: [Double], _ b: [Double]) -> Bool { a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) < 1e-9 } }
        let lowest = (0..<12).map { _ in backoff.delayAfterFailure(random: 0, retryAfter: nil) }
        #expect(same(lowest, [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 240, 240, 240]), "\(lowest)")
        backoff.reset()
        let highest = (0..<12).map { _ in backoff.delayAfterFailure(random: 1, retryAfter: nil) }
        #expect(same(highest, [1.2, 2.4, 4.8, 9.6, 19.2, 38.4, 76.8, 153.6, 307.2, 360, 360, 360]), "\(highest)")
        backoff.reset()
        #expect(backoff.delayAfterFailure(random: 0.5, retryAfter: nil) == 1)
        #expect(backoff.delayAfterFailure(random: .nan, retryAfter: nil) == 2, "a broken random source means no jitter, not a trap")
        #expect(abs(backoff.delayAfterFailure(random: 7, retryAfter: nil) - 4.8) < 1e-9, "out of range is clamped")
        #expect(backoff.delayAfterFailure(random: 0.5, retryAfter: 30) == 30, "never sooner than Retry-After")
    }

    @Test("Retry-After: seconds or an HTTP date (all three forms), capped at a day; anything else is ignored")
    func retryAfterHeader() {
        let now = Self.start
        #expect(RetryAfter.delay("120", now: now) == 120)
        #expect(RetryAfter.delay(" 0 ", now: now) == 0)
        #expect(RetryAfter.delay(String(repeating: "9", count: 40), now: now) == RetryAfter.longest)
        let in90 = now.addingTimeInterval(90)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            #expect(RetryAfter.delay(formatter.string(from: in90), now: now) == 90, "\(formatter.string(from: in90))")
        }
        #expect(RetryAfter.delay("Sun Nov  6 08:49:37 1994", now: now) == 0, "a date in the past: go ahead")
        for garbage in [nil, "", "soon", "-5", "1.5", "12 s", String(repeating: "1", count: 65)] {
            #expect(RetryAfter.delay(garbage, now: now) == nil, "\(garbage ?? "nil")")
        }
    }

    @Test("A Retry-After of text outside ASCII is no date to the delivery client, instead of trapping in DateFormatter (found by the push client's generated answers)")
    func retryAfterOutsideASCII() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for header in [" \u{200D}\u{202B}\u{8F644}", "Sun, 06 Nov 2027 08:49:37 GMT\u{202B}", "\u{0660}\u{0661}", "日曜日"] {
            #expect(RetryAfter.delay(header, now: now) == nil, "\(header)")
        }
        #expect(RetryAfter.delay("Tue, 01 Jan 2030 00:00:00 GMT", now: now) == 86_400, "an ASCII date still reads (capped at a day)")
    }

    @Test("A failed feed fetch backs off with jitter, and waits for the server's Retry-After (seconds or a date); the last good feed stays")
    func feedBackoffAndRetryAfter() async throws {
        let answers = Mutex<[TransportResponse]>([
            try Self.feed([Self.sale]),
            TransportResponse(status: 500, headers: [:], body: Data()),
            TransportResponse(status: 502, headers: [:], body: Data()),
            TransportResponse(status: 503, headers: ["Retry-After": "120"], body: Data()),
            TransportResponse(status: 429, headers: ["retry-after": "Fri, 31 Dec 2027 23:59:59 GMT"], body: Data()),
        ])
        let server = ScriptedServer { _ in answers.withLock { $0.removeFirst() } }
        let folder = try TemporaryFolder()
        let clock = TestClock(Self.start)
        let client = try Self.client(server, folder: folder, clock: clock, random: [0.0, 1.0, 0.5, 0.5])
        #expect(await client.refreshFeed() == .updated)
        #expect(await client.nextFeedRefresh == clock.now.addingTimeInterval(60), "pollAfterSeconds")

        guard case .failed = await client.refreshFeed() else { Issue.record("a 500 is a failure"); return }
        #expect(await client.nextFeedRefresh == clock.now.addingTimeInterval(0.8), "1 s − 20 %")
        await client.refreshFeedIfDue()
        #expect(server.feedRequests.count == 2, "not due yet")
        clock.advance(0.8)
        await client.refreshFeedIfDue()
        #expect(await client.nextFeedRefresh == clock.now.addingTimeInterval(2.4), "2 s + 20 %")
        #expect(await client.refreshFeed() == .failed("the server answered 503"))
        #expect(await client.nextFeedRefresh == clock.now.addingTimeInterval(120), "Retry-After beats 4 s")
        #expect(await client.refreshFeed() == .failed("the server answered 429"))
        let date = try #require(RetryAfter.httpDate("Fri, 31 Dec 2027 23:59:59 GMT", now: clock.now))
        #expect(await client.nextFeedRefresh == clock.now.addingTimeInterval(min(date.timeIntervalSince(clock.now), RetryAfter.longest)))
        #expect(await client.campaigns == [Self.sale], "the last good feed stays in use")
    }

    @Test("A 401 or 403 stops polling and uploading, tells the app once, and nothing is sent until the app gives a key again")
    func unauthorizedStops() async throws {
        let refusing = Mutex(401)
        let server = ScriptedServer { request in
            if request.headers["Authorization"] == "Bearer hrld_second" {
                return request.url.path.hasSuffix("/feed") ? (try? Self.feed([Self.sale])) ?? Self.uploaded(0) : Self.uploaded(2)
            }
            return TransportResponse(status: refusing.withLock { $0 }, headers: [:], body: Data(#"{"error": {"code": "unauthorized"}}"#.utf8))
        }
        let folder = try TemporaryFolder()
        let client = try Self.client(server, folder: folder)
        let app = RecordingAppDelegate()
        await client.setDelegate(app)

        #expect(await client.refreshFeed() == .stopped(401))
        #expect(await client.refreshFeed() == .stopped(401))
        #expect(await client.flushEvents() == .stopped(401))
        #expect(server.requests.withLock { $0.count } == 1, "nothing more is sent")
        #expect(app.stops.withLock { $0 } == [401])

        await client.resume(apiKey: "hrld_second")
        #expect(await client.refreshFeed() == .updated)
        let renderer = RecordingRenderer()
        try await Self.showSale(client, renderer: renderer)
        #expect(await client.flushEvents() == .uploaded(accepted: 2, duplicates: 0, rejected: 0))

        // A key that loses its events:write scope stops the uploads too
        refusing.withLock { $0 = 403 }
        await client.resume(apiKey: "hrld_third")
        try await Self.showSale(client, renderer: renderer)
        #expect(await client.flushEvents() == .stopped(403))
        #expect(await client.queuedEvents.count == 2, "kept for when a key works again")
        #expect(app.stops.withLock { $0 } == [401, 403])
    }

    @Test("Uploads back off like feed fetches and honour Retry-After; a batch refused as a whole is dropped")
    func uploadBackoff() async throws {
        let answers = Mutex<[TransportResponse]>([
            TransportResponse(status: 503, headers: ["Retry-After": "30"], body: Data()),
            TransportResponse(status: 500, headers: [:], body: Data()),
            TransportResponse(status: 422, headers: [:], body: Data()),
        ])
        let server = ScriptedServer { request in
            request.url.path.hasSuffix("/feed") ? (try? Self.feed([Self.sale])) ?? Self.uploaded(0) : answers.withLock { $0.removeFirst() }
        }
        let folder = try TemporaryFolder()
        let clock = TestClock(Self.start)
        let client = try Self.client(server, folder: folder, clock: clock, random: [0.0])
        #expect(await client.refreshFeed() == .updated)
        try await Self.showSale(client, renderer: RecordingRenderer())

        #expect(await client.flushEvents() == .failed("the server answered 503"))
        #expect(await client.nextUploadAttempt == clock.now.addingTimeInterval(30))
        #expect(await client.flushEvents() == .idle)
        clock.advance(30)
        #expect(await client.flushEvents() == .failed("the server answered 500"))
        #expect(await client.nextUploadAttempt == clock.now.addingTimeInterval(1.6), "the second failure: 2 s − 20 %")
        clock.advance(2)
        #expect(await client.flushEvents() == .uploaded(accepted: 0, duplicates: 0, rejected: 2))
        #expect(await client.queuedEvents.isEmpty, "refused as a whole: it would never pass")
        #expect(server.uploads.count == 3)
    }

    @Test("The event queue file grows by one line per event and is rewritten only when an upload is acknowledged")
    func appendOnlyQueue() async throws {
        let server = ScriptedServer { request in
            request.url.path.hasSuffix("/feed") ? (try? Self.feed([Self.sale])) ?? Self.uploaded(0) : Self.acknowledging(request)
        }
        let folder = try TemporaryFolder()
        let client = try Self.client(server, folder: folder)
        #expect(await client.refreshFeed() == .updated)
        let renderer = RecordingRenderer()
        await client.setDisplayDelegate(renderer)
        let file = folder.url.appendingPathComponent("events.jsonl")
        func lines() throws -> [String] { try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init) }

        #expect(await client.triggerEvent("buy") == .displayed(1))
        let message = try #require(await client.currentMessage)
        var previous = Data()
        for count in 1...6 {
            await client.recordConversion("purchase_\(count)", for: message)
            let now = try Data(contentsOf: file)
            #expect(now.starts(with: previous), "what was written stays: appended, not rewritten")
            #expect(try lines().count == count)
            previous = now
        }
        #expect(await client.queue.rewrites == 0)
        let ids = await client.queuedEvents.map(\.id)
        #expect(try lines().map { try CampaignJSON.decoder().decode(OutgoingEvent.self, from: Data($0.utf8)).id } == ids)

        #expect(await client.flushEvents() == .uploaded(accepted: 6, duplicates: 0, rejected: 0))
        #expect(await client.queue.rewrites == 1, "compacted once, when the batch was acknowledged")
        #expect(try lines().isEmpty)
    }

    @Test("At most 1,000 events wait: the oldest is dropped and counted, the file is compacted at twice the bound, and a restart reads the newest 1,000")
    func boundedQueue() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("events.jsonl")
        var queue = EventQueue(file: file, limit: 1_000)
        func event(_ index: Int) -> OutgoingEvent {
            OutgoingEvent(id: "e\(index)", type: .impression, campaignId: 1, occurredAt: Self.start.addingTimeInterval(Double(index)), platform: "ios")
        }
        for index in 0..<1_000 { try queue.append(event(index)) }
        #expect(queue.events.count == 1_000 && queue.dropped == 0 && queue.rewrites == 0)
        try queue.append(event(1_000))
        #expect(queue.events.count == 1_000)
        #expect(queue.dropped == 1)
        #expect(queue.events.first?.id == "e1", "the oldest went")
        #expect(queue.rewrites == 0, "still appended: the dropped line is skipped when read")
        #expect(EventQueue(file: file, limit: 1_000).events.map(\.id) == queue.events.map(\.id))

        for index in 1_001..<2_000 { try queue.append(event(index)) }
        #expect(queue.rewrites == 0)
        try queue.append(event(2_000))
        #expect(queue.rewrites == 1, "compacted once the file would hold twice the bound")
        #expect(queue.dropped == 1_001)
        let reread = EventQueue(file: file, limit: 1_000)
        #expect(reread.events.map(\.id) == (1_001...2_000).map { "e\($0)" })

        // A line cut short by a crash is skipped, and the next write puts the file right
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"id":"e2001","ty"#.utf8))
        try handle.close()
        var recovered = EventQueue(file: file, limit: 1_000)
        #expect(recovered.events.count == 1_000)
        try recovered.append(event(2_002))
        #expect(recovered.rewrites == 1)
        #expect(EventQueue(file: file, limit: 1_000).events.last?.id == "e2002")
    }

    @Test("A failure to save frequency state or an event is reported to the app, not swallowed; the event stays queued in memory")
    func storageFailuresReported() async throws {
        let server = ScriptedServer { _ in (try? Self.feed([Self.sale])) ?? Self.uploaded(0) }
        let folder = try TemporaryFolder()
        let client = try Self.client(server, folder: folder)
        let app = RecordingAppDelegate()
        await client.setDelegate(app)
        #expect(await client.refreshFeed() == .updated)
        // A directory where the files should be: every write to them fails
        for name in ["state.json", "events.jsonl"] {
            let path = folder.url.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: path)
            try FileManager.default.createDirectory(at: path.appendingPathComponent("blocked"), withIntermediateDirectories: true)
        }
        let renderer = RecordingRenderer()
        await client.setDisplayDelegate(renderer)
        #expect(await client.triggerEvent("buy") == .displayed(1))
        let message = try #require(await client.currentMessage)
        await client.impressionDetected(message)
        let failures = app.storageFailures.withLock { $0 }
        #expect(failures.map(\.part) == [.state, .state, .events], "the last display, the impression, the event")
        #expect(failures.allSatisfy { !$0.reason.isEmpty })
        #expect(await client.queuedEvents.map(\.type) == [.impression])
    }

    @Test("With data collection off no installation id leaves the device: not on feed requests, events or image requests")
    func noInstallationIDOnTheWire() async throws {
        let withImage = FeedCampaign(id: 2, triggers: [Trigger(event: "look")], frequency: Frequency(type: .always),
                                     message: Message(layout: .imageOnly, imageUrl: "https://img.example/a.png"))
        let server = ScriptedServer { request in
            if request.url.path.hasSuffix("/feed") { return (try? Self.feed([Self.sale, withImage])) ?? Self.uploaded(0) }
            if request.url.path.hasSuffix("/events") { return Self.uploaded(4) }
            return TransportResponse(status: 200, headers: [:], body: Data([1, 2, 3]))
        }
        let folder = try TemporaryFolder()
        let client = try Self.client(server, folder: folder, dataCollection: false)
        #expect(await client.refreshFeed() == .updated)
        await client.waitForImageLoads()
        try await Self.showSale(client, renderer: RecordingRenderer())
        await client.appDidEnterBackground()

        let sent = server.requests.withLock { $0 }
        #expect(Set(sent.map(\.url.path)) == ["/api/v1/feed", "/api/v1/events", "/a.png"])
        for request in sent {
            let everything = request.headers.map { "\($0.key): \($0.value)" }.joined(separator: "\n") + String(decoding: request.body ?? Data(), as: UTF8.self)
            #expect(!everything.contains("iid-secret-7"), "\(request.method) \(request.url)")
            #expect(request.headers["X-Installation-Id"] == nil)
        }
        // The user's choice, once made, wins over the app's default and persists
        try await client.setAutomaticDataCollectionEnabled(true)
        let again = try Self.client(server, folder: folder, dataCollection: false)
        #expect(await again.automaticDataCollectionEnabled)
        await again.refreshFeed()
        #expect(server.feedRequests.last?.headers["X-Installation-Id"] == "iid-secret-7")
    }
}
