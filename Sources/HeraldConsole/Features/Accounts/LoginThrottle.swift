import Foundation
import HeraldStorage

/// Refuses logins for an account or an address after too many recent failures.
public struct LoginThrottle: Sendable {
    public struct Policy: Sendable {
        public var maxFailures = 5
        public var window: TimeInterval = 5 * 60
        public init() {}
    }

    let store: LoginFailureStore
    let policy: Policy

    /// How long until another attempt is allowed; nil when one is allowed now.
    func waitBeforeNextAttempt(email: String, address: String, now: Date) throws -> TimeInterval? {
        let since = now.addingTimeInterval(-policy.window)
        let waits = try [store.failures(email: email, since: since), store.failures(address: address, since: since)]
            .compactMap { failures -> TimeInterval? in
                guard failures.count >= policy.maxFailures else { return nil }
                // Attempts resume when the failure that tipped the count leaves the window.
                let tipping = failures[failures.count - policy.maxFailures]
                return tipping.addingTimeInterval(policy.window).timeIntervalSince(now)
            }
        return waits.max()
    }

    func recordFailure(email: String, address: String, now: Date) throws {
        try store.record(email: email, address: address, at: now)
    }

    func recordSuccess(email: String, now: Date) throws {
        try store.clear(email: email, olderThan: now.addingTimeInterval(-policy.window))
    }
}
