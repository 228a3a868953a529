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
