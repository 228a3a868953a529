import Foundation
import HeraldHTTP

extension ReportPages {
    /// `GET /campaigns/{id}/report.csv`: the daily rows of the range, then, after an empty line, the same
    /// figures per language shown; test devices left out. The daily section keeps its columns, and the
    /// language section has the same ones with `language` in place of `date` (`default` for the default
    /// version, `other` for the languages past the first `EventStore.topLanguages`), so a spreadsheet's
    /// formulas work on either.
    func csv(_ context: RequestContext) throws -> Response {
        let stored = try campaign(id: try context.id("id"))
        let requested = ReportRange.read(context.request.query, now: context.now)
        guard let days = requested.range else { throw HTTPError(400, requested.problem ?? "Choose a valid range of days.") }
        let stats = CampaignStats(counts: try services.database.events.counts(campaignID: stored.id, from: days.from, to: days.to), range: days)
        var lines = ["date,impressions,clicks,ctr,dismissals,errors,conversions"]
        for day in stats.daily {
            lines.append(Self.csvLine(day.date, day.impressions, day.clicks, day.dismissals, day.errors, day.conversions))
        }
        lines += ["", "language,impressions,clicks,ctr,dismissals,errors,conversions"]
        let other = stats.otherLanguages.totals
        let languages = stats.byLanguage.map { ($0.language ?? "default", $0.totals) } + (other == CampaignStats.Totals() ? [] : [("other", other)])
        for (label, row) in languages {
            // A tag is letters, digits and hyphens (validated at ingestion), so it needs no quoting.
            lines.append(Self.csvLine(label, row.impressions, row.clicks, row.dismissals, row.errors, row.conversions))
        }
        let filename = "campaign-\(stored.id)-report-\(days.from)-to-\(days.to).csv"
        return Response(
            status: 200,
            headers: HTTPHeaders([
                ("Content-Type", "text/csv; charset=utf-8"),
                ("Content-Disposition", "attachment; filename=\"\(filename)\""),
            ]),
            body: Array((lines.joined(separator: "\r\n") + "\r\n").utf8))
    }

    private static func csvLine(_ first: String, _ impressions: Int, _ clicks: Int, _ dismissals: Int, _ errors: Int, _ conversions: Int) -> String {
        let ctr = String(format: "%.4f", DailyChart.rate(clicks, impressions))
        return "\(first),\(impressions),\(clicks),\(ctr),\(dismissals),\(errors),\(conversions)"
    }
}
