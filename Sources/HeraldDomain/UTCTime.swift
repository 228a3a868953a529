import Foundation

/// Herald's times as text, read and written with integer arithmetic: one definition of which
/// instants Herald accepts (`supported`), how Campaign JSON writes them (RFC 3339), and how storage
/// and reports write days and timestamps. The event insert loop formats two per event, where
/// Foundation's formatters (ICU, a calendar per call) cost more than the insert.
///
/// Every function here is total: no text and no `Date` makes one trap. Reading takes four-digit years
/// only; formatting writes any year, with a sign when negative. Whether a time is inside `supported` is
/// a rule of its own, checked where the time is used (validation, reports, ingestion), so that a time
/// that is well written but out of range is explained as such instead of as a malformed one.
public enum UTCTime {
    /// 2000-01-01T00:00:00Z through 9999-12-31T23:59:59.999Z: the instants a campaign, a report or an
    /// event may name. Four-digit years read back the same in every format Herald writes, and nothing
    /// Herald schedules or counts happened before 2000.
    public static let supported: ClosedRange<Date> =
        Date(timeIntervalSince1970: 946_684_800)...Date(timeIntervalSince1970: 253_402_300_799.999)

    /// The supported range in words, for error messages.
    public static let supportedText = "from 2000-01-01 to 9999-12-31 (UTC)"

    // MARK: Reading

    /// The date of an RFC 3339 time as Campaign JSON documents it: an upper-case `T`, at most nine
    /// fractional digits, and `Z` or an offset of at most ±18:00, such as `2026-11-21T10:15:00Z` or
    /// `2026-11-21T12:15:00.250+02:00`; rounded to the millisecond (what Herald keeps). Nil for anything
    /// else, including the lower-case `t` and `z` and the offsets no time zone has that RFC 3339 also
    /// allows, impossible days and times. With its offset, a time may fall just outside the years
    /// 0000–9999 it was written in; whether it is inside `supported` is for its user to check.
    public static func date(rfc3339 text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            var reader = Reader(bytes: bytes)
            guard let (days, secondOfDay) = reader.dayAndTime(), let milliseconds = reader.fraction() else { return nil }
            var offset = 0
            if !reader.skip("Z") {
                guard reader.position < bytes.count else { return nil }
                let sign = bytes[reader.position] == UInt8(ascii: "-") ? -1 : 1
                guard reader.skip("+-"), let hours = reader.number(2), reader.skip(":"), let minutes = reader.number(2),
                      minutes < 60, hours * 60 + minutes <= maxOffsetMinutes else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
            guard reader.position == bytes.count else { return nil }
            // Four-digit years and offsets under a day keep every term far from Int's range.
            let total = (days * 86_400 + secondOfDay - offset) * 1000 + milliseconds
            return Date(timeIntervalSince1970: Double(total) / 1000)
        }
    }

