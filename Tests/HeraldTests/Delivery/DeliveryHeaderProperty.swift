import Foundation
import HeraldDomain
@testable import HeraldDelivery
import TestSupport
import Testing

/// What the Swift client reads from outside besides the feed: a server's `Retry-After` and a push's
/// `herald_campaign_id`. Any text or number (huge, negative, fractional, year 0 or 10000, any script)
/// reads without trapping into a wait of 0 s to a day, or an id from 1 to 2^53 − 1, or nothing.
@Suite("Generated inputs: what the delivery client reads from servers and pushes")
struct DeliveryHeaderProperty {
    static let now = Date(timeIntervalSince1970: 1_767_258_000)  // 2026-01-01T09:00:00Z

    static func retryAfter(_ draw: inout Draw) -> String {
        switch draw.int(0...5) {
        case 0: return String(draw.int64(0...Int64.max))
        case 1: return String(repeating: "9", count: draw.int(1...80))
        case 2: return draw.pick(["-1", "0", "1.5", "1e9", " 120 ", "+5", "0x10", "２０", "١٢٠", "NaN", "inf", ""])
        case 3:
            let year = draw.pick([0, 1, 1970, 2026, 9999, 10000, 99999])
            return "\(draw.pick(["Sun", "Mon", "Thu"])), \(String(format: "%02d", draw.int(0...40))) \(draw.pick(["Jan", "Nov", "Foo"])) \(year) \(String(format: "%02d:%02d:%02d", draw.int(0...30), draw.int(0...70), draw.int(0...70))) GMT"
        case 4: return GeneratedText.valid(&draw, maxCharacters: 80)
        default: return "Sunday, 06-Nov-\(String(format: "%02d", draw.int(0...99))) 08:49:37 GMT"
        }
    }

    @Test("Any Retry-After is a wait from 0 s to a day, or unreadable")
    func retryAfterReads() {
        var run = GeneratedRun("Retry-After", cases: 2_000)
        run.run(Generated.cases { draw in Self.retryAfter(&draw) }) { header, run in
            let delay = RetryAfter.delay(header, now: Self.now)
            if let delay {
                run.expect(delay.isFinite && (0...RetryAfter.longest).contains(delay), "read as \(delay) s", input: header)
            }
            run.note(delay == nil ? "unreadable" : delay == RetryAfter.longest ? "a day" : "a wait")
        }
    }

    @Test("Any push payload's herald_campaign_id is an id from 1 to 2^53 − 1 written as digits or a whole number, or none")
    func pushCampaignIDReads() {
        let largest: Int64 = (1 << 53) - 1
        var run = GeneratedRun("push campaign ids", cases: 2_000)
        run.run(Generated.cases { draw -> [AnyHashable: AnyHashable] in
            let value: AnyHashable = switch draw.int(0...5) {
            case 0: draw.int64(Int64.min...Int64.max)
            case 1: Double(draw.int64(-(1 << 62)...(1 << 62))) * draw.pick([1, 0.5, 1e10, -1])
            case 2: String(draw.int64(0...Int64.max))
            case 3: draw.pick(["", "abc", "4.2", "-1", "007", "١٢", String(repeating: "9", count: 40), "1e3"])
            case 4: draw.pick([Double.nan, .infinity, 0x1p70, -0.0])
            default: GeneratedText.valid(&draw, maxCharacters: 20)
            }
            return ["herald_campaign_id": value]
        }) { payload, run in
            let id = DeliveryClient.pushCampaignID(in: payload)
            if let id { run.expect((1...largest).contains(id), "read as \(id)", input: payload) }
            if case let text as String = payload["herald_campaign_id"], let id {
                run.expect(String(id) == String(text.drop { $0 == "0" }), "\(text) read as \(id)", input: payload)
            }
            run.note(id == nil ? "none" : "an id")
        }
    }
}
