import Foundation
import TestSupport
import HeraldDomain

/// One generated discard count (`DiscardCount`): its JSON, and what it adds when the documented rules keep it.
struct GeneratedDiscard: Sendable {
    struct Kept: Sendable, Hashable {
        let id: String
        let campaign: Int
        let reason: String
        let day: String
        let count: Int
        let test: Bool
    }

    let json: JSONValue
    /// nil when a rule refuses it.
    let kept: Kept?
    let reason: String
}

/// Discard counts as a delivery client (or anything else) might send them with its events.
enum DiscardBatches {
    /// The `discards` member of a batch: absent, null, or up to 12 counts; now and then one past `DiscardCount.maxPerBatch`.
    static func member(
        _ draw: inout Draw, campaigns: [Int64], push: Int64, other: Int64, testDevice: String, now: Int64
    ) -> (json: JSONValue?, discards: [GeneratedDiscard], tooMany: Bool) {
        switch draw.int(0...9) {
        case 0, 1, 2: return (nil, [], false)
        case 3: return (.null, [], false)
        case 4 where draw.chance(0.1):
            let many = (0...DiscardCount.maxPerBatch).map { _ in discard(&draw, campaigns: campaigns, push: push, other: other, testDevice: testDevice, now: now) }
            return (.array(many.map(\.json)), many, true)
        default:
            let counts = (0..<draw.int(0...12)).map { _ in discard(&draw, campaigns: campaigns, push: push, other: other, testDevice: testDevice, now: now) }
            return (.array(counts.map(\.json)), counts, false)
        }
    }

    /// A count, valid or broken in one documented way.
    static func discard(_ draw: inout Draw, campaigns: [Int64], push: Int64, other: Int64, testDevice: String, now: Int64) -> GeneratedDiscard {
        var id = JSONValue.string(EventBatches.uuid(&draw))
        var campaign = JSONValue.number(Double(draw.pick(campaigns)))
        let reasonText = draw.pick(DiscardReason.allCases).rawValue
        var reason = JSONValue.string(reasonText)
        // Any day from 2020 to the one an hour from now: a device's clock may run that far ahead.
        let time = draw.chance(0.9) ? now - draw.int64(0...86_400_000 * 300) : draw.pick([EventBatches.earliest, now, now + 3_600_000])
        let dayText = EventBatches.day(time)
        var day = JSONValue.string(dayText)
        let countValue = draw.chance(0.1) ? draw.pick([1, DiscardCount.maxCount]) : draw.int(1...50)
        var count = JSONValue.number(Double(countValue))
        var installation: String? = switch draw.int(0...3) {
        case 0: nil
        case 1: testDevice
        default: "iid-\(draw.int(0...30))"
        }
        var problem = ""
        switch draw.int(0...14) {
        case 0: id = draw.pick([.string("not-a-uuid"), .string(""), .number(7), .null]); problem = "id"
        case 1: campaign = draw.pick([.number(Double(push)), .number(Double(other)), .number(999_999), .string("1"), .literal("1.5"), .null]); problem = "campaignId"
        case 2: reason = draw.pick([.string("Orientation"), .string("bored"), .string(""), .number(1), .null]); problem = "reason"
        case 3:
            day = draw.pick([.string("2019-12-31"), .string(EventBatches.day(now + 2 * 86_400_000)), .string("2026-13-01"), .string("21/11/2026"),
                             .string(EventBatches.day(now) + "T00:00:00Z"), .number(20_261_121), .null])
            problem = "day"
        case 4: count = draw.pick([.number(0), .number(-1), .number(Double(DiscardCount.maxCount + 1)), .literal("1.5"), .literal("1e400"), .string("3"), .null]); problem = "count"
        case 5: installation = draw.pick(["", GeneratedText.characters(201)]); problem = "installationId"
        default: break
        }
        var members: [(key: String, value: JSONValue)] = [("id", id), ("campaignId", campaign), ("reason", reason), ("day", day), ("count", count)]
        if let installation { members.append(("installationId", .string(installation))) }
        if draw.chance(0.1) { members.append(("platform", .string("ios"))) }
        for index in members.indices.reversed() where index > 0 { members.swapAt(index, draw.int(0...index)) }
        guard problem.isEmpty, case .string(let idText) = id, case .number(let campaignID) = campaign else {
            return GeneratedDiscard(json: .object(members), kept: nil, reason: problem)
        }
        return GeneratedDiscard(json: .object(members), kept: .init(
            id: idText.lowercased(), campaign: Int(campaignID), reason: reasonText, day: dayText, count: countValue, test: installation == testDevice),
            reason: "")
    }
}