    /// Midnight UTC of a `YYYY-MM-DD` day; nil unless it is a real day inside `supported`.
    public static func date(day text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            var reader = Reader(bytes: bytes)
            guard let days = reader.day(), reader.position == bytes.count else { return nil }
            let date = Date(timeIntervalSince1970: Double(days) * 86_400)
            return supported.contains(date) ? date : nil
        }
    }

    /// ±18:00, the widest offset Foundation's `TimeZone` takes (real zones span −12:00 to +14:00).
    private static let maxOffsetMinutes = 18 * 60

    /// Reads the fields of RFC 3339 text from the start of `bytes`.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        mutating func number(_ width: Int) -> Int? {
            guard position + width <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<width {
                let digit = Int(bytes[position]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
                position += 1
            }
            return value
        }

        mutating func skip(_ allowed: StaticString) -> Bool {
            guard position < bytes.count else { return false }
            let found = allowed.withUTF8Buffer { $0.contains(bytes[position]) }
            if found { position += 1 }
            return found
        }

        /// `YYYY-MM-DD` as days since 1970-01-01.
        mutating func day() -> Int? {
            guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2),
                  (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
            return days(year: year, month: month, day: day)
        }

        /// `YYYY-MM-DDTHH:MM:SS` as days since 1970-01-01 and seconds into the day.
        mutating func dayAndTime() -> (Int, Int)? {
            guard let days = day(), skip("T"), let hour = number(2), skip(":"), let minute = number(2), skip(":"),
                  let second = number(2), hour < 24, minute < 60, second < 60 else { return nil }
            return (days, hour * 3600 + minute * 60 + second)
        }

        /// An optional `.f` to `.fffffffff` as milliseconds, rounded half up; 1000 when it rounds up to a whole second.
        mutating func fraction() -> Int? {
            guard skip(".") else { return 0 }
            let start = position
            var milliseconds = 0
            while position < bytes.count, (48...57).contains(bytes[position]) {
                let digit = Int(bytes[position]) - 48
                switch position - start {
                case 0: milliseconds += digit * 100
                case 1: milliseconds += digit * 10
                case 2: milliseconds += digit
                case 3: if digit >= 5 { milliseconds += 1 }
                default: break
                }
                position += 1
            }
            return (1...9).contains(position - start) ? milliseconds : nil
        }
    }

    // MARK: Writing

    /// `YYYY-MM-DD`.
    public static func day(_ date: Date) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(10)
        appendDay(&text, split(date).days)
        return String(decoding: text, as: UTF8.self)
    }

    /// `YYYY-MM-DD HH:MM:SS.SSS`, the text GRDB stores a `Date` as, so rows written either way read
    /// back alike.
    public static func timestamp(_ date: Date) -> String {
        format(date, separator: " ", fraction: true, zone: "")
    }

    /// RFC 3339 in UTC as Campaign JSON writes it: `2026-11-21T10:15:00Z`, with milliseconds
    /// (`…:00.250Z`) only when there are some. `date(rfc3339:)` reads it back to the same date.
    public static func rfc3339(_ date: Date) -> String {
        format(date, separator: "T", fraction: split(date).milliseconds % 1000 != 0, zone: "Z")
    }

    private static func format(_ date: Date, separator: Unicode.Scalar, fraction: Bool, zone: String) -> String {
        let (days, milliseconds) = split(date)
        let seconds = milliseconds / 1000
        var text: [UInt8] = []
        text.reserveCapacity(24)
        appendDay(&text, days)
        appendField(&text, separator, seconds / 3600, 2)
        appendField(&text, ":", seconds / 60 % 60, 2)
        appendField(&text, ":", seconds % 60, 2)
        if fraction { appendField(&text, ".", milliseconds % 1000, 3) }
        text += zone.utf8
        return String(decoding: text, as: UTF8.self)
    }

    private static func appendDay(_ text: inout [UInt8], _ days: Int) {
        let (year, month, day) = civil(days)
        appendDigits(&text, year, 4)
        appendField(&text, "-", month, 2)
        appendField(&text, "-", day, 2)
    }

    private static func appendField(_ text: inout [UInt8], _ separator: Unicode.Scalar, _ value: Int, _ width: Int) {
        text.append(UInt8(ascii: separator))
        appendDigits(&text, value, width)
    }

    /// At least `width` digits, more when the value needs them, and a `-` before negative values.
    /// Without allocating: the event insert loop writes fourteen fields per event.
    private static func appendDigits(_ text: inout [UInt8], _ value: Int, _ width: Int) {
        if value < 0 { text.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var divisor: UInt = 1
        var count = 1
        // `divisor <= magnitude / 10` keeps `divisor * 10` from overflowing.
        while count < width || divisor <= magnitude / 10 {
            divisor *= 10
            count += 1
        }
        var rest = magnitude
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    // MARK: Calendar arithmetic

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Far past any calendar Herald writes, and far from overflowing the arithmetic below.
    private static let millisecondBound = 1e17

    /// Whole days since 1970-01-01 and milliseconds into that day, rounded to the nearest millisecond
    /// as GRDB's formatter does (so a day and a timestamp of one date always agree). Dates beyond
    /// ±3 million years (or not finite) are taken as the nearest bound rather than trapping.
    private static func split(_ date: Date) -> (days: Int, milliseconds: Int) {
        let scaled = (date.timeIntervalSince1970 * 1000).rounded()
        let total = scaled.isNaN ? 0 : Int(min(max(scaled, -millisecondBound), millisecondBound))
        let days = total >= 0 ? total / 86_400_000 : (total - 86_399_999) / 86_400_000
        return (days, total - days * 86_400_000)
    }

    /// Year, month and day of the proleptic Gregorian calendar for days since 1970-01-01
    /// (Howard Hinnant's `civil_from_days`).
    static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
