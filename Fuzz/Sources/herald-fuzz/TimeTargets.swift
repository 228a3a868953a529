import Foundation
import HeraldDomain

/// `UTCTime`: whatever it reads has the documented form and, when inside `supported` (the range is a
/// rule its users check, so a well-written time outside it is explained as such), writes back to text
/// that reads as the same date; a day (always inside `supported`) reads back as the same text; writing
/// is total for any date.
enum UTCTimeTarget {
    /// Whether `text` has Campaign JSON's documented form (docs/campaign-json.md): `YYYY-MM-DDTHH:MM:SS`,
    /// up to nine fractional digits, then `Z` or an offset of at most ±18:00. Checked by position rather
    /// than with a Regex, whose parsed form the runtime keeps for good (LeakSanitizer reports it at exit).
    static func isDocumented(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Bool { range.allSatisfy { $0 < bytes.count && (48...57).contains(bytes[$0]) } }
        func byte(_ index: Int, _ character: Character) -> Bool { index < bytes.count && bytes[index] == character.asciiValue }
        guard digits(0..<4), byte(4, "-"), digits(5..<7), byte(7, "-"), digits(8..<10), byte(10, "T"), digits(11..<13), byte(13, ":"),
              digits(14..<16), byte(16, ":"), digits(17..<19) else { return false }
        var position = 19
        if byte(position, ".") {
            let fraction = bytes[(position + 1)...].prefix { (48...57).contains($0) }.count
            guard (1...9).contains(fraction) else { return false }
            position += 1 + fraction
        }
        if byte(position, "Z") { return position + 1 == bytes.count }
        guard byte(position, "+") || byte(position, "-"), digits(position + 1..<position + 3), byte(position + 3, ":"),
              digits(position + 4..<position + 6), position + 6 == bytes.count else { return false }
        let hours = Int(bytes[position + 1] - 48) * 10 + Int(bytes[position + 2] - 48)
        let minutes = Int(bytes[position + 4] - 48) * 10 + Int(bytes[position + 5] - 48)
        return hours * 60 + minutes <= 18 * 60
    }

    static func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let date = UTCTime.date(rfc3339: text) {
            require(isDocumented(text), "\(text.debugDescription) was read though it is not in the documented form")
            if UTCTime.supported.contains(date) {
                let written = UTCTime.rfc3339(date)
                require(UTCTime.date(rfc3339: written) == date, "\(text.debugDescription) writes back as \(written), which reads differently")
            }
        }
        if let day = UTCTime.date(day: text) {
            require(UTCTime.supported.contains(day), "the day \(text.debugDescription) is outside the supported range")
            require(UTCTime.day(day) == text, "the day \(text.debugDescription) writes back as \(UTCTime.day(day))")
            require(UTCTime.date(rfc3339: text + "T00:00:00Z") == day, "the day \(text.debugDescription) and its midnight disagree")
        }
        if bytes.count >= 8 {
            let seconds = bytes.prefix(8).withUnsafeBytes { Double(bitPattern: $0.loadUnaligned(as: UInt64.self)) }
            let date = Date(timeIntervalSince1970: seconds)
            for written in [UTCTime.rfc3339(date), UTCTime.timestamp(date), UTCTime.day(date)] {
                require(!written.isEmpty, "an empty text for \(seconds)")
            }
            // `supported.contains` holds for NaN (Comparable's `<=` is `!(>)`), which no reader ever returns.
            if seconds.isFinite, UTCTime.supported.contains(date) {
                let milliseconds = (date.timeIntervalSince1970 * 1000).rounded() / 1000
                let expected = Date(timeIntervalSince1970: milliseconds)
                if UTCTime.supported.contains(expected) {
                    require(UTCTime.date(rfc3339: UTCTime.rfc3339(date)) == expected,
                            "\(seconds) writes as \(UTCTime.rfc3339(date)), which does not read as its millisecond")
                }
            }
        }
    }
}

/// `RetryAfter`: whatever header it reads gives a wait from 0 to a day, never a trap; an IMF-fixdate
/// it reads is the time it names (written back the same way, it reads as the same wait).
enum RetryAfterTarget {
    static func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        if let wait = RetryAfter.delay(text, now: now) {
            require(wait >= 0 && wait <= RetryAfter.longest, "\(text.debugDescription) gives a wait of \(wait) s")
        }
        if let date = RetryAfter.httpDate(text, now: now) {
            require(date.timeIntervalSince1970.isFinite, "\(text.debugDescription) reads as a date that is not finite")
            let written = imfFixdate(date)
            require(RetryAfter.httpDate(written, now: now) == date, "\(text.debugDescription) reads as \(date), written \(written), which reads differently")
        }
    }

    /// IMF-fixdate written by hand from the date's GMT components, so the check does not lean on the reader.
    private static func imfFixdate(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT") ?? .current
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String { let text = String(value ?? 0); return text.count < 2 ? "0" + text : text }
        let year = String(parts.year ?? 0)
        return "\(weekdays[((parts.weekday ?? 1) - 1) % 7]), \(two(parts.day)) \(months[((parts.month ?? 1) - 1) % 12]) "
            + "\(String(repeating: "0", count: max(0, 4 - year.count)) + year) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
    }
}
