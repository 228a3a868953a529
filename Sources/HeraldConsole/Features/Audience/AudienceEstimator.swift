import Foundation
import HeraldDomain
import HeraldStorage
import Synchronization

/// How many registered installations a targeting admits (`POST /api/v1/audience`): the rules the server
/// knows (platform, app version, language, country, percentage) applied to the app's installations
/// grouped alike, never one by one, so a million installations cost a grouped read and a few thousand
/// evaluations. The groups are kept a minute per app (a composer asks again at every change of targeting, and
/// each campaign page for its warnings), or until an installation registers for the first time. Groups are
/// read one app at a time: estimates asked at once of an app whose groups are not kept (a composer's burst,
/// several campaign pages opened together) wait for one read instead of each making it.
final class AudienceEstimator: Sendable {
    /// The most groups read per app; installations past them are shared out as the groups read matched.
    static let groupLimit = 5000
    /// How long an app's groups answer before they are read again.
    static let maxAge: TimeInterval = 60
    /// The most apps whose groups are kept.
    static let appsKept = 32
    /// The most time all version patterns of one estimate may take (each is also held to
    /// `VersionPattern.budget`); groups not reached by then are shared out like those past the limit.
    static let patternBudget: Duration = .milliseconds(250)

    private let cache = ReadMostly<[Int64: (profiles: InstallationProfiles, readAt: Date)]>([:])
    private let reading = Mutex(())
    private let read: @Sendable (_ appID: Int64, _ limit: Int) throws -> InstallationProfiles

    /// `read` gives an app's largest groups, at most `limit` (`InstallationStore.profiles`).
    init(read: @escaping @Sendable (_ appID: Int64, _ limit: Int) throws -> InstallationProfiles) {
        self.read = read
    }

    func estimate(_ targeting: Targeting, appID: Int64, now: Date) throws -> AudienceEstimate {
        AudienceEstimate.of(targeting, among: try profiles(appID: appID, now: now))
    }

    private func profiles(appID: Int64, now: Date) throws -> InstallationProfiles {
        if let kept = kept(appID: appID, now: now) { return kept }
        return try reading.withLock { _ in
            // Another estimate may have read them while this one waited.
            if let kept = kept(appID: appID, now: now) { return kept }
            let profiles = try read(appID, Self.groupLimit)
            cache.write { kept in
                kept[appID] = (profiles, now)
                while kept.count > Self.appsKept, let oldest = kept.min(by: { $0.value.readAt < $1.value.readAt })?.key {
                    kept[oldest] = nil
                }
            }
            return profiles
        }
    }

    /// The app's groups if they were read less than `maxAge` before `now`.
    private func kept(appID: Int64, now: Date) -> InstallationProfiles? {
        guard let kept = cache.read({ $0[appID] }), now.timeIntervalSince(kept.readAt) < Self.maxAge, kept.readAt <= now else { return nil }
        return kept.profiles
    }

    /// Drops the app's kept groups, so the next estimate reads them again: an installation was added.
    func forget(appID: Int64) {
        guard cache.read({ $0[appID] != nil }) else { return }
        cache.write { $0[appID] = nil }
    }
}

/// The answer of `POST /api/v1/audience`.
struct AudienceEstimate: Equatable, Encodable {
    var installations: Int
    var withPushToken: Int
    /// Not an exact count: a percentage (buckets depend on the campaign, so its share is applied), or
    /// installations past the groups read or the pattern budget, shared out as those evaluated matched.
    var estimated: Bool
    /// The rules only a device can apply (`userProperties`, `daysSinceFirstOpen`): not applied, so the
    /// counts are at most those of the installations that pass them.
    var notApplied: [String]

    /// What `targeting` reaches among `profiles`' installations.
    static func of(_ targeting: Targeting, among profiles: InstallationProfiles, patternBudget: Duration = AudienceEstimator.patternBudget) -> Self {
        var serverRules = targeting
        // Applied below as a share: buckets hash the campaign's id, which an estimate has not.
        serverRules.percentage = nil
        // Evaluated once per app version, within the budget, below.
        serverRules.appVersion = nil
        var versionVerdicts: [String: Bool] = [:]
        let deadline = ContinuousClock.now + patternBudget
        var (matched, matchedTokens, evaluated, evaluatedTokens) = (0, 0, 0, 0)
        for group in profiles.groups {
            if let rule = targeting.appVersion, versionVerdicts[group.device.appVersion] == nil {
                if rule.op == .regex && ContinuousClock.now > deadline { continue }
                var versionOnly = Targeting()
                versionOnly.appVersion = rule
                versionVerdicts[group.device.appVersion] = versionOnly.admits(group.device, installationID: "", campaignID: 0)
            }
            evaluated += group.installations
            evaluatedTokens += group.withToken
            guard versionVerdicts[group.device.appVersion] ?? true, serverRules.admits(group.device, installationID: "", campaignID: 0) else { continue }
            matched += group.installations
            matchedTokens += group.withToken
        }
        let share = Double(targeting.percentage ?? 100) / 100
        func scaled(_ matched: Int, of evaluated: Int, all: Int) -> Int {
            let rest = max(all - evaluated, 0)
            let restMatched = evaluated > 0 ? Double(rest) * Double(matched) / Double(evaluated) : 0
            return Int(((Double(matched) + restMatched) * share).rounded())
        }
        var notApplied = (targeting.userProperties ?? []).isEmpty ? [] : ["userProperties"]
        if targeting.daysSinceFirstOpen != nil { notApplied.append("daysSinceFirstOpen") }
        return AudienceEstimate(
            installations: scaled(matched, of: evaluated, all: profiles.installations),
            withPushToken: scaled(matchedTokens, of: evaluatedTokens, all: profiles.withToken),
            estimated: targeting.percentage != nil || evaluated < profiles.installations, notApplied: notApplied)
    }
}
