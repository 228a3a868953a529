import Foundation
import HeraldDomain
import Testing

/// `Campaign.alwaysShowsInstead`: certain, or not at all. Each rule that could leave the other campaign a
/// device, a moment or an event turns the answer to no.
@Suite("Outranking")
struct OutrankingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let launch = Trigger(event: "app_launch")

    static func campaign(priority: Int, triggers: [Trigger] = [launch], targeting: Targeting = Targeting(), schedule: Schedule = Schedule()) -> Campaign {
        Campaign(
            app: 1, name: "P\(priority)", priority: priority, schedule: schedule, triggers: triggers, frequency: Frequency(type: .always),
            targeting: targeting, message: Message(layout: .modal, title: .init(text: "Hi")))
    }

    @Test("A higher priority, every time, to everyone, on the same trigger: shown instead; equal or lower priority: not")
    func priorities() {
        let other = Self.campaign(priority: 5)
        #expect(Self.campaign(priority: 4).alwaysShowsInstead(of: other, on: Self.launch, now: Self.now))
        #expect(!Self.campaign(priority: 5).alwaysShowsInstead(of: other, on: Self.launch, now: Self.now))
        #expect(!Self.campaign(priority: 6).alwaysShowsInstead(of: other, on: Self.launch, now: Self.now))
        var capped = Self.campaign(priority: 1)
        for frequency in [Frequency(type: .once), Frequency(type: .everyNDays, days: 1)] {
            capped.frequency = frequency
            #expect(!capped.alwaysShowsInstead(of: other, on: Self.launch, now: Self.now), "\(frequency)")
        }
        var test = Self.campaign(priority: 1)
        test.testOnDevice = true
        #expect(!test.alwaysShowsInstead(of: other, on: Self.launch, now: Self.now))
    }

    @Test("Its trigger must fire whenever the other's does: the same event, its filters among the other's")
    func triggers() {
        let level = PropertyFilter(property: "level", op: .gte, value: .number(3))
        let gold = PropertyFilter(property: "plan", op: .eq, value: .string("gold"))
        let filtered = Trigger(event: "level_up", filters: [level, gold])
        let other = Self.campaign(priority: 5, triggers: [filtered])
        for (triggers, expected) in [
            ([Trigger(event: "level_up")], true), ([Trigger(event: "level_up", filters: [gold])], true), ([filtered], true),
            ([Trigger(event: "level_up", filters: [PropertyFilter(property: "level", op: .gte, value: .number(2))])], false),
            ([Trigger(event: "app_launch")], false), ([Trigger(event: "app_launch"), Trigger(event: "level_up")], true),
        ] {
            #expect(Self.campaign(priority: 1, triggers: triggers).alwaysShowsInstead(of: other, on: filtered, now: Self.now) == expected, "\(triggers)")
        }
    }

    @Test("Its targeting must admit every device the other's does")
    func targeting() {
        let persian = Targeting(languages: ["fa"], countries: ["IR"])
        for (winner, narrower, expected) in [
            (Targeting(), persian, true),
            (Targeting(languages: ["fa", "de"]), persian, true),
            (Targeting(languages: ["pt"]), Targeting(languages: ["pt-BR"]), true),
            (Targeting(languages: ["pt-BR"]), Targeting(languages: ["pt"]), false),
            (Targeting(languages: ["fa"]), Targeting(), false),
            (Targeting(countries: ["ir"]), persian, true),
            (Targeting(platforms: [.ios, .android]), Targeting(platforms: [.ios]), true),
            (Targeting(platforms: [.ios, .android]), Targeting(), false),
            (Targeting(platforms: Platform.allCases), Targeting(), true),
            (Targeting(percentage: 100), persian, true),
            (Targeting(percentage: 99), persian, false),
            (Targeting(appVersion: .init(op: .equals, value: "2.0")), Targeting(appVersion: .init(op: .equals, value: "2.0")), true),
            (Targeting(appVersion: .init(op: .contains, value: "2")), Targeting(appVersion: .init(op: .equals, value: "2.0")), false),
            (Targeting(userProperties: [PropertyFilter(property: "vip", op: .exists)]), Targeting(), false),
            (Targeting(daysSinceFirstOpen: .init(min: 1)), Targeting(daysSinceFirstOpen: .init(min: 1)), true),
            (Targeting(daysSinceFirstOpen: .init(min: 0)), Targeting(daysSinceFirstOpen: .init(min: 1)), false),
        ] {
            #expect(winner.admitsEveryDevice(of: narrower) == expected, "\(winner) over \(narrower)")
        }
    }

    @Test("Its schedule must have begun when the other's does and last as long")
    func schedules() {
        let day: TimeInterval = 86_400
        let next = Schedule(start: Self.now + day, end: Self.now + 3 * day)
        let other = Self.campaign(priority: 5, schedule: next)
        for (schedule, expected) in [
            (Schedule(), true), (Schedule(start: Self.now + day), true), (Schedule(start: Self.now + 2 * day), false),
            (Schedule(end: Self.now + 3 * day), true), (Schedule(end: Self.now + 2 * day), false),
        ] {
            #expect(Self.campaign(priority: 1, schedule: schedule).alwaysShowsInstead(of: other, on: Self.launch, now: Self.now) == expected, "\(schedule)")
        }
        // A campaign that never ends outlasts only one that never ends either when it has no end of its own.
        #expect(!Self.campaign(priority: 1, schedule: Schedule(end: Self.now + day)).alwaysShowsInstead(
            of: Self.campaign(priority: 5), on: Self.launch, now: Self.now))
    }
}
