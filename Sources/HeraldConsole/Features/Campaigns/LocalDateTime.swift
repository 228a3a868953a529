import Foundation
import HeraldDomain

/// `datetime-local` values (`2026-12-01T09:00`) read and written in a campaign's time zone.
enum LocalDateTime {
    enum Problem: Error {
        case notADateTime
        /// A wall-clock time the zone skips (clocks moving forward).
        case skipped

        func text(timeZone: String) -> ProblemText {
            switch self {
            case .notADateTime: ProblemText("date_time_invalid")
            case .skipped: ProblemText("time_skipped", ["zone": .text(timeZone)])
            }
        }
    }

    static func parse(_ text: String, in zone: TimeZone) -> Result<Date, Problem> {
        let normalized = text.replacingOccurrences(of: " ", with: "T")
        guard normalized.utf8.count <= 19 else { return .failure(.notADateTime) }
        for format in ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss"] {
            if let date = formatter(format, zone).date(from: normalized) { return .success(date) }
            // A time every zone without daylight saving has, which this one lacks, falls in a gap.
            if formatter(format, .gmt).date(from: normalized) != nil { return .failure(.skipped) }
        }
        return .failure(.notADateTime)
    }

    static func format(_ date: Date, timeZone: String) -> String {
        formatter("yyyy-MM-dd'T'HH:mm", TimeZone(identifier: timeZone) ?? .gmt).string(from: date)
    }

    private static func formatter(_ format: String, _ zone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = format
        formatter.isLenient = false
        return formatter
    }
}
