import Synchronization

/// A sleep that can be ended early. `sleep(upTo:)` returns when the time is up, at a `signal()`, at
/// once if a signal came while nobody slept, or when its task is cancelled. The push loop sleeps on one
/// between turns instead of looking at a flag every 25 ms, so an idle server does not wake 40 times a
/// second.
final class WakeUp: Sendable {
    private struct State {
        var pending = false
        var sleeper: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
        var lastID: UInt64 = 0
    }

    private let state = Mutex(State())

    func signal() {
        let sleeper = state.withLock { state in
            defer { state.sleeper = nil }
            if state.sleeper == nil { state.pending = true }
            return state.sleeper
        }
        sleeper?.continuation.resume()
    }

    /// One sleeper at a time (the loop that owns it).
    func sleep(upTo duration: Duration) async {
        let id = state.withLock { state in
            state.lastID &+= 1
            return state.lastID
        }
        let timer = Task {
            try? await Task.sleep(for: duration)
            self.end(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.sleeper = (id, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            end(id)
        }
        timer.cancel()
    }

    /// Ends sleep `id` if it is still asleep: the timer and cancellation may both come, and late.
    private func end(_ id: UInt64) {
        let sleeper = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let sleeper = state.sleeper, sleeper.id == id else { return nil }
            state.sleeper = nil
            return sleeper.continuation
        }
        sleeper?.resume()
    }
}
