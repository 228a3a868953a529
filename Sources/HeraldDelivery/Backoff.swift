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

/// The `Retry-After` header (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
enum RetryAfter {
    /// Longer waits are taken as this: a server asking for more than a day is more likely wrong than
    /// right, and a client that never polls again cannot learn that it was.
    static let longest: TimeInterval = 86_400

    /// The seconds to wait from `now`, or nil when the header is absent or unreadable.
    static func delay(_ header: String?, now: Date) -> TimeInterval? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Up to 64 digits: compare as a double, never convert an unbounded number to Int.
            guard let seconds = Double(text) else { return nil }
            return min(seconds, longest)
        }
        guard let date = httpDate(text) else { return nil }
        return min(max(0, date.timeIntervalSince(now)), longest)
    }

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), and the obsolete RFC 850 and asctime forms that
    /// recipients must still read.
    static func httpDate(_ text: String) -> Date? {
        // All three forms are ASCII, and DateFormatter traps on some other text ("Incorrect range").
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        // asctime pads the day with a space (`Nov  6`): read runs of spaces as one.
        let words = text.split(separator: " ").joined(separator: " ")
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: words) { return date }
        }
        return nil
    }
}
