import Foundation
import HeraldDomain

/// How long to wait after failed feed fetches or uploads: `RetryBackoff`'s wait for the failures in a
/// row, and never sooner than the server's `Retry-After`.
struct Backoff: Sendable {
    private(set) var failures = 0

    /// The wait after one more failure (`RetryBackoff`). `random` is in 0..<1 (the configuration's random source).
    mutating func delayAfterFailure(random: Double, retryAfter: TimeInterval?) -> TimeInterval {
        failures = min(failures + 1, 10)
        return max(RetryBackoff.seconds(afterFailure: failures, random: random), retryAfter ?? 0)
    }

    mutating func reset() {
        failures = 0
    }
}
