import Foundation
@testable import HeraldDelivery
import HeraldDomain
import Synchronization
import TestSupport
import Testing

/// What the vectors leave to the client's own tests about discard counts: uploads that fail or are refused,
/// the bound on the counts waiting, and the file they survive a restart in.
@Suite("Delivery client: discard counts")
struct DeliveryDiscardTests {
    typealias Server = DeliveryFailureTests.ScriptedServer

    struct Upload: Decodable {
        let events: [OutgoingEvent]
        let discards: [OutgoingDiscard]?
    }

    static func uploads(_ server: Server) throws -> [Upload] {
        try server.uploads.map { try CampaignJSON.decoder().decode(Upload.self, from: $0.body ?? Data()) }
    }

    /// Shows the sale, then fires `throttled` more triggers inside the minimum interval: each a `throttled` discard.
    /// Returns the renderer, which the client holds weakly: a trigger with none stacks instead.
    @discardableResult
    static func throttle(_ client: DeliveryClient, _ throttled: Int) async throws -> RecordingRenderer {
        let renderer = RecordingRenderer()
        try await DeliveryFailureTests.showSale(client, renderer: renderer)
        for _ in 0..<throttled { #expect(await client.triggerEvent("buy") == .throttled(1)) }
        return renderer
    }

    @Test("A failed upload sends the same counts again under the same ids, unchanged; discards meanwhile start new counts; a 4xx drops them")
    func retriesSendTheSameCounts() async throws {
        let answers = Mutex<[Int]>([503, 200, 422])
        let server = Server { request in
            if request.url.path.hasSuffix("/feed") { return (try? DeliveryFailureTests.feed([DeliveryFailureTests.sale], minInterval: 30)) ?? DeliveryFailureTests.uploaded(0) }
            let status = answers.withLock { $0.removeFirst() }
            return status == 200 ? DeliveryFailureTests.acknowledging(request) : TransportResponse(status: status, headers: [:], body: Data())
        }
        let folder = try TemporaryFolder()
        let clock = TestClock(DeliveryFailureTests.start)
        let client = try DeliveryFailureTests.client(server, folder: folder, clock: clock, random: [0.0])
        #expect(await client.refreshFeed() == .updated)
        // Given three throttled triggers: one count of 3
        let renderer = try await Self.throttle(client, 3)
        #expect(await client.pendingDiscards.map(\.count) == [3])
        #expect(await client.discards == [.throttled: 3])

        // When the upload fails, and the sale is throttled twice more
        #expect(await client.flushEvents() == .failed("the server answered 503"))
        for _ in 0..<2 { #expect(await client.triggerEvent("buy") == .throttled(1)) }
        // Then the sent count stays 3 and the new discards wait in a count of their own
        let pending = await client.pendingDiscards
        #expect(pending.map(\.count) == [3, 2] && Set(pending.map(\.id)).count == 2)

        // When the retry goes through: the first count is sent again as it was, with the new one
        clock.advance(2)
        #expect(await client.flushEvents() == .uploaded(accepted: 2, duplicates: 0, rejected: 0))
        let sent = try Self.uploads(server)
        #expect(sent.count == 2)
        #expect(sent[0].discards == [pending[0]])
        #expect(sent[1].discards == pending)
        #expect(pending.allSatisfy { $0.reason == .throttled && $0.campaignId == 1 && $0.day == UTCTime.day(clock.now) && $0.installationId == "iid-secret-7" })
        #expect(await client.pendingDiscards.isEmpty)

        // A count refused as a whole (422) is dropped with its batch, never retried
        #expect(await client.triggerEvent("buy") == .throttled(1))
        #expect(await client.flushEvents() == .uploaded(accepted: 0, duplicates: 0, rejected: 0))
        #expect(await client.pendingDiscards.isEmpty)
        #expect(try Self.uploads(server).last?.discards?.map(\.count) == [1])
        withExtendedLifetime(renderer) {}
    }

    @Test("At most the configured number of counts wait: the oldest is dropped and its discards counted; a restart reads the rest back")
    func boundedAndPersisted() async throws {
        let server = Server { request in
            request.url.path.hasSuffix("/feed") ? (try? DeliveryFailureTests.feed([DeliveryFailureTests.sale], minInterval: 30)) ?? DeliveryFailureTests.uploaded(0)
                : TransportResponse(status: 503, headers: [:], body: Data())
        }
        let folder = try TemporaryFolder()
        let clock = TestClock(DeliveryFailureTests.start)
        func client() async throws -> DeliveryClient {
            var configuration = await (try DeliveryFailureTests.client(server, folder: folder, clock: clock)).configuration
            configuration.discardCountLimit = 3
            return try DeliveryClient(configuration: configuration)
        }
        let first = try await client()
        #expect(await first.refreshFeed() == .updated)
        try await Self.throttle(first, 2)
        // A count per UTC day: five days, two of them throttled twice
        for _ in 0..<4 {
            clock.advance(86_400)
            try await Self.throttle(first, 1)
        }
        #expect(await first.pendingDiscards.map(\.count) == [1, 1, 1])
        #expect(await first.droppedDiscardCount == 3, "the first day's 2 and the second's 1")
        let kept = await first.pendingDiscards

        // A restart reads them back from the storage folder
        let second = try await client()
        #expect(await second.pendingDiscards == kept)
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("discards.json").path))
    }

    @Test("With data collection off a count carries no installation id, even after it is turned on; a local message's discards are not counted for upload")
    func dataCollectionAndLocalMessages() async throws {
        let server = Server { request in
            request.url.path.hasSuffix("/feed") ? (try? DeliveryFailureTests.feed([DeliveryFailureTests.sale], minInterval: 30)) ?? DeliveryFailureTests.uploaded(0)
                : DeliveryFailureTests.acknowledging(request)
        }
        let folder = try TemporaryFolder()
        let clock = TestClock(DeliveryFailureTests.start)
        let client = try DeliveryFailureTests.client(server, folder: folder, clock: clock, dataCollection: false)
        #expect(await client.refreshFeed() == .updated)
        let saleRenderer = try await Self.throttle(client, 1)
        try await client.setAutomaticDataCollectionEnabled(true)
        #expect(await client.triggerEvent("buy") == .throttled(1))
        withExtendedLifetime(saleRenderer) {}
        let pending = await client.pendingDiscards
        #expect(pending.map(\.installationId) == [nil, "iid-secret-7"] && pending.map(\.count) == [1, 1])

        // A local message the app's delegate declines is counted on the device only
        let renderer = RecordingRenderer()
        renderer.answer(.discard)
        await client.setDisplayDelegate(renderer)
        clock.advance(31)
        await client.addToStack(InAppMessage(local: Message(layout: .modal, title: .init(text: "Local"))))
        #expect(await client.displayNext() == nil)
        #expect(await client.discards == [.throttled: 2, .delegate: 1])
        #expect(await client.pendingDiscards == pending)
    }
}
