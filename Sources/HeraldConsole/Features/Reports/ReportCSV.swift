import Foundation
import HeraldHTTP

extension ReportPages {
    /// `GET /campaigns/{id}/report.csv`: the daily rows of the range, then, after an empty line, the same
    /// figures per language shown, then the funnel's stages and the discards by reason; test devices left out. The daily section keeps its columns, and the
    /// language section has the same ones with a language column in place of the date (the default
    /// version and the languages past the first `EventCounts.topLanguages` labelled in words), so a
    /// spreadsheet's formulas work on either. Headers and those labels are in the user's language; the
    /// figures stay as programs read them (ISO days, plain digits, CTR as a fraction).
    func csv(_ context: RequestContext) throws -> Response {
        let l = context.localizer
        let stored = try campaign(id: try context.id("id"))
        let requested = ReportRange.read(context.request.query, now: context.now)
        guard let days = requested.range else { throw HTTPError(400, requested.problem(l) ?? "") }
        let counts = try services.database.events.counts(campaignID: stored.id, from: days.from, to: days.to)
        let stats = CampaignStats(counts: counts, range: days)
        func header(first: String) -> String {
            ([first] + Self.csvColumns.dropFirst()).map { Self.csvField(l("reports.csv." + $0)) }.joined(separator: ",")
        }
        var lines = [header(first: "date")]
        for day in stats.daily {
            lines.append(Self.csvLine(day.date, day.impressions, day.clicks, day.dismissals, day.errors, day.conversions))
        }
        lines += ["", header(first: "language")]
        let other = stats.otherLanguages.totals
        let languages = stats.byLanguage.map { ($0.language ?? l("reports.languages.default_version"), $0.totals) }
            + (other == CampaignStats.Totals() ? [] : [(l("reports.languages.other_languages"), other)])
        for (label, row) in languages {
            lines.append(Self.csvLine(Self.csvField(label), row.impressions, row.clicks, row.dismissals, row.errors, row.conversions))
        }
        lines += Self.funnelCSV(stats, l)
        // A push campaign's days: sent (from the outbox), delivered and opened (reported by its apps).
        if stored.campaign.channel == .push {
            let push = try PushReport(campaignID: stored.id, outbox: services.database.pushOutbox, counts: counts, range: days, localizer: l)
            lines += ["", ["date", "push_sent", "push_delivered", "push_opened"].map { Self.csvField(l("reports.csv." + $0)) }.joined(separator: ",")]
            lines += push.dayRows.map { "\($0.date),\($0.sent),\($0.delivered),\($0.opened)" }
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

    /// The CSV's columns, in order; their headers are written in the user's language.
    static let csvColumns = ["date", "impressions", "clicks", "ctr", "dismissals", "errors", "conversions"]

    /// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
