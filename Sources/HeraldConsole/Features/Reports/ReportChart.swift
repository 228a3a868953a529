import Foundation
import HeraldDomain

/// A report's daily chart: impressions and clicks as bars on the left axis, CTR as a line on the right axis.
/// The geometry is computed here and `reports/chart` only places the shapes, because the CSP allows neither
/// inline styles nor inline scripts: the chart is plain SVG with presentation attributes and CSS classes.
struct DailyChart: Sendable {
    struct Tick: Sendable, TemplateFields {
        /// The x (day ticks) or y (value ticks) position.
        let at: String
        let label: String

        var templateFields: [(String, Any)] { [("at", at), ("label", label)] }
    }

    static let width = 960.0
    static let height = 320.0
    static let marginLeft = 64.0
    static let marginRight = 64.0
    static let marginTop = 32.0
    static let marginBottom = 44.0
    /// Points are drawn only while they stay apart; past this the line alone reads better.
    static let mostPoints = 62

    let viewBox = "0 0 \(Int(width)) \(Int(height))"
    let plotLeft: String
    let plotRight: String
    let plotBottom: String
    let tickEnd: String
    let valueLabelX: String
    let rateLabelX: String
    let dayLabelY: String
    let axisTitleY: String
    let frameWidth = Self.number(Self.width)
    let valueTicks: [Tick]
    let rateTicks: [Tick]
    let dayTicks: [Tick]
    /// Each day's group (a hover area with the day's figures as its title, the impressions bar, the clicks
    /// bar over it), as SVG written here rather than by the template: a 90-day chart is a thousand
    /// coordinates, and Mustache's lookups of each cost more than the rest of the page.
    let dayMarks: String
    /// The CTR points, each titled with its day's figures, when there are few enough to stay apart.
    let pointMarks: String
    let showsPoints: Bool
    /// The CTR line's `points`.
    let ratePoints: String
    /// One sentence for the chart's accessible name.
    let summary: String
    /// The axes' titles.
    let countsTitle: String
    let rateTitle: String

