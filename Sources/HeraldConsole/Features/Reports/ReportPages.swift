import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/reports` and `/campaigns/{id}/report`: what campaigns delivered over a range of UTC days, read from the rollups only.
struct ReportPages: Sendable {
    let services: Services
    static let pageSize = 50

    // MARK: All campaigns

    /// The columns `/reports` sorts by (`sort=`), in the table's order.
    enum Column: String, CaseIterable, Sendable {
        case name, app, impressions, clicks, ctr, dismissals, errors, conversions

        func title(_ localizer: Localizer) -> String {
            switch self {
            case .name: localizer("reports.column.campaign")
            case .app: localizer("common.app")
            default: localizer("reports.column." + rawValue)
            }
        }

        var isText: Bool { self == .name || self == .app }
    }

    struct HeaderCell: Sendable {
        let label: String
        let href: String?
        let numeric: Bool
        let ariaSort: String?
        let indicator: String?
    }

    struct IndexRow: Sendable {
        let id: Int64
        let name: String
        /// A push campaign: its receipts and opens stand in the impressions and clicks columns.
        let isPush: Bool
        let app: String
        let figures: Figures
        let spark: Sparkline
    }

    /// One line of figures, formatted.
    struct Figures: Sendable, TemplateFields {
        let impressions: String
        let clicks: String
        let ctr: String
        let dismissals: String
        let errors: String
        let conversions: String

        init(_ totals: CampaignStats.Totals, _ localizer: Localizer) {
            impressions = localizer.number(totals.impressions)
            clicks = localizer.number(totals.clicks)
            ctr = ReportFormat.percent(totals.clicks, of: totals.impressions, localizer)
            dismissals = localizer.number(totals.dismissals)
            errors = localizer.number(totals.errors)
            conversions = localizer.number(totals.conversions)
        }

        var templateFields: [(String, Any)] {
            [("impressions", impressions), ("clicks", clicks), ("ctr", ctr), ("dismissals", dismissals), ("errors", errors),
             ("conversions", conversions)]
        }

        /// The six figures as a table's cells, in the columns' order.
        func writeCells(into html: inout String) {
            for cell in [impressions, clicks, ctr, dismissals, errors, conversions] {
                html += "<td class=\"numeric\">\(Markup.escape(cell))</td>"
            }
        }
    }

    struct IndexView: Sendable {
        let range: RangeView
        let problem: String?
        /// The lead sentence, with the range when there is one.
        let lead: String
        let caption: String
        /// `from=…&to=…`, so a campaign's link keeps the range.
        let rangeQuery: String
        let ready: Bool
        /// Some campaign delivered in the range; else the page says so above the campaigns it lists at zero.
        let delivered: Bool
        let hasRows: Bool
        let filtered: Bool
        /// HTML: nothing delivered, from when to when (and in which app).
        let emptyText: String
        /// HTML: how many campaigns delivered (and in which app).
        let countText: String
        let columns: [HeaderCell]
        let rows: [IndexRow]
        /// Whether the page lists a push campaign, whose figures the footnote explains.
        let hasPush: Bool
        let totals: Figures?
        let longerHref: String
        let pagination: PaginationView?
    }

    private struct Entry {
        let campaign: CampaignSummary
        var totals = CampaignStats.Totals()
        var daily: [Int]
    }

    func index(_ context: RequestContext) throws -> Response {
        let query = context.request.query
        let apps = try services.database.apps.all()
        let appID = query["app"].flatMap(Int64.init).flatMap { id in apps.contains { $0.id == id } ? id : nil }
        let column = query["sort"].flatMap(Column.init(rawValue:)) ?? .impressions
        let ascending = query["dir"].map { $0 == "asc" } ?? column.isText
        let page = max(1, query["page"].flatMap(Int.init) ?? 1)
        let requested = ReportRange.read(query, now: context.now)
        let localizer = context.localizer
        let kept = query.pairs.filter { ["app", "sort", "dir"].contains($0.name) }.map { ($0.name, $0.value) }
        let range = RangeView(
            action: "/reports", requested: requested, now: context.now, keep: kept,
            hidden: kept.filter { $0.0 != "app" },
            apps: [SelectOption(value: "", label: localizer("common.all_apps"), selected: appID == nil)]
                + apps.map { SelectOption(value: String($0.id), label: $0.name, selected: $0.id == appID) },
            localizer: localizer)

        guard let days = requested.range else {
            let model = IndexView(
                range: range, problem: requested.problem(localizer), lead: localizer("reports.lead"), caption: "", rangeQuery: "", ready: false,
                delivered: false, hasRows: false, filtered: appID != nil, emptyText: "", countText: "", columns: [], rows: [], hasPush: false, totals: nil, longerHref: "/reports",
                pagination: nil)
            return try services.page(.reports, title: localizer("reports.title"), model: model, context: context, status: 400)
        }

        // One read of the rollups for every campaign, grouped here. Unique devices are left to each
        // campaign's report: counting distinct installations across every campaign scans millions of rows.
        let counts = try services.database.events.counts(campaignID: nil, from: days.from, to: days.to, devices: false)
        var filter = CampaignQuery()
        filter.appID = appID
        filter.pageSize = Int(Int32.max)  // every campaign, for the rows' names and apps; one query
        let campaigns = Dictionary(uniqueKeysWithValues: try services.database.campaigns.list(filter, now: context.now).campaigns.map { ($0.id, $0) })
        let dates = days.days
        let dayIndex = Dictionary(uniqueKeysWithValues: dates.enumerated().map { ($0.element, $0.offset) })
        // Every campaign that has been published and not archived is listed, with zeros until it delivers; a
        // draft or an archived campaign only when it delivered in the range.
        var entries: [Int64: Entry] = [:]
        for campaign in campaigns.values where Self.listedWithoutTraffic.contains(campaign.status) {
            entries[campaign.id] = Entry(campaign: campaign, daily: Array(repeating: 0, count: dates.count))
        }
        for row in counts.rows where !row.test {
            guard let campaign = campaigns[row.campaignID],
                  let type = Self.listedFigure(row.type, push: campaign.layout == Campaign.pushLayout) else { continue }
            entries[row.campaignID, default: Entry(campaign: campaign, daily: Array(repeating: 0, count: dates.count))].totals.add(type, row.count)
            if type == .impression, let index = dayIndex[row.day] {
                entries[row.campaignID]?.daily[index] += row.count
            }
        }
        let sorted = Self.sort(Array(entries.values), by: column, ascending: ascending)
        let (skipped, overflow) = (page - 1).multipliedReportingOverflow(by: Self.pageSize)
        let shown = sorted.dropFirst(overflow ? sorted.count : skipped).prefix(Self.pageSize)

        var sum = CampaignStats.Totals()
        for entry in sorted {
            for kind in EventType.allCases { sum.add(kind, Self.count(kind, in: entry.totals)) }
        }
        let rangeQuery = FormData([("from", days.from), ("to", days.to)]).urlencoded
        func href(_ pairs: [(String, String)]) -> String { "/reports?" + FormData(pairs).urlencoded }
        let base = [("from", days.from), ("to", days.to)] + kept.filter { $0.0 == "app" }
        let columns = Column.allCases.flatMap { candidate -> [HeaderCell] in
            let current = candidate == column
            let direction = current ? (ascending ? "desc" : "asc") : (candidate.isText ? "asc" : "desc")
            let cell = HeaderCell(
                label: candidate.title(localizer), href: href(base + [("sort", candidate.rawValue), ("dir", direction)]), numeric: !candidate.isText,
                ariaSort: current ? (ascending ? "ascending" : "descending") : nil, indicator: current ? (ascending ? "▲" : "▼") : nil)
            let trend = HeaderCell(label: localizer("reports.column.trend"), href: nil, numeric: false, ariaSort: nil, indicator: nil)
            return candidate == .app ? [cell, trend] : [cell]
        }
        let rows = shown.map { entry in
            IndexRow(
                id: entry.campaign.id, name: entry.campaign.name, isPush: entry.campaign.layout == Campaign.pushLayout, app: entry.campaign.appName,
                figures: Figures(entry.totals, localizer),
                spark: Sparkline(id: "trend-\(entry.campaign.id)", dates: dates, impressions: entry.daily, localizer: localizer))
        }
        let appName = appID.flatMap { id in apps.first { $0.id == id }?.name }
        let rangeText = Self.rangeText(days, localizer)
        let from = Markup.escape(localizer.day(days.from)), to = Markup.escape(localizer.day(days.to))
        let emptyText = appName.map { localizer.markup("reports.empty_text_app", ["app": Markup.user($0), "from": from, "to": to]) }
            ?? localizer.markup("reports.empty_text", ["from": from, "to": to])
        let delivered = sorted.count { $0.totals != CampaignStats.Totals() }
        let countText = appName.map { localizer.pluralMarkup("reports.delivered_app", count: delivered, ["app": Markup.user($0)]) }
            ?? Markup.escape(localizer.plural("reports.delivered", count: delivered))
        let model = IndexView(
            range: range, problem: nil, lead: localizer("reports.lead_range", ["range": rangeText]),
            caption: localizer("reports.caption", ["range": rangeText]), rangeQuery: rangeQuery, ready: true, delivered: delivered > 0, hasRows: !rows.isEmpty,
            filtered: appID != nil, emptyText: emptyText, countText: countText,
            columns: columns, rows: Array(rows), hasPush: rows.contains { $0.isPush },
            totals: Figures(sum, localizer),
            longerHref: href(ReportRange.preset(days: 90, now: context.now) + kept.filter { $0.0 == "app" }),
            pagination: PaginationView.make(page: page, pageSize: Self.pageSize, total: sorted.count, localizer: localizer) { number in
                href(query.pairs.filter { $0.name != "page" }.map { ($0.name, $0.value) } + [("page", String(number))])
            })
        return try services.page(.reports, title: localizer("reports.title"), model: model, context: context)
    }

    /// The statuses of the campaigns `/reports` lists even when they delivered nothing in the range.
    static let listedWithoutTraffic: Set<CampaignStatus> = [.scheduled, .running, .paused, .ended]

    /// The column an event counts in on the list: a push campaign's receipts are its impressions and
    /// its opens its clicks (so the click rate is its open rate); an in-app campaign's events are their own.
    private static func listedFigure(_ type: EventType, push: Bool) -> EventType? {
        guard push else { return type }
        switch type {
        case .pushReceived: return .impression
        case .pushOpen: return .click
        case .impression, .click, .dismiss, .error, .conversion: return nil
        }
    }

    private static func count(_ kind: EventType, in totals: CampaignStats.Totals) -> Int {
        switch kind {
        case .impression: totals.impressions
        case .click: totals.clicks
        case .dismiss: totals.dismissals
        case .error: totals.errors
        case .conversion: totals.conversions
        case .pushReceived, .pushOpen: 0
        }
    }

    private static func sort(_ entries: [Entry], by column: Column, ascending: Bool) -> [Entry] {
        func number(_ entry: Entry) -> Double {
            switch column {
            case .impressions: Double(entry.totals.impressions)
            case .clicks: Double(entry.totals.clicks)
            case .ctr: DailyChart.rate(entry.totals.clicks, entry.totals.impressions)
            case .dismissals: Double(entry.totals.dismissals)
            case .errors: Double(entry.totals.errors)
            case .conversions: Double(entry.totals.conversions)
            case .name, .app: 0
            }
        }
        func text(_ entry: Entry) -> String {
            (column == .app ? entry.campaign.appName : entry.campaign.name).lowercased()
        }
        return entries.sorted { a, b in
            if column.isText {
                let (x, y) = (text(a), text(b))
                if x != y { return ascending ? x < y : x > y }
            } else {
                let (x, y) = (number(a), number(b))
                if x != y { return ascending ? x < y : x > y }
            }
            // Ties read in name order, whichever way the column goes.
            let (x, y) = (a.campaign.name.lowercased(), b.campaign.name.lowercased())
            return x != y ? x < y : a.campaign.id < b.campaign.id
        }
    }

    // MARK: One campaign

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

    /// The CSV's columns, in order; their headers are written in the user's language.
    static let csvColumns = ["date", "impressions", "clicks", "ctr", "dismissals", "errors", "conversions"]

    /// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    func campaign(id: Int64) throws -> StoredCampaign {
        guard let stored = try services.database.campaigns.find(id: id) else { throw HTTPError.notFound }
        return stored
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

    /// "21 Nov 2026 to 20 Dec 2026 (30 days)", or the one day.
    static func rangeText(_ range: DayRange, _ localizer: Localizer) -> String {
        guard range.from != range.to else { return localizer.day(range.from) }
        return localizer.plural("reports.range_days", count: range.days.count, ["from": localizer.day(range.from), "to": localizer.day(range.to)])
    }
}

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
