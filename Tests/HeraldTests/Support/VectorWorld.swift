import Foundation
import HeraldDelivery
import HeraldDomain
import Synchronization

/// The world a conformance vector's client lives in: a server that answers with the vector's feed and
/// images and keeps what is uploaded, and a renderer that records what it is given.

/// Serves the vector's feed (with an ETag, and 304 for it), answers uploads as Herald does, and serves
/// images as the vector says: `ok`, `fail`, or `pending` (held until `settle`).
final class VectorTransport: DeliveryTransport, Sendable {
    private struct State {
        var feed = Data()
        var feedRevision = 0
        var images: [String: String]
        var held: [String: [CheckedContinuation<TransportResponse, Never>]] = [:]
        var uploaded: [OutgoingEvent] = []
        var uploadedDiscards: [OutgoingDiscard] = []
        var requests: [TransportRequest] = []
    }

    private let state: Mutex<State>

    init(images: [String: String]) {
        state = Mutex(State(images: images))
    }

    func setFeed(_ feed: Data) {
        state.withLock {
            $0.feed = feed
            $0.feedRevision += 1
        }
    }

    /// Every event the server received, in order.
    var uploaded: [OutgoingEvent] { state.withLock { $0.uploaded } }
    /// Every discard count the server received, in order, each time it was sent.
    var uploadedDiscards: [OutgoingDiscard] { state.withLock { $0.uploadedDiscards } }
    var requests: [TransportRequest] { state.withLock { $0.requests } }

    /// Lets a pending image finish: loaded, or failed; later requests for it get the same.
    func settle(_ url: String, ok: Bool) {
        let waiting = state.withLock { state in
            state.images[url] = ok ? "ok" : "fail"
            return state.held.removeValue(forKey: url) ?? []
        }
        for continuation in waiting { continuation.resume(returning: Self.image(ok: ok)) }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        state.withLock { $0.requests.append(request) }
        if request.url.path.hasSuffix("/api/v1/feed") {
            return state.withLock { state in
                let etag = "\"v\(state.feedRevision)\""
                if request.headers["If-None-Match"] == etag { return TransportResponse(status: 304, headers: ["ETag": etag], body: Data()) }
                return TransportResponse(status: 200, headers: ["ETag": etag, "Content-Type": "application/json"], body: state.feed)
            }
        }
        if request.url.path.hasSuffix("/api/v1/events") {
            struct Batch: Decodable {
                let events: [OutgoingEvent]
                let discards: [OutgoingDiscard]?
            }
            let batch = try CampaignJSON.decoder().decode(Batch.self, from: request.body ?? Data())
            state.withLock {
                $0.uploaded += batch.events
                $0.uploadedDiscards += batch.discards ?? []
            }
            let answer = #"{"accepted": \#(batch.events.count), "duplicates": 0, "rejected": []}"#
            return TransportResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(answer.utf8))
        }
        let url = request.url.absoluteString
        return await withCheckedContinuation { continuation in
            let behaviour = state.withLock { state in
                let behaviour = state.images[url] ?? "ok"
                if behaviour == "pending" { state.held[url, default: []].append(continuation) }
                return behaviour
            }
            if behaviour != "pending" { continuation.resume(returning: Self.image(ok: behaviour == "ok")) }
        }
    }

    /// A PNG signature and a few bytes: what a renderer would decode is not the client's business.
    private static func image(ok: Bool) -> TransportResponse {
        ok ? TransportResponse(status: 200, headers: ["Content-Type": "image/png"], body: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]))
            : TransportResponse(status: 404, headers: [:], body: Data("not found".utf8))
    }
}

/// A renderer that records what the client asks of it, step by step, and answers the display decision.
final class RecordingRenderer: DeliveryDisplayDelegate, Sendable {
    struct Step {
        var shown: [InAppMessage] = []
        var withdrawn: [InAppMessage] = []
        var noMatch: [String] = []
    }

    private let step = Mutex(Step())
    private let everShown = Mutex<[InAppMessage]>([])
    private let answer = Mutex(DisplayDecision.show)

    func display(_ message: InAppMessage) {
        step.withLock { $0.shown.append(message) }
        everShown.withLock { $0.append(message) }
    }

    func withdraw(_ message: InAppMessage) { step.withLock { $0.withdrawn.append(message) } }
    func noMatchingTrigger(_ event: String) { step.withLock { $0.noMatch.append(event) } }
    func displayDecision(for message: InAppMessage) -> DisplayDecision { answer.withLock { $0 } }

    func answer(_ decision: DisplayDecision) { answer.withLock { $0 = decision } }

    /// What happened since the last call, starting afresh.
    func takeStep() -> Step { step.withLock { step in defer { step = Step() }; return step } }

    /// The message most recently handed over, in any step.
    var lastShown: InAppMessage? { everShown.withLock { $0.last } }
}

/// An app delegate that records what delivery tells the app.
final class RecordingAppDelegate: DeliveryDelegate, Sendable {
    let stops = Mutex<[Int]>([])
    let storageFailures = Mutex<[StorageFailure]>([])

    func deliveryStopped(status: Int) { stops.withLock { $0.append(status) } }
    func deliveryStorageFailed(_ failure: StorageFailure) { storageFailures.withLock { $0.append(failure) } }
}
