import Foundation
import HeraldDomain
import HeraldStorage

/// A push campaign's own figures on its report: from the outbox, how many devices were targeted, sent
/// and failed (by reason) over the whole send; from the events its apps report in the chosen range,
/// how many notifications arrived (`push_received`) and were opened (`push_open`); by platform and day.
/// Test devices' events are left out, as everywhere in reports.
struct PushReport: Sendable {
    struct PlatformRow: Sendable {
        let platform: String
        let targeted: String
        let sent: String
        let delivered: String
        let opened: String
    }

    struct DayRow: Sendable {
        let day: String
        let sent: Int
        let delivered: Int
        let opened: Int
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
    /// The same days as numbers, for the CSV.
    let dayRows: [DayRow]

    init(campaignID: Int64, outbox: any PushOutboxStore, counts: EventCounts, range: DayRange, localizer l: Localizer) throws {
        let progress = try outbox.progress(campaignID: campaignID)
        let breakdown = try outbox.sentBreakdown(campaignID: campaignID)
        let real = counts.rows.filter { !$0.test && $0.campaignID == campaignID }
        func total(_ type: EventType, platform: String? = nil, day: String? = nil) -> Int {
            real.filter { $0.type == type && (platform == nil || $0.platform == platform) && (day == nil || $0.day == day) }.reduce(0) { $0 + $1.count }
        }
        let delivered = total(.pushReceived), opened = total(.pushOpen)
        let notDelivered = progress.failed + progress.unregistered + progress.skipped + progress.unknown
        metrics = [
            ReportPages.Metric(label: l("reports.push.targeted"), value: l.number(progress.planned), note: nil),
            ReportPages.Metric(label: l("reports.push.sent"), value: l.number(progress.sent), note: nil),
            ReportPages.Metric(label: l("reports.push.failed"), value: l.number(notDelivered), note: nil),
            ReportPages.Metric(label: l("reports.push.delivered"), value: l.number(delivered), note: l("reports.push.delivered_note")),
            ReportPages.Metric(label: l("reports.push.opened"), value: l.number(opened), note: nil),
            ReportPages.Metric(
                label: l("reports.push.open_rate"), value: progress.sent == 0 ? "–" : l.percent(Double(opened) / Double(progress.sent)),
                note: l("reports.push.open_rate_note")),
        ]
        failures = PushProgressView.failures(try outbox.failures(campaignID: campaignID), l)
        platforms = breakdown.byPlatform.map { row in
            PlatformRow(
                platform: Platform(rawValue: row.platform).map(l.title) ?? row.platform, targeted: l.number(row.targeted), sent: l.number(row.sent),
                delivered: l.number(total(.pushReceived, platform: row.platform)), opened: l.number(total(.pushOpen, platform: row.platform)))
        }
        let sentByDay = Dictionary(breakdown.byDay.map { ($0.day, $0.sent) }, uniquingKeysWith: +)
        let eventDays = Set(real.filter { $0.type == .pushReceived || $0.type == .pushOpen }.map(\.day))
        dayRows = Set(sentByDay.keys).union(eventDays).filter { $0 >= range.from && $0 <= range.to }.sorted().map { day in
            DayRow(day: day, sent: sentByDay[day] ?? 0, delivered: total(.pushReceived, day: day), opened: total(.pushOpen, day: day))
        }
        days = dayRows.map { DayView(day: $0.day, sent: l.number($0.sent), delivered: l.number($0.delivered), opened: l.number($0.opened)) }
    }
}
