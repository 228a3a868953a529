import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// The range a report was asked for, read from `from`/`to`, with a message people can act on when it is wrong.
struct ReportRange: Sendable {
    let range: DayRange?
    /// What the inputs show: the range read, or what was typed when it could not be read.
    let from: String
    let to: String
    let failure: DayRange.Problem?
    /// An example of a day as the date fields take it, for the message.
    let example: String

    static let defaultDays = 30

    /// What is wrong with the range, in the user's language; nil when it is fine.
    func problem(_ localizer: Localizer) -> String? {
        switch failure {
        case nil: nil
        case .notADay(let field, let text):
            localizer(field == "from" ? "reports.range.not_a_day_start" : "reports.range.not_a_day_end", [
                "text": localizer.quoted(text), "example": example,
            ])
        case .backwards(let from, let to):
            localizer("reports.range.backwards", ["from": localizer.day(from), "to": localizer.day(to)])
        case .tooLong:
            localizer("reports.range.too_long", ["days": localizer.number(DayRange.longest)])
        }
    }

    static func read(_ query: FormData, now: Date) -> ReportRange {
        func given(_ name: String) -> String? {
            query[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let from = given("from"), to = given("to")
        let example = UTCTime.day(now)
        do {
            let range = try DayRange.parse(from: from, to: to, now: now, defaultDays: defaultDays)
            return ReportRange(range: range, from: range.from, to: range.to, failure: nil, example: example)
        } catch {
            return ReportRange(range: nil, from: from ?? "", to: to ?? "", failure: error, example: example)
        }
    }

    /// `from`/`to` for the last `days` days, today included.
    static func preset(days: Int, now: Date) -> [(String, String)] {
        [("from", UTCTime.day(now.addingTimeInterval(-Double(days - 1) * 86_400))), ("to", UTCTime.day(now))]
    }
}

/// The date-range picker both report pages show (`reports/range`).
struct RangeView: Sendable {
    struct Preset: Sendable, TemplateFields {
        let label: String
        let href: String
        let current: Bool

        var templateFields: [(String, Any)] { [("label", label), ("href", href), ("current", current)] }
    }

    struct Hidden: Sendable {
        let name: String
        let value: String
    }

    let action: String
    let from: String
    let to: String
    let rangeError: String?
    let presets: [Preset]
    let hidden: [Hidden]
    let apps: [SelectOption]
    let hasApps: Bool

    init(
        action: String, requested: ReportRange, now: Date, keep: [(String, String)], hidden: [(String, String)], apps: [SelectOption],
        localizer: Localizer
    ) {
        self.action = action
        from = requested.from
        to = requested.to
        rangeError = requested.problem(localizer)
        presets = [7, 30, 90].map { days in
            let pairs = ReportRange.preset(days: days, now: now)
            return Preset(
                label: localizer.plural("reports.range.last_days", count: days), href: action + "?" + FormData(pairs + keep).urlencoded,
                current: requested.range?.from == pairs[0].1 && requested.range?.to == pairs[1].1)
        }
        self.hidden = hidden.map { Hidden(name: $0.0, value: $0.1) }
        self.apps = apps
        hasApps = !apps.isEmpty
    }
}
