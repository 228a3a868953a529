import Metrics
import Dispatch
import Synchronization

/// Writes concurrent submissions together. The first caller to arrive while no write is under way
/// leads: it writes everything queued by then (its own submission included) in one call, so in one
/// transaction and one commit, then hands the lead to the first caller who queued meanwhile. Each
/// caller gets the outcome of its own submission; if the write fails, every submission in it fails.
package final class GroupCommit<Input: Sendable, Output: Sendable>: Sendable {
    /// One caller's submission. Its mutable fields are written by the leader before it signals, and
    /// read by the owner after the signal, so the semaphore orders every access.
    private final class Ticket: @unchecked Sendable {
        let input: Input
        var outcome: Result<Output, any Error>?
        var leads = false
        let signal = DispatchSemaphore(value: 0)

        init(_ input: Input) {
            self.input = input
        }
    }

    private struct State {
        var queue: [Ticket] = []
        var leaderActive = false
    }

    private let state = Mutex(State())

    package init() {}

    /// `write` gets the inputs of a group in arrival order and returns one output per input.
    /// Each submission's time from arrival to its outcome (queueing behind a write included), and each
    /// group's size, recorded as `herald_group_commit_wait_seconds` and `herald_group_commit_size`.
    package func submit(_ input: Input, write: ([Input]) throws -> [Output]) throws -> Output {
        let arrived = ContinuousClock.now
        defer { Timer(label: "herald_group_commit_wait_seconds").record(duration: ContinuousClock.now - arrived) }
        let ticket = Ticket(input)
        let leads = state.withLock { state in
            state.queue.append(ticket)
            if state.leaderActive { return false }
            state.leaderActive = true
            return true
        }
        if !leads {
            ticket.signal.wait()
            if !ticket.leads, let outcome = ticket.outcome { return try outcome.get() }
        }

        let group = state.withLock { state in
            defer { state.queue = [] }
            return state.queue
        }
        Recorder(label: "herald_group_commit_size").record(group.count)
        let outcomes: [Result<Output, any Error>]
        do {
            let outputs = try write(group.map(\.input))
            precondition(outputs.count == group.count, "one output per input")
            outcomes = outputs.map { .success($0) }
        } catch {
            outcomes = group.map { _ in .failure(error) }
        }
        let next = state.withLock { state -> Ticket? in
            guard let first = state.queue.first else {
                state.leaderActive = false
                return nil
            }
            return first
        }
        var own: Result<Output, any Error>?
        for (member, outcome) in zip(group, outcomes) {
            if member === ticket {
                own = outcome
            } else {
                member.outcome = outcome
                member.signal.signal()
            }
        }
        if let next {
            next.leads = true
            next.signal.signal()
        }
        return try own!.get()
    }
}
