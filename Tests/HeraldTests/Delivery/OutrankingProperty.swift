import Foundation
import HeraldDomain
@testable import HeraldDelivery
import TestSupport
import Testing

/// The "outranked" warning (`CampaignWarning.outranked`) is only said where the delivery client agrees:
/// for generated pairs of campaigns (the second often a loosened copy of the first, so the claim is made
/// as often as refused) and generated devices, events, moments and impressions, whenever
/// `alwaysShowsInstead` says the winner takes a trigger, each time that trigger makes the other campaign
/// eligible by the client's own rules (`Eligibility`), the winner is eligible too and is the one picked.
@Suite("Generated inputs: outranking agrees with the delivery client")
struct OutrankingProperty {
    static let now = Date(timeIntervalSince1970: 1_798_761_600)  // 2027-01-01T00:00:00Z
    static let day: TimeInterval = 86_400
    static let events = ["app_launch", "level_up", "purchase"]
    static let filters = [
        PropertyFilter(property: "level", op: .gte, value: .number(3)),
        PropertyFilter(property: "level", op: .eq, value: .number(5)),
        PropertyFilter(property: "plan", op: .eq, value: .string("gold")),
        PropertyFilter(property: "plan", op: .exists),
    ]
    static let languages = ["fa", "de", "pt", "pt-BR"]
    static let countries = ["IR", "DE", "br"]

    struct Case: CustomStringConvertible {
        let other: Campaign
        let winner: Campaign
        var description: String { "other \(other)\nwinner \(winner)" }
    }

    static func subset<Element>(_ draw: inout Draw, _ items: [Element]) -> [Element] {
        items.filter { _ in draw.chance(0.5) }
    }

    static func targeting(_ draw: inout Draw) -> Targeting {
        var targeting = Targeting()
        if draw.chance(0.3) { targeting.platforms = subset(&draw, Platform.allCases) }
        if draw.chance(0.2) { targeting.appVersion = .init(op: draw.pick([.equals, .contains]), value: draw.pick(["2.0", "2"])) }
        if draw.chance(0.4) { targeting.languages = subset(&draw, languages) }
        if draw.chance(0.3) { targeting.countries = subset(&draw, countries) }
        if draw.chance(0.2) { targeting.userProperties = subset(&draw, filters) }
        if draw.chance(0.2) { targeting.daysSinceFirstOpen = .init(min: draw.pick([nil, 0, 2]), max: draw.pick([nil, 5])) }
        if draw.chance(0.2) { targeting.percentage = draw.pick([1, 50, 100]) }
        return targeting
    }

    static func schedule(_ draw: inout Draw) -> Schedule {
        Schedule(start: draw.chance(0.5) ? nil : now + Double(draw.int(-3...3)) * day, end: draw.chance(0.5) ? nil : now + Double(draw.int(4...9)) * day)
    }

    static func trigger(_ draw: inout Draw) -> Trigger {
        Trigger(event: draw.pick(events), filters: subset(&draw, filters))
    }

    static func campaign(_ draw: inout Draw, priority: Int) -> Campaign {
        Campaign(
            app: 1, name: "C", priority: priority, schedule: schedule(&draw), triggers: draw.list(1...2) { trigger(&$0) },
            frequency: draw.pick([Frequency(type: .always), Frequency(type: .once), Frequency(type: .everyNDays, days: 2)]),
            targeting: targeting(&draw), message: Message(layout: .modal, title: .init(text: "Hi")))
    }

    /// The other campaign, or one made from it with rules taken away (so it often reaches all it reaches).
    static func loosened(_ other: Campaign, _ draw: inout Draw) -> Campaign {
        var winner = other
        winner.priority = draw.int(1...other.priority)
        winner.frequency = draw.chance(0.8) ? Frequency(type: .always) : other.frequency
        if draw.chance(0.7) { winner.triggers = other.triggers.map { Trigger(event: $0.event, filters: subset(&draw, $0.filters)) } }
        if draw.chance(0.3) { winner.triggers.append(trigger(&draw)) }
        var targeting = other.targeting
        if draw.chance(0.5) { targeting.platforms = nil }
        if draw.chance(0.5) { targeting.languages = targeting.languages.map { $0 + subset(&draw, languages) } }
        if draw.chance(0.5) { targeting.countries = nil }
        if draw.chance(0.5) { targeting.userProperties = targeting.userProperties.map { subset(&draw, $0) } }
        if draw.chance(0.5) { targeting.percentage = nil }
        winner.targeting = targeting
        if draw.chance(0.5) { winner.schedule = Schedule(start: other.schedule.start.map { $0 - day }, end: other.schedule.end.map { $0 + day }) }
        return draw.chance(0.4) ? tightened(winner, &draw) : winner
    }

