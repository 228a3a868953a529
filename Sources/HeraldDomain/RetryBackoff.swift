import Foundation

/// How long to wait after the `failures`-th failure in a row, for everything Herald and its clients
/// retry (feed fetches, event uploads, registrations, push sends): 1 s, 2 s, 4 s … at most 5 minutes,
/// with ±20 % jitter so that a fleet that failed together does not retry together.
public enum RetryBackoff {
    public static let first: TimeInterval = 1
    public static let maximum: TimeInterval = 300
    public static let jitter = 0.2

    /// `random` is in 0..<1; anything else counts as the middle.
    public static func seconds(afterFailure failures: Int, random: Double) -> TimeInterval {
        // 2^9 s already passes the maximum: a larger shift would only risk overflow.
        let doublings = min(max(failures, 1), 10) - 1
        let base = min(maximum, first * Double(1 << doublings))
        let unit = random.isFinite ? min(max(random, 0), 1) : 0.5
        return base * (1 - jitter + 2 * jitter * unit)
    }
}
