import Foundation

/// UTC days and timestamps as text, computed with integer arithmetic: the event insert loop formats
/// two per event, where Foundation's formatters (ICU, a calendar per call) cost more than the insert.
public enum UTCTime {
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
        let (days, milliseconds) = split(date)
        let seconds = milliseconds / 1000
        var text: [UInt8] = []
        text.reserveCapacity(23)
        appendDay(&text, days)
        appendField(&text, " ", seconds / 3600, 2)
        appendField(&text, ":", seconds / 60 % 60, 2)
        appendField(&text, ":", seconds % 60, 2)
        appendField(&text, ".", milliseconds % 1000, 3)
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

    /// The date of an RFC 3339 time with a `Z` or numeric offset, such as `2026-11-21T10:15:00Z` or
    /// `2026-11-21T12:15:00.250+02:00`; nil for anything else, including impossible days and times.
    public static func date(rfc3339 text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            var position = 0
            func number(_ width: Int) -> Int? {
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
            func skip(_ allowed: String) -> Bool {
                guard position < bytes.count, allowed.utf8.contains(bytes[position]) else { return false }
                position += 1
                return true
            }
            guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2), skip("Tt"),
                  let hour = number(2), skip(":"), let minute = number(2), skip(":"), let second = number(2),
                  (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
                  hour < 24, minute < 60, second < 60 else { return nil }
            var fraction = 0.0
            if skip(".") {
                var scale = 0.1
                let start = position
                while position < bytes.count, (48...57).contains(bytes[position]) {
                    fraction += Double(bytes[position] - 48) * scale
                    scale /= 10
                    position += 1
                }
                guard position > start else { return nil }
            }
            var offset = 0
            if !skip("Zz") {
                guard position < bytes.count else { return nil }
                let sign = bytes[position] == UInt8(ascii: "-") ? -1 : 1
                guard skip("+-"), let hours = number(2), skip(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
            guard position == bytes.count else { return nil }
            let seconds = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
            return Date(timeIntervalSince1970: Double(seconds) + fraction)
        }
    }

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

    /// Whole days since 1970-01-01 and milliseconds into that day, rounded to the nearest millisecond
    /// as GRDB's formatter does (so a day and a timestamp of one date always agree).
    private static func split(_ date: Date) -> (days: Int, milliseconds: Int) {
        let total = Int((date.timeIntervalSince1970 * 1000).rounded())
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

    private static func appendDigits(_ text: inout [UInt8], _ value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