    /// One rule made narrower than the other campaign's, for the near misses the claim must refuse.
    static func tightened(_ winner: Campaign, _ draw: inout Draw) -> Campaign {
        var winner = winner
        switch draw.int(0...5) {
        case 0: winner.triggers = winner.triggers.map { Trigger(event: $0.event, filters: $0.filters + [draw.pick(filters)]) }
        case 1: winner.targeting.languages = subset(&draw, languages)
        case 2: winner.targeting.percentage = draw.pick([1, 50, 99])
        case 3: winner.targeting.userProperties = (winner.targeting.userProperties ?? []) + [draw.pick(filters)]
        case 4: winner.targeting.platforms = subset(&draw, Platform.allCases)
        default: winner.schedule = Schedule(start: now + Double(draw.int(0...6)) * day, end: draw.chance(0.5) ? nil : now + Double(draw.int(1...9)) * day)
        }
        return winner
    }

    /// A device, mostly one the other campaign's targeting admits, so that the claim is tested where it matters.
    static func device(_ draw: inout Draw, for targeting: Targeting) -> DeviceContext {
        var properties: [String: FilterValue] = [:]
        if draw.chance(0.7) { properties["level"] = .number(Double(draw.pick([1, 3, 5, 6]))) }
        if draw.chance(0.7) { properties["plan"] = .string(draw.pick(["gold", "gold", "free"])) }
        let aimed = draw.chance(0.8)
        func value<Value>(_ wanted: [Value]?, _ all: [Value], _ draw: inout Draw) -> Value {
            if aimed, let wanted, !wanted.isEmpty { return draw.pick(wanted) }
            return draw.pick(all)
        }
        return DeviceContext(
            platform: value(targeting.platforms, Platform.allCases, &draw), appVersion: draw.pick(["2.0", "2.0", "2.1", "1.0"]),
            language: value(targeting.languages, languages + ["pt-PT", "en"], &draw), country: value(targeting.countries, countries + ["BR", "US"], &draw),
            userProperties: properties)
    }

    @Test("Whenever a campaign is said to show instead, the client shows it instead")
    func theClientAgrees() {
        var run = GeneratedRun("outranking", cases: 1_500)
        run.run(Generated.cases { draw -> (Case, [(DeviceContext, String, Date, String, [String: FilterValue], Date?, Date)]) in
            let other = Self.campaign(&draw, priority: draw.int(2...10))
            let winner = draw.chance(0.8) ? Self.loosened(other, &draw) : Self.campaign(&draw, priority: draw.int(1...10))
            let moments = draw.list(40...40) { draw in
                var properties: [String: FilterValue] = [:]
                if draw.chance(0.7) { properties["level"] = .number(Double(draw.pick([1, 3, 5, 6]))) }
                if draw.chance(0.7) { properties["plan"] = .string(draw.pick(["gold", "gold", "free"])) }
                let event = draw.chance(0.8) ? draw.pick(other.triggers).event : draw.pick(Self.events)
                return (
                    Self.device(&draw, for: other.targeting), "iid-\(draw.int(0...9_999))", Self.now + Double(draw.int(0...12 * 24)) * 3600, event,
                    properties, draw.chance(0.5) ? nil : Self.now - Double(draw.int(0...72)) * 3600, Self.now - Double(draw.int(0...30)) * Self.day)
            }
            return (Case(other: other, winner: winner), moments)
        }) { sample, run in
            let (pair, moments) = sample
            let other = FeedCampaign(pair.other, id: 2, startedAt: Self.now, test: false)
            let winner = FeedCampaign(pair.winner, id: 1, startedAt: Self.now, test: false)
            for trigger in pair.other.triggers {
                guard pair.winner.alwaysShowsInstead(of: pair.other, on: trigger, now: Self.now) else {
                    run.note("not claimed")
                    continue
                }
                run.note("claimed")
                var single = other
                single.triggers = [trigger]
                for (device, installationID, at, event, properties, lastImpression, firstOpen) in moments {
                    guard Eligibility.triggers(single, event: event, properties: properties), Eligibility.scheduled(other, now: at),
                          Eligibility.targets(other, device: device, firstOpen: firstOpen, installationID: installationID, now: at),
                          Eligibility.frequencyAllows(other, lastImpression: lastImpression, now: at) else { continue }
                    run.note("the other eligible")
                    let shows = Eligibility.triggers(winner, event: event, properties: properties) && Eligibility.scheduled(winner, now: at)
                        && Eligibility.targets(winner, device: device, firstOpen: firstOpen, installationID: installationID, now: at)
                        && Eligibility.frequencyAllows(winner, lastImpression: lastImpression, now: at)
                    run.expect(shows && Eligibility.pick([other, winner])?.id == winner.id,
                               "the winner does not show instead for \(device) at \(at) on \(event) \(properties)", input: pair)
                }
            }
        }
    }
}
