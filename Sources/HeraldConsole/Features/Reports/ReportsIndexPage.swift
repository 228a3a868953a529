import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/reports`: every campaign's figures over a range of UTC days, sortable by each column, a page at a time.
extension ReportPages {
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
}
