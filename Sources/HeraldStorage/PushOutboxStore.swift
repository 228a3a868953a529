import Foundation
import HeraldDomain

/// One notification to one device, as the outbox holds it.
public struct OutboxEntry: Sendable, Equatable {
    public var id: Int64
    public var appID: Int64
    /// Nil for a silent feed refresh, and for a test's notification (`testSendID`).
    public var campaignID: Int64?
    /// The test send this notification is part of: its campaign's document as it was sent.
    public var testSendID: Int64?
    public var installationID: String
    public var provider: PushProvider
    public var token: String
    public var platform: String
    public var language: String?
    public var attempts: Int
}

/// What became of one attempt.
public enum OutboxOutcome: Sendable, Equatable {
    case sent(at: Date)
    /// Back to pending, due again at `at`.
    case retry(at: Date, reason: String)
    case failed(reason: String)
    /// The provider called the token dead: the row ends and the installation loses its token.
    case unregistered(reason: String)
    case skipped(reason: String)
}

/// A campaign's sending, counted by state.
public struct PushProgress: Sendable, Equatable {
    public var planned = 0
    public var pending = 0
    public var sending = 0
    public var sent = 0
    public var failed = 0
    public var unregistered = 0
    public var skipped = 0
    public var unknown = 0
    /// Whether every targeted installation has its row (the fan-out is done).
    public var plannedAll = false
    public var started: Date?

    package init() {}

    public var finished: Int { sent + failed + unregistered + skipped + unknown }
    public var isDone: Bool { plannedAll && pending == 0 && sending == 0 }
}

/// The `push_sends` and `push_outbox` tables on either engine: a durable outbox with one row per
/// installation and campaign. A row is marked `sending` in a committed transaction before it is handed to a
/// provider, so a process killed mid-send never sends it again: on restart such rows become `unknown`.
/// Several instances may claim from one outbox: each row is claimed by one of them, once.
public protocol PushOutboxStore: Sendable {
    /// Push campaigns that are published and due to be planned (their start has come, or they are sent
    /// at each device's time), and whose fan-out has not finished.
    func campaignsToPlan(now: Date) throws -> [StoredCampaign]
    /// The registration id (`Installation.rowID`) the campaign's fan-out has reached.
    func plannedThrough(campaignID: Int64) throws -> Int64
    /// Adds the rows of one page (each installation at most once per campaign) and moves the send's
    /// mark past the page, in one transaction, so a restart continues after it. An entry without a due time
    /// (its device's time never comes inside Herald's range) is planned skipped, `device_time_out_of_range`.
    func plan(
        campaignID: Int64, appID: Int64, entries: [(installation: Installation, due: Date?)], through lastRowID: Int64?, complete: Bool, now: Date
    ) throws
    /// Queues a silent feed refresh for each of the app's installations with a token that has none pending,
    /// at most one refresh of the app every `spacing` seconds: due now, or at the end of the quiet period after
    /// the app's latest refresh, which one refresh then carries every change of the period to (`RefreshSpacing`).
    /// Returns how many devices were queued.
    func queueRefresh(appID: Int64, now: Date, spacing: TimeInterval) throws -> Int
    /// Rows a previous process marked `sending` and never heard back about: their outcome is unknown
    /// and they are not sent again.
    func settleInterrupted() throws -> Int
    /// Takes up to `limit` due rows of published campaigns (and refreshes) in due order and marks them
    /// `sending`, committed before any is sent. A row whose device already got `dailyCap` pushes of its
    /// app in the last 24 hours is skipped instead.
    func claim(limit: Int, now: Date) throws -> [OutboxEntry]
    /// Records what became of claimed rows, and removes dead tokens from their installations, in one transaction.
    func record(_ outcomes: [(entry: OutboxEntry, outcome: OutboxOutcome)], now: Date) throws
    /// When the earliest pending row falls due, if any.
    func nextDue() throws -> Date?
    func progress(campaignID: Int64) throws -> PushProgress
    /// Rows that did not arrive, by state and reason, most first (at most `limit` kinds).
    func failures(campaignID: Int64, limit: Int) throws -> [(state: String, reason: String, count: Int)]
    /// Targeted and sent counts by platform, and sent by UTC day (`YYYY-MM-DD`).
    func sentBreakdown(campaignID: Int64) throws -> (byPlatform: [(platform: String, targeted: Int, sent: Int)], byDay: [(day: String, sent: Int)])
}

extension PushOutboxStore {
    public func failures(campaignID: Int64) throws -> [(state: String, reason: String, count: Int)] {
        try failures(campaignID: campaignID, limit: 20)
    }
}

/// Why a planned row is not sent: its device's wall-clock time never comes inside Herald's range.
public let deviceTimeOutOfRange = "device_time_out_of_range"

