import Foundation

/// The `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP date. One reader for the
/// delivery client (feed fetches, event uploads) and the push sender (APNs, FCM answers), written by
/// hand with every field range-checked: the header comes from a server we do not control, and
/// DateFormatter traps on some text outside ASCII.
public enum RetryAfter {
    /// Longer waits are taken as this: a server asking for more than a day is more likely wrong than
    /// right, and a client that never tries again cannot learn that it was.
    public static let longest: TimeInterval = 86_400

    /// The seconds to wait from `now`, 0 to a day, or nil when the header is absent or unreadable.
    public static func delay(_ header: String?, now: Date) -> TimeInterval? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // Up to 64 digits: compared as a double, never converted to an Int.
            guard let seconds = Double(text) else { return nil }
            return min(seconds, longest)
        }
        guard let date = httpDate(text, now: now) else { return nil }
        return min(max(0, date.timeIntervalSince(now)), longest)
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longWeekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// An HTTP date (RFC 9110 §5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only form senders
    /// may send, and the obsolete forms recipients must still read, RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`,
    /// its two-digit year the latest that is not more than 50 years after `now`) and asctime
    /// (`Sun Nov  6 08:49:37 1994`). Runs of spaces count as one, as asctime pads the day with one.
    public static func httpDate(_ text: String, now: Date) -> Date? {
        let fields = text.split(separator: " ").map(String.init)
        switch fields.count {
        case 6:
            guard fields[0].hasSuffix(","), weekdays.contains(String(fields[0].dropLast())), fields[5] == "GMT",
                  fields[1].utf8.count == 2, fields[3].utf8.count == 4, let year = number(fields[3]) else { return nil }
            return date(year: year, month: fields[2], day: number(fields[1]), clock: fields[4])
        case 4:
            let dayMonthYear = fields[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard fields[0].hasSuffix(","), longWeekdays.contains(String(fields[0].dropLast())), fields[3] == "GMT",
                  dayMonthYear.count == 3, dayMonthYear[0].utf8.count == 2, dayMonthYear[2].utf8.count == 2,
                  let twoDigits = number(dayMonthYear[2]) else { return nil }
            let nowYear = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "GMT") ?? .current, from: now).year ?? 1970
            var year = nowYear - nowYear % 100 + twoDigits
            if year > nowYear + 50 { year -= 100 }
            return date(year: year, month: dayMonthYear[1], day: number(dayMonthYear[0]), clock: fields[2])
        case 5:
            guard weekdays.contains(fields[0]), (1...2).contains(fields[2].utf8.count), fields[4].utf8.count == 4,
                  let year = number(fields[4]) else { return nil }
            return date(year: year, month: fields[1], day: number(fields[2]), clock: fields[3])
        default:
            return nil
        }
    }

    /// ASCII digits only (`Int` alone would take a sign).
    private static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 4, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }

    private static func date(year: Int, month: String, day: Int?, clock: String) -> Date? {
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (1970...9999).contains(year), let monthIndex = months.firstIndex(of: month), let day, (1...31).contains(day),
              parts.count == 3, parts.allSatisfy({ $0.utf8.count == 2 }),
              let hour = number(parts[0]), (0...23).contains(hour),
              let minute = number(parts[1]), (0...59).contains(minute),
              let second = number(parts[2]), (0...60).contains(second)
        else { return nil }
        let days = daysSince1970(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(((days * 24 + hour) * 60 + minute) * 60 + second))
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
