import Foundation
import HeraldDomain
import HeraldStorage

/// A push campaign's own figures on its report (`PushFigures`), in the reader's language.
struct PushReport: Sendable {
    struct PlatformRow: Sendable {
        let platform: String
        let targeted: String
        let sent: String
        let delivered: String
        let opened: String
    }

    struct DayView: Sendable {
        let day: String
        let sent: String
        let delivered: String
        let opened: String
    }

    let metrics: [ReportPages.Metric]
    let failures: [PushProgressView.Failure]
    let platforms: [PlatformRow]
    let days: [DayView]
    /// The days with anything sent, delivered or opened, as numbers, for the CSV.
    let dayRows: [PushFigures.DayFigures]

    init(campaignID: Int64, outbox: any PushOutboxStore, counts: EventCounts, range: DayRange, localizer l: Localizer) throws {
        let figures = try PushFigures(campaignID: campaignID, outbox: outbox, counts: counts, range: range)
        metrics = [
            ReportPages.Metric(label: l("reports.push.targeted"), value: l.number(figures.targeted), note: nil),
            ReportPages.Metric(label: l("reports.push.sent"), value: l.number(figures.sent), note: nil),
            ReportPages.Metric(label: l("reports.push.failed"), value: l.number(figures.notSent), note: nil),
            ReportPages.Metric(label: l("reports.push.delivered"), value: l.number(figures.delivered), note: l("reports.push.delivered_note")),
            ReportPages.Metric(label: l("reports.push.opened"), value: l.number(figures.opened), note: nil),
            ReportPages.Metric(
                label: l("reports.push.open_rate"), value: figures.sent == 0 ? "–" : l.percent(Double(figures.opened) / Double(figures.sent)),
                note: l("reports.push.open_rate_note")),
        ]
        failures = PushProgressView.failures(figures.notSentByReason.map { ($0.state, $0.reason, $0.count) }, l)
        platforms = figures.byPlatform.sorted { $0.key < $1.key }.filter { $0.value.targeted > 0 }.map { platform, row in
            PlatformRow(
                platform: Platform(rawValue: platform).map(l.title) ?? platform, targeted: l.number(row.targeted), sent: l.number(row.sent),
                delivered: l.number(row.delivered), opened: l.number(row.opened))
        }
        dayRows = figures.daily.filter { !$0.isEmpty }
        days = dayRows.map { DayView(day: $0.date, sent: l.number($0.sent), delivered: l.number($0.delivered), opened: l.number($0.opened)) }
    }
}
