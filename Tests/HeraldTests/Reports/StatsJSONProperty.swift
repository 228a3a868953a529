import Foundation
import TestSupport
import Testing
@testable import HeraldConsole
import HeraldDomain
@testable import HeraldStorage

/// `CampaignStats.json`, the stats endpoint's body, is written by hand. For any figures (counts of any size,
/// any rate, names in every script with quotes, backslashes and control characters, a push campaign's section
/// or none, discards that sum past `Int.max`), what it writes parses as JSON to the object the figures make
/// (openapi.yaml's `CampaignStats`), each object's members in the order of their names' bytes.
@Suite("Generated inputs: the stats endpoint's JSON")
struct StatsJSONProperty {
    static func names(_ draw: inout Draw) -> [String: Int] {
        var names: [String: Int] = [:]
        for _ in 0..<draw.int(0...4) {
            let name = switch draw.int(0...3) {
            case 0: draw.pick(["primary", "swipe", "auto", "image_fetch", "", "a\"b", "back\\slash", "tab\there", "\u{01}\u{1F}", "line\nbreak", "carriage\rreturn", "\u{0}"])
            default: GeneratedText.valid(&draw, maxPieces: 2, maxCharacters: 16)
            }
            names[name] = count(&draw)
        }
        return names
    }

    static func count(_ draw: inout Draw) -> Int {
        draw.chance(0.1) ? draw.pick([0, Int.max, Int(Int32.max) + 1]) : draw.int(0...5_000_000)
    }

    static func totals(_ draw: inout Draw) -> CampaignStats.Totals {
        var totals = CampaignStats.Totals()
        for type in EventType.allCases { totals.add(type, draw.int(0...100_000)) }
        if draw.chance(0.2) { totals.ctr = draw.pick([0, 1, 0.1, 1e-05, 0.3333, 123_456.789, .nan, .infinity]) }
        totals.uniqueDevices = count(&draw)
        totals.uniqueDevicesEstimated = draw.chance(0.5)
        return totals
    }

    static func stats(_ draw: inout Draw) -> CampaignStats {
        let range = DayRange(from: "2026-09-01", to: "2026-09-0\(draw.int(1...9))")
        var stats = CampaignStats(counts: EventCounts(rows: [], uniqueDevices: 0, uniqueTestDevices: 0), range: range)
        stats.totals = totals(&draw)
        stats.test = totals(&draw)
        stats.clicksByAction = names(&draw)
        stats.dismissalsByType = names(&draw)
        stats.errorsByCode = names(&draw)
        stats.conversionsByEvent = names(&draw)
        stats.otherConversions = count(&draw)
        stats.discardsByReason = draw.chance(0.5) ? Dictionary(uniqueKeysWithValues: DiscardReason.allCases.map { ($0.rawValue, count(&draw)) }) : names(&draw)
        for name in names(&draw).keys { stats.byPlatform[name] = totals(&draw) }
        stats.byLanguage = names(&draw).keys.map { tag in
            var version = CampaignStats.LanguageTotals(language: tag, counts: [:])
            version.totals = totals(&draw)
            return version
        }
        stats.otherLanguages.totals = totals(&draw)
        if draw.chance(0.8) {
            // Converted devices may outnumber those shown (shown before the range), and either may be none.
            stats.funnelDevices = EventCounts.FunnelDevices(exposed: count(&draw), converted: count(&draw), estimated: draw.chance(0.5))
        }
        for index in stats.daily.indices {
            stats.daily[index].impressions = count(&draw)
            stats.daily[index].ctr = draw.double(0...1)
        }
        if draw.chance(0.5) { stats.push = push(&draw, days: range.days) }
        return stats
    }

    /// A push campaign's figures: any counts, reasons and platforms named in every script.
    static func push(_ draw: inout Draw, days: [String]) -> PushFigures {
        var push = PushFigures()
        push.targeted = count(&draw)
        push.sent = count(&draw)
        push.notSent = count(&draw)
        push.delivered = count(&draw)
        push.opened = count(&draw)
        push.openRate = draw.chance(0.2) ? draw.pick([0, 1, .nan, .infinity, 1e-05]) : draw.double(0...1)
        push.notSentByReason = names(&draw).map { reason, number in
            PushFigures.NotSent(state: draw.pick(["failed", "unregistered", "skipped", "unknown"]), reason: reason, count: number)
        }
        for platform in names(&draw).keys {
            push.byPlatform[platform] = PushFigures.PlatformFigures(targeted: count(&draw), sent: count(&draw), delivered: count(&draw), opened: count(&draw))
        }
        push.daily = days.map { PushFigures.DayFigures(date: $0, sent: count(&draw), delivered: count(&draw), opened: count(&draw)) }
        return push
    }

