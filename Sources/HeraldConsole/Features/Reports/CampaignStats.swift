import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// A range of UTC days, inclusive, as reports and the stats endpoint take it.
struct DayRange: Sendable, Equatable {
    let from: String
    let to: String

    static let longest = 366

    /// Why a requested range cannot be read; `message` for the API, the report pages say it in the user's language.
    enum Problem: Error, Equatable {
        case notADay(field: String, text: String)
        case backwards(from: String, to: String)
        case tooLong

        /// For the API: names the query parameter.
        var message: String {
            switch self {
            case .notADay(let field, _): "`\(field)` must be a day \(UTCTime.supportedText), such as 2026-11-21."
            case .backwards: "`from` must not be after `to`."
            case .tooLong: "A range covers at most \(DayRange.longest) days."
            }
        }
    }

    /// `from`/`to` as given (`YYYY-MM-DD`), or the last `defaultDays` days ending `to` (or today); the
    /// default start never reaches before the first supported day.
    static func parse(from: String?, to: String?, now: Date, defaultDays: Int = 30) throws(Problem) -> DayRange {
        let today = UTCTime.day(now)
        let givenStart = try from.map { text throws(Problem) in
            guard let date = UTCTime.date(day: text) else { throw .notADay(field: "from", text: text) }
            return date
        }
        guard let endDate = UTCTime.date(day: to ?? today) else { throw .notADay(field: "to", text: to ?? today) }
        let startDate: Date
        if let givenStart {
            startDate = givenStart
        } else {
            startDate = max(endDate.addingTimeInterval(-Double(defaultDays - 1) * 86_400), UTCTime.supported.lowerBound)
        }
        guard startDate <= endDate else { throw .backwards(from: UTCTime.day(startDate), to: UTCTime.day(endDate)) }
        guard endDate.timeIntervalSince(startDate) / 86_400 < Double(longest) else { throw .tooLong }
        return DayRange(from: UTCTime.day(startDate), to: UTCTime.day(endDate))
    }

    /// Every day of the range, in order (at most `longest`).
    var days: [String] {
        guard var day = UTCTime.date(day: from), let last = UTCTime.date(day: to) else { return [] }
        var result: [String] = []
        while day <= last && result.count < Self.longest {
            result.append(UTCTime.day(day))
            day = day.addingTimeInterval(86_400)
        }
        return result
    }
}

/// What happened to one campaign (or all) over a range: the stats endpoint's body (`json`), and the report's data.
struct CampaignStats: Sendable, Equatable {
    struct Totals: Sendable, Equatable {
        var impressions = 0
        var clicks = 0
        var dismissals = 0
        var errors = 0
        var conversions = 0
        var uniqueDevices = 0
        /// `uniqueDevices` is estimated from daily sketches (about 1.6 % standard error), not counted:
        /// the range held more devices than are counted exactly (`EventStore.exactDeviceChunkLimit`).
        var uniqueDevicesEstimated = false
        /// Clicks per impression, 0 when there are none.
        var ctr: Double = 0

        mutating func add(_ type: EventType, _ count: Int) {
            switch type {
            case .impression: impressions += count
            case .click: clicks += count
            case .dismiss: dismissals += count
            case .error: errors += count
            case .conversion: conversions += count
            // Push receipts and opens belong to push campaigns' own figures, not to these.
            case .pushReceived, .pushOpen: break
            }
            ctr = impressions == 0 ? 0 : (Double(clicks) / Double(impressions) * 10_000).rounded() / 10_000
        }
    }

    /// Real traffic for one language version shown.
    struct LanguageTotals: Sendable, Equatable {
        /// The version's tag; absent for the default version (and in `otherLanguages`).
        var language: String?
        /// Written beside `language`, without `uniqueDevices`: devices are not counted per language.
        var totals = Totals()

        init(language: String?, counts: [EventType: Int]) {
            self.language = language
            for (type, count) in counts { totals.add(type, count) }
        }
    }

    struct Day: Sendable, Equatable {
        let date: String
        var impressions = 0
        var clicks = 0
        var dismissals = 0
        var errors = 0
        var conversions = 0
        var ctr: Double = 0
    }

