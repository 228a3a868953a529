import Foundation
import HeraldDomain
import HeraldStorage

/// What would keep a valid campaign from reaching devices, found with the rules the clients and the push
/// sender apply: said on the campaign's page, asked about before the console publishes, and listed in the
/// API's publish answer. Warnings, not errors: publishing anyway is the marketer's choice.
enum CampaignWarning: Equatable, Sendable {
    /// What a push campaign's app lacks to reach its devices.
    case push(PushPublishWarning)
    /// Each trigger also fires one of these higher-priority campaigns (names), which shows instead to every
    /// device, each time (`Campaign.alwaysShowsInstead`).
    case outranked(by: [String])
    /// The app has registered installations and the targeting matches none of them (for a push campaign: none
    /// with a push token).
    case noAudience(push: Bool)
    /// Sent at each device's time, the last time zone reaches the start's time only after the schedule's end.
    case endsBeforeLastZone(end: Date)

    /// The zone that reaches a wall-clock time last (UTC−12): where a push sent at each device's time goes last.
    static let lastZone = "Etc/GMT+12"

    /// The warnings for `campaign` (stored as `id`; nil before its first save) if it is published, or stays
    /// live, at `now`.
    static func warnings(for campaign: Campaign, id: Int64?, services: Services, now: Date) throws -> [CampaignWarning] {
        var warnings = try services.push.publishWarnings(campaign).map(CampaignWarning.push)
        let outranking = try outranking(campaign, id: id, database: services.database, now: now)
        if !outranking.isEmpty { warnings.append(.outranked(by: outranking)) }
        if !warnings.contains(.push(.noDevices)), try reachesNobody(campaign, audience: services.audience, now: now) {
            warnings.append(.noAudience(push: campaign.channel == .push))
        }
        if campaign.channel == .push, let end = campaign.schedule.end,
           let due = PushAudience.due(campaign, timeZone: lastZone, publishedAt: now, now: now), due >= end {
            warnings.append(.endsBeforeLastZone(end: end))
        }
        return warnings
    }

    /// The names of the app's live campaigns that take each of `campaign`'s triggers from it; empty when any
    /// trigger is left to it.
    private static func outranking(_ campaign: Campaign, id: Int64?, database: any HeraldDatabase, now: Date) throws -> [String] {
        guard campaign.channel == .inApp, !campaign.testOnDevice, !campaign.triggers.isEmpty else { return [] }
        let live = try database.campaigns.feedCandidates(appID: campaign.app).filter {
            $0.id != id && $0.state == .published && $0.status(at: now) != .ended
        }
        var names: [String] = []
        for trigger in campaign.triggers {
            guard let winner = live.first(where: { $0.campaign.alwaysShowsInstead(of: campaign, on: trigger, now: now) }) else { return [] }
            if !names.contains(winner.campaign.name) { names.append(winner.campaign.name) }
        }
        return names
    }

    /// Whether the app has registered installations and the targeting's server-side rules match none of them
    /// (its percentage aside: a share of a few would round to none). Test campaigns reach test devices.
    private static func reachesNobody(_ campaign: Campaign, audience: AudienceEstimator, now: Date) throws -> Bool {
        guard !campaign.testOnDevice else { return false }
        let everyone = try audience.estimate(Targeting(), appID: campaign.app, now: now)
        var rules = campaign.targeting
        rules.percentage = nil
        let matched = try audience.estimate(rules, appID: campaign.app, now: now)
        return campaign.channel == .push
            ? everyone.withPushToken > 0 && matched.withPushToken == 0
            : everyone.installations > 0 && matched.installations == 0
    }

    /// Its name in the API's answer.
    var code: String {
        switch self {
        case .push(let warning): warning.code
        case .outranked: "outranked"
        case .noAudience: "no_audience"
        case .endsBeforeLastZone: "ends_before_last_zone"
        }
    }

    /// What it means, for the API (English, as its other texts).
    var message: String {
        switch self {
        case .push(let warning):
            warning.message
        case .outranked(let names):
            "Higher-priority campaigns show instead on every trigger of this one, to every device it reaches, each time: "
                + names.map { "\"\($0)\"" }.joined(separator: ", ") + ". This campaign would never show."
        case .noAudience(let push):
            push
                ? "No registered installation with a push token matches the targeting: nobody gets this notification."
                : "No registered installation matches the targeting: this campaign would show to nobody who has registered."
        case .endsBeforeLastZone(let end):
            "Sent at each device's time, the start's time comes in the last time zone (UTC−12) after the schedule's end, \(UTCTime.rfc3339(end)): devices there do not get it."
        }
    }

    /// What it means, in the reader's language, naming the app.
    func localized(_ l: Localizer, app: String) -> String {
        switch self {
        case .push(let warning):
            warning.localized(l, app: app)
        case .outranked(let names):
            l("campaigns.warnings.outranked", ["names": names.map(l.quoted).joined(separator: l("layout.list_separator"))])
        case .noAudience(let push):
            l(push ? "campaigns.warnings.no_audience_push" : "campaigns.warnings.no_audience", ["app": Localizer.isolated(app)])
        case .endsBeforeLastZone(let end):
            l("campaigns.warnings.ends_before_last_zone", ["end": l.dateTime(end)])
        }
    }
}
