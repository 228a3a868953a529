import Foundation
import HeraldStorage

/// Slows password guessing without locking the team out. Each account gets a few free failures, then
/// every further failure doubles its wait (capped); an address gets a far higher allowance, which a
/// guessing run uses up and an office does not; and a browser where the account signed in before is
/// counted on its own, so failures elsewhere never keep its user out. An attempt is counted as a
/// failure before its password is checked, in one transaction, so racing attempts get no extra checks.
public struct LoginThrottle: Sendable {
    public struct Policy: Sendable {
        /// Failures an account may have before each further one makes it wait.
        public var freeFailures = 5
        /// The wait after the first failure past the free ones; each further failure doubles it…
        public var firstWait: TimeInterval = 30
        /// …up to this.
        public var longestWait: TimeInterval = 15 * 60
        /// An account's failures are forgotten this long after its last one, and at a successful sign-in.
        public var forgetAfter: TimeInterval = 60 * 60
        /// Failures from one address, against any accounts, after which it waits…
        public var addressFailures = 100
        /// …until this long after its first counted failure.
        public var addressWindow: TimeInterval = 15 * 60

        public init() {}

        /// How long after its last failure an account with `failures` failures waits; nil while they are free.
        func wait(after failures: Int) -> TimeInterval? {
            guard failures >= freeFailures else { return nil }
            // Past 2^20 the cap has long been reached; the bound keeps the power finite.
            return min(firstWait * pow(2, Double(min(failures - freeFailures, 20))), longestWait)
        }
    }

    let store: any LoginThrottleStore
    let policy: Policy

    /// Counts an attempt as a failure for each of `keys` before its password is checked, or, when one of
    /// them must wait, counts nothing and says how long.
    func reserve(_ keys: [LoginThrottleKey], now: Date) throws -> TimeInterval? {
        try store.update(keys, forgetBefore: forgetBefore(now)) { failures in
            let waits = keys.compactMap { key in failures[key].flatMap { wait(for: key, $0, now: now) } }
            if let longest = waits.max() { return longest }
            for key in keys {
                if let counted = failures[key], isCurrent(counted, for: key, now: now) {
                    failures[key] = LoginFailures(count: counted.count + 1, first: counted.first, last: now)
                } else {
                    failures[key] = LoginFailures(count: 1, first: now, last: now)
                }
            }
            return nil
        }
    }

    /// The password was right, so the reserved attempt was no failure: the account (or browser, or session)
    /// starts afresh, and the address gets its attempt back.
    func succeeded(_ keys: [LoginThrottleKey], now: Date) throws {
        try store.update(keys, forgetBefore: forgetBefore(now)) { failures in
            for key in keys {
                guard key.kind == .address, var counted = failures[key] else {
                    failures[key] = nil
                    continue
                }
                counted.count -= 1
                failures[key] = counted.count > 0 ? counted : nil
            }
        }
    }

    /// What a refused person reads, in their language: the wait in whole minutes, rounded up.
    static func message(waiting wait: TimeInterval, _ localizer: Localizer) -> String {
        localizer.plural("accounts.throttle.wait", count: minutes(wait))
    }

    /// Whole minutes, at least one; a wait beyond a day (never set by a policy) is said as a day.
    static func minutes(_ wait: TimeInterval) -> Int {
        guard wait.isFinite else { return 1440 }
        return min(1440, max(1, Int((min(wait, 86_400) / 60).rounded(.up))))
    }

    /// The `Retry-After` value: whole seconds, rounded up.
    static func retryAfter(_ wait: TimeInterval) -> String {
        String(Int(wait.rounded(.up)))
    }

    private func wait(for key: LoginThrottleKey, _ failures: LoginFailures, now: Date) -> TimeInterval? {
        guard isCurrent(failures, for: key, now: now) else { return nil }
        let until: Date
        if key.kind == .address {
            guard failures.count >= policy.addressFailures else { return nil }
            until = failures.first.addingTimeInterval(policy.addressWindow)
        } else {
            guard let wait = policy.wait(after: failures.count) else { return nil }
            until = failures.last.addingTimeInterval(wait)
        }
        return until > now ? until.timeIntervalSince(now) : nil
    }

    /// Whether counted failures still count: an address's window is still open, an account's are not yet forgotten.
    private func isCurrent(_ failures: LoginFailures, for key: LoginThrottleKey, now: Date) -> Bool {
        key.kind == .address
            ? now.timeIntervalSince(failures.first) < policy.addressWindow
            : now.timeIntervalSince(failures.last) < policy.forgetAfter
    }

    private func forgetBefore(_ now: Date) -> Date {
        now.addingTimeInterval(-max(policy.forgetAfter, policy.addressWindow))
    }
}
