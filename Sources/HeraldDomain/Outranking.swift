import Foundation

/// Whether one in-app campaign always shows in another's place. A client shows one message per trigger, the
/// highest priority first (`docs/delivery-semantics.md`), so a campaign is never shown when each of its
/// triggers also fires a higher-priority campaign that every device it reaches is reached by, at every
/// moment of its schedule, each time. Decided from the two documents alone and only where that is certain:
/// a rule that might leave room (a percentage, a filter the other lacks, a frequency cap) is room.
extension Campaign {
    /// Whether this campaign, live since before `now` or scheduled as said, takes `trigger` of `other` from it
    /// on every device `other` reaches, wherever `other`'s schedule lets it show (from `now` on).
    public func alwaysShowsInstead(of other: Campaign, on trigger: Trigger, now: Date) -> Bool {
        guard channel == .inApp, other.channel == .inApp, !testOnDevice, !other.testOnDevice,
              priority < other.priority, frequency.type == .always,
              covers(other.schedule, now: now), targeting.admitsEveryDevice(of: other.targeting) else { return false }
        return triggers.contains { $0.firesWhenever(trigger) }
    }

    /// Whether this schedule has begun by the time `other`'s does (or `now`, if later), and lasts as long.
    private func covers(_ other: Schedule, now: Date) -> Bool {
        let otherStart = max(other.start ?? now, now)
        if let start = schedule.start, start > otherStart { return false }
        guard let end = schedule.end else { return true }
        guard let otherEnd = other.end else { return false }
        return end >= otherEnd
    }
}

extension Trigger {
    /// Whether this trigger fires for every event that fires `other`: the same event, and each of its filters
    /// one of `other`'s.
    public func firesWhenever(_ other: Trigger) -> Bool {
        event == other.event && filters.allSatisfy(other.filters.contains)
    }
}

extension Targeting {
    /// Whether these rules admit every device that `narrower` admits. A percentage below 100 never does
    /// (its buckets hash each campaign's id), nor an app version rule or a day range other than the same one.
    public func admitsEveryDevice(of narrower: Targeting) -> Bool {
        if let percentage, percentage < 100 { return false }
        if let platforms, !(narrower.platforms ?? Platform.allCases).allSatisfy(platforms.contains) { return false }
        if let appVersion, appVersion != narrower.appVersion { return false }
        if let languages {
            guard let wanted = narrower.languages,
                  wanted.allSatisfy({ language in languages.contains { Self.languageMatches($0, language) } }) else { return false }
        }
        if let countries {
            guard let wanted = narrower.countries,
                  wanted.allSatisfy({ country in countries.contains { $0.uppercased() == country.uppercased() } }) else { return false }
        }
        if let userProperties, !userProperties.allSatisfy((narrower.userProperties ?? []).contains) { return false }
        if let daysSinceFirstOpen, daysSinceFirstOpen != narrower.daysSinceFirstOpen { return false }
        return true
    }
}
