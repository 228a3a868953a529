import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/reports` and `/campaigns/{id}/report`: what campaigns delivered over a range of UTC days, read from the rollups only.
/// The list of campaigns is in ReportsIndexPage.swift, one campaign's report in CampaignReportPage.swift, its CSV in
/// ReportCSV.swift, the range both read and pick in ReportRange.swift; what they share is here.
struct ReportPages: Sendable {
    let services: Services
    static let pageSize = 50

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


    func campaign(id: Int64) throws -> StoredCampaign {
        guard let stored = try services.database.campaigns.find(id: id) else { throw HTTPError.notFound }
        return stored
    }

    /// "21 Nov 2026 to 20 Dec 2026 (30 days)", or the one day.
    static func rangeText(_ range: DayRange, _ localizer: Localizer) -> String {
        guard range.from != range.to else { return localizer.day(range.from) }
        return localizer.plural("reports.range_days", count: range.days.count, ["from": localizer.day(range.from), "to": localizer.day(range.to)])
    }
}
