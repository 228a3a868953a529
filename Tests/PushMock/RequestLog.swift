import Foundation
import NIOConcurrencyHelpers

/// Every provider request in arrival order (the first `limit` kept, the rest counted), the answers'
/// statuses, and the requests held unanswered while holding is on.
final class RequestLog: Sendable {
    /// Held requests past this many are recorded and left unanswered, never queued.
    static let heldLimit = 100_000
    static let recordedBodyLimit = 65_536

    typealias Respond = @Sendable (MockResponse) -> Void

    private struct Held {
        var request: MockRequest
        var slot: Slot?
        var respond: Respond
    }

    /// Where a request's status goes: its record, unless a reset cleared the records since.
    struct Slot {
        var index: Int
        var generation: Int
    }

    private struct State {
        var records: [RecordedRequest] = []
        var stats = MockStats()
        var generation = 0
        var held: [Held] = []
    }

    let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Records `request`; answers it through `respond` with `answer`'s response, now or at `release()`.
    func arrive(_ request: MockRequest, answer: @Sendable (MockRequest) -> MockResponse, respond: @escaping Respond) {
        let arrival: (slot: Slot?, held: Bool) = state.withLockedValue { state in
            state.stats.received += 1
            state.stats.byProvider[request.provider, default: 0] += 1
            var slot: Slot?
            if state.records.count < limit {
                slot = Slot(index: state.records.count, generation: state.generation)
                state.records.append(Self.record(request))
                state.stats.recorded += 1
            } else {
                state.stats.notRecorded += 1
            }
            guard state.stats.holding else { return (slot, false) }
            if state.held.count < Self.heldLimit {
                state.held.append(Held(request: request, slot: slot, respond: respond))
                state.stats.held = state.held.count
            }
            return (slot, true)
        }
        if arrival.held { return }
        finish(answer(request), slot: arrival.slot, respond: respond)
    }

    /// Stops answering: requests from now on wait for `release()`.
    func hold() {
        state.withLockedValue { $0.stats.holding = true }
    }

    /// Answers the held requests, in arrival order, and answers at once from now on.
    func release(answer: @Sendable (MockRequest) -> MockResponse) {
        let held = state.withLockedValue { state in
            state.stats.holding = false
            state.stats.held = 0
            defer { state.held = [] }
            return state.held
        }
        for waiting in held {
            finish(answer(waiting.request), slot: waiting.slot, respond: waiting.respond)
        }
    }

    /// Forgets the records and counts; holding stays as it was, held requests stay held.
    func reset() {
        state.withLockedValue { state in
            state.records = []
            state.generation += 1
            state.stats = MockStats(held: state.held.count, holding: state.stats.holding)
        }
    }

    func records() -> [RecordedRequest] {
        state.withLockedValue { $0.records }
    }

    func stats() -> MockStats {
        state.withLockedValue { $0.stats }
    }

    private func finish(_ response: MockResponse, slot: Slot?, respond: Respond) {
        state.withLockedValue { state in
            state.stats.byStatus[String(response.status), default: 0] += 1
            if let slot, slot.generation == state.generation, slot.index < state.records.count {
                state.records[slot.index].status = response.status
            }
        }
        respond(response)
    }

    private static func record(_ request: MockRequest) -> RecordedRequest {
        var headers: [String: String] = [:]
        for (name, value) in request.headers {
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        return RecordedRequest(
            provider: request.provider, method: request.method, path: request.path, headers: headers,
            body: String(decoding: request.body.prefix(recordedBodyLimit), as: UTF8.self),
            receivedAt: request.receivedAt.timeIntervalSince1970, httpVersion: request.httpVersion, status: nil)
    }
}
