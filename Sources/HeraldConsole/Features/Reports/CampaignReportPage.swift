import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/campaigns/{id}/report`: one campaign's figures over a range of UTC days, with its funnel, chart, breakdowns and
/// its platforms and languages.
extension ReportPages {
    struct Metric: Sendable, TemplateFields {
        let label: String
        let value: String
        let note: String?

        var templateFields: [(String, Any)] { [("label", label), ("value", value), ("note", note as Any)] }
    }

    /// One line of a breakdown: a button, a dismissal type, an error code, a conversion event.
    struct Share: Sendable {
        let label: String
        let code: String
        /// Conversion events are their own label; buttons, types and codes show their code beside a readable label.
        let showsCode: Bool
        let count: String
        let share: String
        /// The share as a width out of 100, for the small bar beside it.
        let barWidth: String

        /// The row as HTML (escaped), written here as the day-by-day table's rows are.
        var row: String {
            let code = showsCode ? " <code dir=\"ltr\">\(Markup.escape(code))</code>" : ""
            return "<tr><th scope=\"row\" dir=\"auto\">\(Markup.escape(label))\(code)</th><td class=\"numeric\">\(Markup.escape(count))</td>"
                + "<td class=\"numeric share\"><svg class=\"share-bar\" width=\"60\" height=\"8\" viewBox=\"0 0 100 8\" preserveAspectRatio=\"none\" "
                + "aria-hidden=\"true\" focusable=\"false\"><rect class=\"share-track\" width=\"100\" height=\"8\"/>"
                + "<rect class=\"share-fill\" width=\"\(Markup.escape(barWidth))\" height=\"8\"/></svg> \(Markup.escape(share))</td></tr>\n"
        }
    }

    struct Breakdown: Sendable, TemplateFields {
        let id: String
        let heading: String
        let itemHeading: String
        /// The rows as HTML (`Share.row`).
        let rows: String
        let total: String
        let hasRows: Bool
        let emptyText: String

        var templateFields: [(String, Any)] {
            [("id", id), ("heading", heading), ("itemHeading", itemHeading), ("rows", rows), ("total", total), ("hasRows", hasRows),
             ("emptyText", emptyText)]
        }
    }

    /// A row of the platform or language table: what it counts (HTML, escaped), its share of impressions
    /// and its figures.
    struct FigureRow {
        let heading: String
        let share: String
        let figures: Figures

        /// The row as HTML, written here as the day-by-day table's rows are.
        var row: String {
            var row = "<tr><th scope=\"row\">\(heading)</th><td class=\"numeric\">\(Markup.escape(share))</td>"
            figures.writeCells(into: &row)
            return row + "</tr>\n"
        }
    }

    /// A day of the report as the language writes it, made once for the chart's titles and the table.
    struct DayText: Sendable {
        let day: CampaignStats.Day
        let date: String
        let figures: Figures

        init(_ day: CampaignStats.Day, _ localizer: Localizer) {
            self.day = day
            date = localizer.day(day.date)
            var totals = CampaignStats.Totals()
            totals.add(.impression, day.impressions)
            totals.add(.click, day.clicks)
            totals.add(.dismiss, day.dismissals)
            totals.add(.error, day.errors)
            totals.add(.conversion, day.conversions)
            figures = Figures(totals, localizer)
        }
    }

    /// The day-by-day table's rows as HTML written here (escaped): 90 rows of seven cells through
    /// Mustache's lookups were the largest part of a 90-day report's time.
    static func dailyRows(_ days: [DayText]) -> String {
        var rows = ""
        rows.reserveCapacity(days.count * 260)
        for day in days {
            rows += "<tr><th scope=\"row\"><time datetime=\"\(Markup.escape(day.day.date))\">\(Markup.escape(day.date))</time></th>"
            day.figures.writeCells(into: &rows)
            rows += "</tr>\n"
        }
        return rows
    }

    struct CampaignReport: Sendable {
        let delivered: Bool
        let metrics: [Metric]
        /// Chosen, shown, clicked (`funnel`).
        let funnel: [Metric]
        let chart: DailyChart
        let dailyRows: String
        let breakdowns: [Breakdown]
        /// The platform and language tables' rows as HTML (`FigureRow.row`).
        let platforms: String
        let hasPlatforms: Bool
        let languages: String
        let hasLanguages: Bool
        let test: [Metric]
        let hasTest: Bool
    }

    struct CampaignReportView: Sendable {
        let id: Int64
        let name: String
        let appName: String
        let status: String
        let statusTitle: String
        let range: RangeView
        let problem: String?
        /// "21 Nov 2026 to 20 Dec 2026 (30 days), UTC days".
        let rangeText: String
        let csvHref: String
        let report: CampaignReport?
        /// A push campaign's own figures.
        let push: PushReport?
    }

    func campaign(_ context: RequestContext) throws -> Response {
        let stored = try campaign(id: try context.id("id"))
        let requested = ReportRange.read(context.request.query, now: context.now)
        let localizer = context.localizer
        let appName = try services.database.apps.find(id: stored.campaign.app)?.name
            ?? localizer("campaigns.show.app_number", ["id": String(stored.campaign.app)])
        let status = stored.status(at: context.now)
        let path = "/campaigns/\(stored.id)/report"
        // A bad range still shows the page, with the picker and what to fix, as a 400.
        let days = requested.range
        let counted = try days.map { ($0, try services.database.events.counts(campaignID: stored.id, from: $0.from, to: $0.to)) }
        let stats = counted.map { CampaignStats(counts: $0.1, range: $0.0) }
        let push = try counted.flatMap { range, counts in
            try stored.campaign.channel == .push
                ? PushReport(campaignID: stored.id, outbox: services.database.pushOutbox, counts: counts, range: range, localizer: localizer) : nil
        }
        let model = CampaignReportView(
            id: stored.id, name: stored.campaign.name, appName: appName, status: status.rawValue, statusTitle: localizer.title(status),
            range: RangeView(action: path, requested: requested, now: context.now, keep: [], hidden: [], apps: [], localizer: localizer),
            problem: requested.problem(localizer),
            rangeText: days.map { localizer("times.utc_days", ["range": Self.rangeText($0, localizer)]) } ?? "",
            csvHref: days.map { "\(path).csv?" + FormData([("from", $0.from), ("to", $0.to)]).urlencoded } ?? "",
            report: stats.map { Self.report($0, localizer) }, push: push)
        return try services.page(
            .campaignReport, title: localizer("reports.campaign.title", ["name": Localizer.isolated(stored.campaign.name)]), model: model,
            context: context, status: days == nil ? 400 : 200)
    }
    static func report(_ stats: CampaignStats, _ localizer: Localizer) -> CampaignReport {
        let totals = stats.totals
        let l = localizer
        func metric(_ key: String, _ value: String, note: String? = nil) -> Metric {
            Metric(label: l("reports.metric." + key), value: value, note: note.map { l("reports.metric." + $0) })
        }
        // An estimate reads "≈ 1,234,567" and says so beside it, so nobody takes it for a count.
        func devices(_ key: String, _ figures: CampaignStats.Totals, note: String? = nil) -> Metric {
            guard figures.uniqueDevicesEstimated else { return metric(key, l.number(figures.uniqueDevices), note: note) }
            return metric(key, l("reports.metric.estimated_value", ["value": l.number(figures.uniqueDevices)]), note: "estimated_note")
        }
        let metrics = [
            metric("impressions", l.number(totals.impressions)),
            metric("clicks", l.number(totals.clicks)),
            metric("ctr", ReportFormat.percent(totals.clicks, of: totals.impressions, l), note: "ctr_note"),
            metric("dismissals", l.number(totals.dismissals)),
            metric("display_errors", l.number(totals.errors)),
            metric("conversions", l.number(totals.conversions)),
            metric("conversion_rate", ReportFormat.percent(totals.conversions, of: totals.impressions, l), note: "conversion_rate_note"),
            devices("unique_devices", totals, note: "unique_devices_note"),
        ]
        let test = stats.test
        let testMetrics = [
            metric("impressions", l.number(test.impressions)),
            metric("clicks", l.number(test.clicks)),
            metric("ctr", ReportFormat.percent(test.clicks, of: test.impressions, l)),
            metric("dismissals", l.number(test.dismissals)),
            metric("display_errors", l.number(test.errors)),
            metric("conversions", l.number(test.conversions)),
            devices("test_devices", test),
        ]
        let platforms = stats.byPlatform.sorted { ($0.value.impressions, $1.key) > ($1.value.impressions, $0.key) }.map { name, figures in
            FigureRow(
                heading: Markup.escape(l.platformTitle(name)), share: ReportFormat.percent(figures.impressions, of: totals.impressions, l),
                figures: Figures(figures, l))
        }
        var languages = stats.byLanguage.map { version in
            FigureRow(
                heading: version.language.map { "<code dir=\"ltr\">\(Markup.escape($0))</code>" }
                    ?? Markup.escape(l("reports.languages.default_version")),
                share: ReportFormat.percent(version.totals.impressions, of: totals.impressions, l), figures: Figures(version.totals, l))
        }
        let other = stats.otherLanguages.totals
        if other != CampaignStats.Totals() {
            languages.append(FigureRow(
                heading: Markup.escape(l("reports.languages.other_languages")),
                share: ReportFormat.percent(other.impressions, of: totals.impressions, l), figures: Figures(other, l)))
        }
        let conversions = stats.conversionsByEvent.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { ($0.key, $0.key) }
        func known(_ codes: [String]) -> [(String, String)] { codes.map { ($0, l("reports.breakdown." + $0)) } }
        let breakdowns = [
            breakdown("clicks", item: "button", stats.clicksByAction, known: known(ClickAction.allCases.map(\.rawValue)), empty: "", l),
            breakdown("dismissals", item: "how", stats.dismissalsByType, known: known(DismissType.allCases.map(\.rawValue)), empty: "", l),
            breakdown("errors", item: "error", stats.errorsByCode, known: known(DisplayErrorCode.allCases.map(\.rawValue)), empty: "", l),
            breakdown("conversions", item: "event", stats.conversionsByEvent, known: conversions,
                      other: stats.otherConversions, empty: l("reports.breakdown.no_conversions"), l),
            discardsBreakdown(stats, l),
        ]
        let days = stats.daily.map { DayText($0, l) }
        return CampaignReport(
            delivered: totals.impressions + totals.clicks + totals.dismissals + totals.errors + totals.conversions > 0,
            metrics: metrics, funnel: funnel(stats, l), chart: DailyChart(days: days, localizer: l),
            dailyRows: Self.dailyRows(days),
            breakdowns: breakdowns, platforms: platforms.map(\.row).joined(), hasPlatforms: !platforms.isEmpty,
            languages: languages.map(\.row).joined(), hasLanguages: !languages.isEmpty,
            test: testMetrics, hasTest: test.impressions + test.clicks + test.dismissals + test.errors + test.conversions > 0)
    }

    /// The known values first, each shown even at zero, then anything else the events carried, then
    /// `other` (what the counts did not name one by one) as a last row. `id` and `item` name the catalog's
    /// heading and column (`reports.breakdown.<id>`, `reports.breakdown.<item>`).
    static func breakdown(
        _ id: String, item: String, _ counts: [String: Int], known: [(String, String)], other: Int = 0, empty: String, _ localizer: Localizer
    ) -> Breakdown {
        let knownCodes = Set(known.map(\.0))
        let others = counts.keys.filter { !knownCodes.contains($0) }.sorted().map { ($0, $0) }
        let total = counts.values.reduce(0, +) + other
        func share(label: String, code: String, count: Int) -> Share {
            Share(
                label: label, code: code, showsCode: label != code && !code.isEmpty, count: localizer.number(count),
                share: ReportFormat.percent(count, of: total, localizer),
                barWidth: DailyChart.number(total == 0 ? 0 : 100 * Double(count) / Double(total)))
        }
        var rows = (known + others).map { code, label in share(label: label, code: code, count: counts[code] ?? 0) }
        if other > 0 { rows.append(share(label: localizer("reports.breakdown.other_events"), code: "", count: other)) }
        return Breakdown(
            id: id, heading: localizer("reports.breakdown." + id), itemHeading: localizer("reports.breakdown." + item), rows: rows.map(\.row).joined(),
            total: localizer.number(total), hasRows: !rows.isEmpty, emptyText: empty)
    }
}