    var from: String
    var to: String
    var totals = Totals()
    var clicksByAction: [String: Int] = [:]
    var dismissalsByType: [String: Int] = [:]
    var errorsByCode: [String: Int] = [:]
    /// The most recorded conversion events (at most `EventCounts.topConversionEvents`)...
    var conversionsByEvent: [String: Int] = [:]
    /// ...and the conversions of all the others, so the answer stays small whatever names an app records.
    var otherConversions = 0
    var byPlatform: [String: Totals] = [:]
    /// The languages shown most (at most `EventCounts.topLanguages`), most impressions first...
    var byLanguage: [LanguageTotals] = []
    /// ...and every other language shown, summed.
    var otherLanguages = LanguageTotals(language: nil, counts: [:])
    var daily: [Day] = []
    /// Test devices' events, kept apart.
    var test = Totals()
    /// A push campaign's own figures: its send, and its receipts and opens; nil for an in-app campaign.
    var push: PushFigures?
    /// Messages devices chose and did not show (real traffic), by reason (`DiscardReason`).
    var discardsByReason: [String: Int] = [:]
    /// Real traffic's devices shown the message and devices that converted (`funnel`).
    var funnelDevices: EventCounts.FunnelDevices?

    /// From chosen to clicked: every message a device chose for a trigger (shown, or discarded for a reason),
    /// those shown (impressions), those clicked.
    struct Funnel: Sendable, Equatable {
        var chosen = 0
        var shown = 0
        var clicked = 0
        /// Conversion events: those the app attributes to a message and those of the campaign's goal.
        var converted = 0
        /// Unique devices shown the message (an impression) and unique devices that converted, each counted
        /// once however many events it sent; kept since migration 0024.
        var shownDevices = 0
        var convertedDevices = 0
        /// Either device count is estimated from sketches (about 1.6 % standard error), not counted.
        var devicesEstimated = false

        /// Converted devices ÷ devices shown; nil before any device was shown. Above 1 when devices shown
        /// before the range converted in it.
        var conversionRate: Double? { shownDevices > 0 ? Double(convertedDevices) / Double(shownDevices) : nil }
    }

    /// Chosen is shown plus discarded (at most `Int.max`: counts this large are never real, but never trap).
    var funnel: Funnel {
        let chosen = discardsByReason.values.reduce(totals.impressions) { sum, count in
            let (added, overflow) = sum.addingReportingOverflow(count)
            return overflow ? Int.max : added
        }
        return Funnel(
            chosen: chosen, shown: totals.impressions, clicked: totals.clicks, converted: totals.conversions,
            shownDevices: funnelDevices?.exposed ?? 0, convertedDevices: funnelDevices?.converted ?? 0, devicesEstimated: funnelDevices?.estimated ?? false)
    }

    init(counts: EventCounts, range: DayRange) {
        from = range.from
        to = range.to
        var days = Dictionary(uniqueKeysWithValues: range.days.map { ($0, Totals()) })
        for row in counts.rows {
            if row.test {
                test.add(row.type, row.count)
                continue
            }
            totals.add(row.type, row.count)
            byPlatform[row.platform, default: Totals()].add(row.type, row.count)
            days[row.day]?.add(row.type, row.count)
            switch row.type {
            case .click: clicksByAction[row.detail, default: 0] += row.count
            case .dismiss: dismissalsByType[row.detail, default: 0] += row.count
            case .error: errorsByCode[row.detail, default: 0] += row.count
            case .conversion, .impression, .pushReceived, .pushOpen: break
            }
        }
        conversionsByEvent = Dictionary(counts.topConversions.map { ($0.event, $0.count) }, uniquingKeysWith: +)
        otherConversions = counts.otherConversions
        discardsByReason = Dictionary(counts.discards.map { ($0.key.rawValue, $0.value) }, uniquingKeysWith: +)
        funnelDevices = counts.funnelDevices
        byLanguage = counts.topLanguages.map { LanguageTotals(language: $0.language, counts: $0.counts) }
        otherLanguages = LanguageTotals(language: nil, counts: counts.otherLanguages)
        totals.uniqueDevices = counts.uniqueDevices
        totals.uniqueDevicesEstimated = counts.uniqueDevicesEstimated
        for (platform, devices) in counts.uniqueDevicesByPlatform {
            byPlatform[platform, default: Totals()].uniqueDevices = devices
            byPlatform[platform]?.uniqueDevicesEstimated = counts.uniqueDevicesEstimated
        }
        test.uniqueDevices = counts.uniqueTestDevices
        test.uniqueDevicesEstimated = counts.uniqueTestDevicesEstimated
        daily = range.days.map { date in
            let day = days[date] ?? Totals()
            return Day(date: date, impressions: day.impressions, clicks: day.clicks, dismissals: day.dismissals,
                       errors: day.errors, conversions: day.conversions, ctr: day.ctr)
        }
    }