/// When an app's next silent refresh is due: at once, unless the app's latest refresh was less than
/// `spacing` ago (then at the end of that quiet period) or is still to come (then with it). Both engines
/// decide with this, on the app's `push_refresh_due_at_ms`, inside the transaction that queues.
package enum RefreshSpacing {
    package static func due(latest: Int64?, now: Int64, spacing: TimeInterval) -> Int64 {
        guard let latest else { return now }
        // Due this very millisecond may already be sent: only a refresh still to come carries the change.
        if latest > now { return latest }
        // Spacing comes from a setting of 1 to 1,440 minutes; bounded here too, so no sum overflows.
        let quiet = Int64((min(max(spacing, 0), 86_400 * 366) * 1000).rounded())
        return max(now, latest + quiet)
    }
}

extension InstallationPage {
    /// How many installations one planning transaction reads.
    public static let planningSize = 1000
}

extension StoredCampaign {
    /// Whether a published push campaign whose fan-out is not finished is planned at `now`: its start has
    /// come (or it is a test, or sent at each device's time) and its end has not.
    package func isDueForPlanning(now: Date) -> Bool {
        let startsLater = (campaign.schedule.start.map { $0 > now } ?? false) && !campaign.testOnDevice && campaign.push?.inDeviceTimeZone != true
        let ended = campaign.schedule.end.map { $0 <= now } ?? false
        return !startsLater && !ended
    }
}

/// A due row a claim read, before it decides on it (either engine).
package struct OutboxCandidate {
    package var id: Int64
    package var appID: Int64
    package var campaignID: Int64?
    package var testSendID: Int64?
    package var installationID: String
    package var provider: String
    package var token: String
    package var platform: String
    package var language: String?
    package var attempts: Int64
    /// The app's daily cap per device.
    package var cap: Int64?

    package init(
        id: Int64, appID: Int64, campaignID: Int64? = nil, testSendID: Int64? = nil, installationID: String, provider: String,
        token: String, platform: String, language: String? = nil, attempts: Int64, cap: Int64? = nil
    ) {
        self.id = id
        self.appID = appID
        self.campaignID = campaignID
        self.testSendID = testSendID
        self.installationID = installationID
        self.provider = provider
        self.token = token
        self.platform = platform
        self.language = language
        self.attempts = attempts
        self.cap = cap
    }

    /// What a claim does with the row: sends it, or ends it with a state and reason. `recentSends` counts
    /// the campaign pushes the device got from its app since a time (24 hours before `now`).
    package func decide(now: Date, recentSends: (_ appID: Int64, _ installationID: String, _ since: Date) throws -> Int64) throws -> OutboxClaimDecision {
        if let cap, campaignID != nil, try recentSends(appID, installationID, now.addingTimeInterval(-86_400)) >= cap {
            return .end(state: "skipped", reason: "frequency_cap")
        }
        // A CHECK keeps the provider known; were it not, the row ends rather than being picked again at every claim.
        guard let known = PushProvider(rawValue: provider) else { return .end(state: "failed", reason: "unknown provider") }
        return .send(OutboxEntry(
            id: id, appID: appID, campaignID: campaignID, testSendID: testSendID, installationID: installationID, provider: known, token: token, platform: platform,
            language: language, attempts: Int(attempts) + 1))
    }
}

package enum OutboxClaimDecision {
    case send(OutboxEntry)
    case end(state: String, reason: String)
}

/// A planned row's columns: pending at its due time, or skipped when its device's time never comes.
package struct PlannedRow {
    package let dueAtMilliseconds: Int64
    package let state: String
    package let reason: String?

    package init(due: Date?) {
        dueAtMilliseconds = (due ?? UTCTime.supported.upperBound).storedMilliseconds
        (state, reason) = due == nil ? ("skipped", deviceTimeOutOfRange) : ("pending", nil)
    }
}

extension OutboxOutcome {
    /// The row's columns after this outcome: its state and reason, and its sent time or next due time when it has one.
    package var stored: (state: String, reason: String?, sentAt: Date?, dueAt: Date?) {
        switch self {
        case .sent(let at): ("sent", nil, at, nil)
        case .retry(let at, let reason): ("pending", Installation.storedReason(reason), nil, at)
        case .failed(let reason): ("failed", Installation.storedReason(reason), nil, nil)
        case .skipped(let reason): ("skipped", Installation.storedReason(reason), nil, nil)
        case .unregistered(let reason): ("unregistered", Installation.storedReason(reason), nil, nil)
        }
    }
}

extension PushProgress {
    /// Counts `count` rows in `state`.
    package mutating func add(state: String, count: Int) {
        planned += count
        switch state {
        case "pending": pending = count
        case "sending": sending = count
        case "sent": sent = count
        case "failed": failed = count
        case "unregistered": unregistered = count
        case "skipped": skipped = count
        default: unknown += count
        }
    }
}