    init(days: [ReportPages.DayText], localizer: Localizer) {
        let daily = days.map(\.day)
        let left = Self.marginLeft, right = Self.width - Self.marginRight
        let top = Self.marginTop, bottom = Self.height - Self.marginBottom
        let count = max(1, daily.count)

        let largest = daily.map { max($0.impressions, $0.clicks) }.max() ?? 0
        let valueStep = max(1, Int(Self.niceStep(Double(max(1, largest)) / 4).rounded(.up)))
        let intervals = max(1, Int((Double(max(1, largest)) / Double(valueStep)).rounded(.up)))
        let valueTop = Double(valueStep * intervals)
        // The CTR axis shares the gridlines: same number of intervals, its own nice step.
        let rates = daily.map { Self.rate($0.clicks, $0.impressions) }
        let rateStep = Self.niceStep(max(rates.max() ?? 0, 0.01) / Double(intervals))
        let rateTop = rateStep * Double(intervals)

        func y(_ value: Double, of top: Double) -> Double { bottom - (bottom - Self.marginTop) * value / top }
        let slot = (right - left) / Double(count)
        let barWidth = min(48, slot * (slot >= 6 ? 0.7 : 0.9))
        let clickWidth = slot >= 6 ? barWidth * 0.5 : barWidth

        showsPoints = daily.count <= Self.mostPoints
        var dayMarks = "", pointMarks = ""
        dayMarks.reserveCapacity(daily.count * 400)
        var points: [String] = []
        let titles = DayTitles(localizer)
        for (index, text) in days.enumerated() {
            let day = text.day
            let center = left + slot * (Double(index) + 0.5)
            let barY = y(Double(day.impressions), of: valueTop)
            let clickY = y(Double(day.clicks), of: valueTop)
            let pointY = y(rates[index], of: rateTop)
            let title = Markup.escape(titles(text))
            points.append("\(Self.number(center)),\(Self.number(pointY))")
            dayMarks += "<g class=\"chart-day\"><title>\(title)</title>"
            dayMarks += "<rect class=\"chart-slot\" x=\"\(Self.number(left + slot * Double(index)))\" y=\"\(Self.number(top))\" "
                + "width=\"\(Self.number(slot))\" height=\"\(Self.number(bottom - top))\"/>"
            dayMarks += "<rect class=\"chart-bar chart-impressions\" x=\"\(Self.number(center - barWidth / 2))\" y=\"\(Self.number(barY))\" "
                + "width=\"\(Self.number(barWidth))\" height=\"\(Self.number(bottom - barY))\"/>"
            dayMarks += "<rect class=\"chart-bar chart-clicks\" x=\"\(Self.number(center - clickWidth / 2))\" y=\"\(Self.number(clickY))\" "
                + "width=\"\(Self.number(clickWidth))\" height=\"\(Self.number(bottom - clickY))\"/></g>\n"
            if showsPoints {
                pointMarks += "<circle class=\"chart-point\" cx=\"\(Self.number(center))\" cy=\"\(Self.number(pointY))\" r=\"3.5\"><title>\(title)</title></circle>"
            }
        }
        self.dayMarks = dayMarks
        self.pointMarks = pointMarks

        plotLeft = Self.number(left)
        plotRight = Self.number(right)
        plotBottom = Self.number(bottom)
        tickEnd = Self.number(bottom + 5)
        valueLabelX = Self.number(left - 8)
        rateLabelX = Self.number(right + 8)
        dayLabelY = Self.number(bottom + 20)
        axisTitleY = Self.number(top - 14)
        valueTicks = (0...intervals).map {
            Tick(at: Self.number(y(Double($0 * valueStep), of: valueTop)), label: localizer.number($0 * valueStep))
        }
        rateTicks = (0...intervals).map {
            Tick(at: Self.number(y(Double($0) * rateStep, of: rateTop)), label: Self.percentLabel(Double($0) * rateStep, localizer))
        }
        dayTicks = Self.dayTickIndices(daily.map(\.date), localizer).map { index, label in
            Tick(at: Self.number(left + slot * (Double(index) + 0.5)), label: label)
        }
        ratePoints = points.joined(separator: " ")
        let first = daily.first?.date ?? "", last = daily.last?.date ?? ""
        summary = localizer("reports.chart.summary", ["from": localizer.day(first), "to": localizer.day(last)])
        countsTitle = localizer("reports.chart.axis_counts")
        rateTitle = localizer("reports.chart.axis_rate")
    }

    static func rate(_ part: Int, _ whole: Int) -> Double {
        whole == 0 ? 0 : Double(part) / Double(whole)
    }

    /// Each day's title ("21 Nov 2026: 1,204 impressions, …"), from strings looked up once for the chart:
    /// a dictionary of arguments for each of a 90-day chart's 360 fills was a tenth of the page's time.
    struct DayTitles {
        let sentence: String
        let impressions: Localizer.PluralForms
        let clicks: Localizer.PluralForms
        let conversions: Localizer.PluralForms

        init(_ localizer: Localizer) {
            sentence = localizer("reports.chart.day")
            impressions = localizer.plural("reports.chart.impressions")
            clicks = localizer.plural("reports.chart.clicks")
            conversions = localizer.plural("reports.chart.conversions")
        }

        func callAsFunction(_ text: ReportPages.DayText) -> String {
            ProblemText.fill(sentence) { name in
                switch name {
                case "day": text.date
                case "impressions": impressions(text.day.impressions)
                case "clicks": clicks(text.day.clicks)
                case "ctr": text.figures.ctr
                case "conversions": conversions(text.day.conversions)
                default: nil
                }
            }
        }
    }