    /// The object the figures make.
    static func expected(_ stats: CampaignStats) -> JSONValue {
        func number(_ value: Int) -> JSONValue { .number(Double(value)) }
        func rate(_ value: Double) -> JSONValue { .number(value.isFinite ? value : 0) }
        func counts(_ names: [String: Int]) -> JSONValue { .object(names.map { ($0.key, number($0.value)) }) }
        func figures(_ totals: CampaignStats.Totals) -> [(key: String, value: JSONValue)] {
            [("impressions", number(totals.impressions)), ("clicks", number(totals.clicks)), ("dismissals", number(totals.dismissals)),
             ("errors", number(totals.errors)), ("conversions", number(totals.conversions)), ("ctr", rate(totals.ctr))]
        }
        func totals(_ totals: CampaignStats.Totals) -> JSONValue {
            .object(figures(totals) + [("uniqueDevices", number(totals.uniqueDevices)), ("uniqueDevicesEstimated", .bool(totals.uniqueDevicesEstimated))])
        }
        func version(_ version: CampaignStats.LanguageTotals) -> JSONValue {
            .object(figures(version.totals) + (version.language.map { [("language", JSONValue.string($0))] } ?? []))
        }
        func push(_ push: PushFigures) -> JSONValue {
            .object([
                ("targeted", number(push.targeted)), ("sent", number(push.sent)), ("notSent", number(push.notSent)),
                ("notSentByReason", .array(push.notSentByReason.map { kind in
                    .object([("state", .string(kind.state)), ("reason", .string(kind.reason)), ("count", number(kind.count))])
                })),
                ("delivered", number(push.delivered)), ("opened", number(push.opened)), ("openRate", rate(push.openRate)),
                ("byPlatform", .object(push.byPlatform.map { platform, figures in
                    (platform, .object([("targeted", number(figures.targeted)), ("sent", number(figures.sent)),
                                        ("delivered", number(figures.delivered)), ("opened", number(figures.opened))]))
                })),
                ("daily", .array(push.daily.map { day in
                    .object([("date", .string(day.date)), ("sent", number(day.sent)), ("delivered", number(day.delivered)), ("opened", number(day.opened))])
                })),
            ])
        }
        func funnel() -> JSONValue {
            let devices = stats.funnelDevices ?? EventCounts.FunnelDevices(exposed: 0, converted: 0, estimated: false)
            // Rounded to four places, as the CTR is; none before a device was shown.
            let rate: JSONValue = devices.exposed == 0 ? .null : .number((Double(devices.converted) / Double(devices.exposed) * 10_000).rounded() / 10_000)
            // Chosen is shown plus every discard, at most Int.max.
            let chosen = stats.discardsByReason.values.reduce(stats.totals.impressions) { $0 > Int.max - $1 ? Int.max : $0 + $1 }
            return .object([
                ("chosen", number(chosen)), ("shown", number(stats.totals.impressions)), ("clicked", number(stats.totals.clicks)),
                ("converted", number(stats.totals.conversions)), ("shownDevices", number(devices.exposed)),
                ("convertedDevices", number(devices.converted)), ("devicesEstimated", .bool(devices.estimated)), ("conversionRate", rate),
            ])
        }
        return .object((stats.push.map { [("push", push($0))] } ?? []) + [
            ("from", .string(stats.from)), ("to", .string(stats.to)), ("totals", totals(stats.totals)), ("test", totals(stats.test)),
            ("clicksByAction", counts(stats.clicksByAction)), ("dismissalsByType", counts(stats.dismissalsByType)),
            ("errorsByCode", counts(stats.errorsByCode)), ("conversionsByEvent", counts(stats.conversionsByEvent)),
            ("otherConversions", number(stats.otherConversions)), ("byPlatform", .object(stats.byPlatform.map { ($0.key, totals($0.value)) })),
            ("discardsByReason", counts(stats.discardsByReason)),
            ("funnel", funnel()),
            ("byLanguage", .array(stats.byLanguage.map(version))), ("otherLanguages", version(stats.otherLanguages)),
            ("daily", .array(stats.daily.map { day in
                .object([
                    ("date", .string(day.date)), ("impressions", number(day.impressions)), ("clicks", number(day.clicks)),
                    ("dismissals", number(day.dismissals)), ("errors", number(day.errors)), ("conversions", number(day.conversions)),
                    ("ctr", rate(day.ctr)),
                ])
            })),
        ])
    }

    /// Each object's member names as written, in order (a name is a key when a colon follows its string).
    static func keysAreOrdered(_ bytes: [UInt8]) -> Bool {
        var names: [[[UInt8]]] = []
        var index = 0
        var current: [UInt8] = []
        var inString = false
        var lastString: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    // The escapes the writer uses, read back to the byte they stand for.
                    switch bytes[index + 1] {
                    case UInt8(ascii: "n"): current.append(0x0A)
                    case UInt8(ascii: "r"): current.append(0x0D)
                    case UInt8(ascii: "t"): current.append(0x09)
                    case UInt8(ascii: "u"):
                        let hex = String(decoding: bytes[min(index + 2, bytes.count)..<min(index + 6, bytes.count)], as: UTF8.self)
                        current.append(UInt8(hex, radix: 16) ?? 0xFF)
                        index += 4
                    default: current.append(bytes[index + 1])
                    }
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    inString = false
                    lastString = current
                } else {
                    current.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
                current = []
            } else if byte == UInt8(ascii: "{") {
                names.append([])
            } else if byte == UInt8(ascii: "}") {
                guard let closed = names.popLast(), zip(closed, closed.dropFirst()).allSatisfy({ $0.lexicographicallyPrecedes($1) }) else {
                    return false
                }
            } else if byte == UInt8(ascii: ":"), !names.isEmpty {
                names[names.count - 1].append(lastString)
            }
            index += 1
        }
        return names.isEmpty
    }

    @Test func theBodyParsesAsTheFiguresInTheOrderOfTheirNames() throws {
        var run = GeneratedRun("the stats endpoint's JSON", cases: 1500)
        run.run(Generated.cases { draw in Self.stats(&draw) }) { stats, run in
            let bytes = stats.json
            let difference = firstDifference(try JSONValue.parse(bytes), Self.expected(stats))
            run.expect(difference == nil, "differs at \(difference ?? "")", input: stats)
            run.expect(Self.keysAreOrdered(bytes), "members out of order: \(String(decoding: bytes, as: UTF8.self))", input: stats)
            run.note(stats.byLanguage.isEmpty ? "no languages" : "languages")
            run.note(stats.push == nil ? "in-app" : "push")
        }
    }
}