    /// The stats endpoint's body (docs/openapi.yaml, `CampaignStats`), each object's members in the order of
    /// their names' bytes.
    var json: [UInt8] {
        var json = JSONWriter()
        json.open()
        json.key("byLanguage")
        json.openArray()
        for version in byLanguage {
            json.element()
            Self.write(version, into: &json)
        }
        json.closeArray()
        json.key("byPlatform")
        json.objectByName(byPlatform) { totals, json in Self.write(totals, into: &json) }
        json.key("clicksByAction")
        Self.write(clicksByAction, into: &json)
        json.key("conversionsByEvent")
        Self.write(conversionsByEvent, into: &json)
        json.key("daily")
        json.openArray()
        for day in daily {
            json.element()
            json.open()
            json.member("clicks", day.clicks)
            json.member("conversions", day.conversions)
            json.member("ctr", day.ctr)
            json.member("date", day.date)
            json.member("dismissals", day.dismissals)
            json.member("errors", day.errors)
            json.member("impressions", day.impressions)
            json.close()
        }
        json.closeArray()
        json.key("discardsByReason")
        Self.write(discardsByReason, into: &json)
        json.key("dismissalsByType")
        Self.write(dismissalsByType, into: &json)
        json.key("errorsByCode")
        Self.write(errorsByCode, into: &json)
        json.member("from", from)
        let funnel = funnel
        json.key("funnel")
        json.open()
        json.member("chosen", funnel.chosen)
        json.member("clicked", funnel.clicked)
        json.member("conversionRate", funnel.conversionRate.map { ($0 * 10_000).rounded() / 10_000 })
        json.member("converted", funnel.converted)
        json.member("convertedDevices", funnel.convertedDevices)
        json.member("devicesEstimated", funnel.devicesEstimated)
        json.member("shown", funnel.shown)
        json.member("shownDevices", funnel.shownDevices)
        json.close()
        json.member("otherConversions", otherConversions)
        json.key("otherLanguages")
        Self.write(otherLanguages, into: &json)
        if let push {
            json.key("push")
            push.write(into: &json)
        }
        json.key("test")
        Self.write(test, into: &json)
        json.member("to", to)
        json.key("totals")
        Self.write(totals, into: &json)
        json.close()
        return json.bytes
    }

    private static func write(_ totals: Totals, into json: inout JSONWriter) {
        json.open()
        writeFigures(totals, into: &json)
        json.member("uniqueDevices", totals.uniqueDevices)
        json.member("uniqueDevicesEstimated", totals.uniqueDevicesEstimated)
        json.close()
    }

    /// A language version's figures, without `uniqueDevices` (devices are not counted per language).
    private static func write(_ version: LanguageTotals, into json: inout JSONWriter) {
        json.open()
        writeFigures(version.totals, into: &json)
        json.member("language", version.language)
        json.close()
    }

    /// The members every set of figures has, which come first in the order of names.
    private static func writeFigures(_ totals: Totals, into json: inout JSONWriter) {
        json.member("clicks", totals.clicks)
        json.member("conversions", totals.conversions)
        json.member("ctr", totals.ctr)
        json.member("dismissals", totals.dismissals)
        json.member("errors", totals.errors)
        json.member("impressions", totals.impressions)
    }

    private static func write(_ counts: [String: Int], into json: inout JSONWriter) {
        json.objectByName(counts) { count, json in json.integer(count) }
    }
}