    /// 1, 2, 2.5 or 5 times a power of ten, at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0 else { return 1 }
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        let fraction = raw / magnitude
        let nice: Double = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10
        return nice * magnitude
    }

    /// Which days get a label: every day, or every few days, so at most 12 labels; past three months, each
    /// month's first day. Days are UTC days, written as every date on the page is (`Localizer.formatted`,
    /// its calendar and month names).
    static func dayTickIndices(_ dates: [String], _ localizer: Localizer) -> [(Int, String)] {
        let calendar = localizer.calendar(in: .gmt)
        func label(_ date: Date, _ style: Date.FormatStyle) -> String { localizer.formatted(date, style, in: .gmt) }
        let days = dates.map { UTCTime.date(day: $0) }
        if dates.count > 92 {
            return days.enumerated().compactMap { index, date in
                guard let date, calendar.component(.day, from: date) == 1 else { return nil }
                let first = calendar.component(.month, from: date) == 1 || index < 31
                return (index, label(date, first ? Date.FormatStyle().month(.abbreviated).year() : Date.FormatStyle().month(.abbreviated)))
            }
        }
        let step = [1, 2, 3, 7, 14].first { (dates.count + $0 - 1) / $0 <= 12 } ?? 14
        return stride(from: 0, to: dates.count, by: step).map { index in
            (index, days[index].map { label($0, Date.FormatStyle().month(.abbreviated).day()) } ?? dates[index])
        }
    }

    /// An axis label: the share with up to two decimals, in the language's digits and percent sign.
    static func percentLabel(_ ratio: Double, _ localizer: Localizer) -> String {
        guard ratio.isFinite else { return "–" }
        return ratio.formatted(.percent.precision(.fractionLength(0...2)).locale(localizer.language.locale))
    }

    /// A coordinate with one decimal: short, and never in exponent notation. Written from whole tenths:
    /// `String(format:)` for each of a 90-day chart's thousand coordinates was a tenth of the page's time.
    static func number(_ value: Double) -> String {
        // Coordinates lie within the 960 × 320 frame; anything else (never expected) is pinned to it.
        let tenths = Int((min(max(value.isNaN ? 0 : value, -1e6), 1e6) * 10).rounded())
        let whole = String(abs(tenths) / 10), fraction = abs(tenths) % 10
        let sign = tenths < 0 ? "-" : ""
        return fraction == 0 ? sign + whole : sign + whole + "." + String(fraction)
    }
}

/// A row's trend on the all-campaigns report: daily impressions as a small line, scaled to the row's busiest day.
struct Sparkline: Sendable {
    static let width = 120.0
    static let height = 28.0

    let id: String
    let line: String
    let area: String
    /// What the line shows, for screen readers (the SVG's `<title>`).
    let title: String

    init(id: String, dates: [String], impressions: [Int], localizer: Localizer) {
        self.id = id
        let top = Double(max(1, impressions.max() ?? 0))
        let inset = 2.0
        func y(_ value: Int) -> Double { Self.height - inset - (Self.height - 2 * inset) * Double(value) / top }
        var coordinates: [(Double, Double)]
        if impressions.count == 1 {
            coordinates = [(0, y(impressions[0])), (Self.width, y(impressions[0]))]
        } else {
            let step = Self.width / Double(max(1, impressions.count - 1))
            coordinates = impressions.enumerated().map { (Double($0.offset) * step, y($0.element)) }
        }
        let points = coordinates.map { "\(DailyChart.number($0.0)),\(DailyChart.number($0.1))" }
        line = points.joined(separator: " ")
        area = (["0,\(DailyChart.number(Self.height))"] + points + ["\(DailyChart.number(Self.width)),\(DailyChart.number(Self.height))"])
            .joined(separator: " ")
        let total = impressions.reduce(0, +)
        let from = localizer.day(dates.first ?? ""), to = localizer.day(dates.last ?? "")
        if total == 0 {
            title = localizer("reports.chart.spark_none", ["from": from, "to": to])
        } else {
            let peak = impressions.max() ?? 0
            let peakDay = dates[impressions.firstIndex(of: peak) ?? 0]
            title = localizer("reports.chart.spark", ["from": from, "to": to, "day": localizer.day(peakDay), "count": localizer.number(peak)])
        }
    }
}

/// Figures as the report pages show them.
enum ReportFormat {
    /// `part` per `whole` as a percentage with always one decimal, so a column's figures line up, in the
    /// language's digits and percent sign; a dash when there is no `whole`.
    static func percent(_ part: Int, of whole: Int, _ localizer: Localizer) -> String {
        guard whole != 0 else { return "—" }
        return localizer.language.numberWriter?.percent(part, of: whole) ?? NumberWriter.foundationPercent(part, of: whole, localizer.language.locale)
    }
}
