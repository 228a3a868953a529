import Foundation
import HeraldDomain

/// The rules that decide whether a campaign may show for an event, as Firebase In-App Messaging and
/// Braze apply them. Pure functions: the client gives them the device's state.
enum Eligibility {
    /// Whether any of the campaign's triggers fires for `event` with `properties`.
    static func triggers(_ campaign: FeedCampaign, event: String, properties: [String: FilterValue]) -> Bool {
        campaign.triggers.contains { eventMatches(event, properties, expected: $0.event, filters: $0.filters) }
    }

    /// Whether `event` with `properties` is the goal's event with every one of its filters met.
    static func converts(_ goal: ConversionGoal, event: String, properties: [String: FilterValue]) -> Bool {
        eventMatches(event, properties, expected: goal.event, filters: goal.filters)
    }

    /// Whether `event` with `properties` is `expected` (a trigger's or a goal's event) with every filter met.
    private static func eventMatches(
        _ event: String, _ properties: [String: FilterValue], expected: String, filters: [PropertyFilter]
    ) -> Bool {
        expected == event && filters.allSatisfy { matches($0, properties) }
    }

    /// Whether `properties` satisfy `filter`; comparisons are typed (a number never equals a string).
    static func matches(_ filter: PropertyFilter, _ properties: [String: FilterValue]) -> Bool {
        let actual = properties[filter.property]
        if filter.op == .exists { return actual != nil }
        guard let actual, let expected = filter.value else { return false }
        switch (filter.op, actual, expected) {
        case (.eq, _, _): return actual == expected
        case (.ne, _, _): return actual != expected
        case (.gt, .number(let a), .number(let b)): return a > b
        case (.gte, .number(let a), .number(let b)): return a >= b
        case (.lt, .number(let a), .number(let b)): return a < b
        case (.lte, .number(let a), .number(let b)): return a <= b
        case (.contains, .string(let a), .string(let b)): return a.contains(b)
        default: return false
        }
    }

    /// Inside the schedule window; test campaigns on a test device ignore the schedule.
    static func scheduled(_ campaign: FeedCampaign, now: Date) -> Bool {
        if campaign.test == true { return true }
        if let start = campaign.schedule.start, start > now { return false }
        if let end = campaign.schedule.end, end <= now { return false }
        return true
    }

    /// Whether the campaign targets this device. `firstOpen` and `installationID` come from the client's storage.
    static func targets(_ campaign: FeedCampaign, device: DeviceContext, firstOpen: Date, installationID: String, now: Date) -> Bool {
        let targeting = campaign.targeting
        let described = TargetedDevice(platform: device.platform, appVersion: device.appVersion, language: device.language, country: device.country)
        guard targeting.admits(described, installationID: installationID, campaignID: campaign.id) else { return false }
        if let conditions = targeting.userProperties, !conditions.allSatisfy({ matches($0, device.userProperties) }) { return false }
        if let range = targeting.daysSinceFirstOpen {
            // Whole days, compared as doubles: a first open read from storage may be anything, and a
            // conversion to Int would trap on it.
            let days = (now.timeIntervalSince(firstOpen) / 86_400).rounded(.down)
            if let min = range.min, !(days >= Double(min)) { return false }
            if let max = range.max, !(days <= Double(max)) { return false }
        }
        return true
    }

    /// Whether frequency allows showing, given the campaign's last impression on this device.
    static func frequencyAllows(_ campaign: FeedCampaign, lastImpression: Date?, now: Date) -> Bool {
        guard let lastImpression else { return true }
        switch campaign.frequency.type {
        case .once: return false
        case .always: return true
        case .everyNDays: return now.timeIntervalSince(lastImpression) >= Double(campaign.frequency.days ?? 1) * 86_400
        }
    }

    /// The one campaign to show: highest priority (1), then the most recently started, then the higher id.
    /// Feed order is already that order, but the client does not rely on it.
    static func pick(_ candidates: [FeedCampaign]) -> FeedCampaign? {
        candidates.min { a, b in
            if a.priority != b.priority { return a.priority < b.priority }
            let aStart = a.startedAt ?? .distantPast, bStart = b.startedAt ?? .distantPast
            if aStart != bStart { return aStart > bStart }
            return a.id > b.id
        }
    }
}

extension Feed {
    /// Without the campaigns whose message lacks what its layout needs to be drawn (Herald refuses to
    /// publish such a message, so only a server's mistake sends one): a card and a full-screen message
    /// need a title and an image, a modal and a banner a title, an image-only message an image, a
    /// slide-up its text. herald.js applies the same rule (`messageProblem`).
    var keepingDrawableCampaigns: Feed {
        var feed = self
        feed.campaigns.removeAll { !$0.message.isDrawable }
        return feed
    }
}

extension Message {
    var isDrawable: Bool {
        func blank(_ text: String?) -> Bool { (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        let hasTitle = !blank(title?.text), hasBody = !blank(body?.text), hasImage = !blank(imageUrl)
        switch layout {
        case .card, .fullscreen: return hasTitle && hasImage
        case .modal, .banner: return hasTitle
        case .imageOnly: return hasImage
        case .slideup: return hasBody
        }
    }
}
