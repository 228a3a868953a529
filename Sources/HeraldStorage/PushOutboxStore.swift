import Foundation
import GRDB
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
enum RefreshSpacing {
    static func due(latest: Int64?, now: Int64, spacing: TimeInterval) -> Int64 {
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
    func isDueForPlanning(now: Date) -> Bool {
        let startsLater = (campaign.schedule.start.map { $0 > now } ?? false) && !campaign.testOnDevice && campaign.push?.inDeviceTimeZone != true
        let ended = campaign.schedule.end.map { $0 <= now } ?? false
        return !startsLater && !ended
    }
}

/// A due row a claim read, before it decides on it (either engine).
struct OutboxCandidate {
    var id: Int64
    var appID: Int64
    var campaignID: Int64?
    var testSendID: Int64?
    var installationID: String
    var provider: String
    var token: String
    var platform: String
    var language: String?
    var attempts: Int64
    /// The app's daily cap per device.
    var cap: Int64?

    /// What a claim does with the row: sends it, or ends it with a state and reason. `recentSends` counts
    /// the campaign pushes the device got from its app since a time (24 hours before `now`).
    func decide(now: Date, recentSends: (_ appID: Int64, _ installationID: String, _ since: Date) throws -> Int64) throws -> OutboxClaimDecision {
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

enum OutboxClaimDecision {
    case send(OutboxEntry)
    case end(state: String, reason: String)
}

/// A planned row's columns: pending at its due time, or skipped when its device's time never comes.
struct PlannedRow {
    let dueAtMilliseconds: Int64
    let state: String
    let reason: String?

    init(due: Date?) {
        dueAtMilliseconds = (due ?? UTCTime.supported.upperBound).storedMilliseconds
        (state, reason) = due == nil ? ("skipped", deviceTimeOutOfRange) : ("pending", nil)
    }
}

extension OutboxOutcome {
    /// The row's columns after this outcome: its state and reason, and its sent time or next due time when it has one.
    var stored: (state: String, reason: String?, sentAt: Date?, dueAt: Date?) {
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
    mutating func add(state: String, count: Int) {
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

/// The outbox in SQLite.
public struct SQLitePushOutboxStore: PushOutboxStore {
    let pool: DatabasePool

    // MARK: Planning

    /// Push campaigns that are published and due to be planned (their start has come, or they are sent
    /// at each device's time), and whose fan-out has not finished.
    public func campaignsToPlan(now: Date) throws -> [StoredCampaign] {
        try pool.read { db in
            let ids = try Int64.fetchAll(
                db, sql: """
                    SELECT c.id FROM campaigns c LEFT JOIN push_sends s ON s.campaign_id = c.id
                    WHERE c.layout = ? AND c.state = 'published' AND (s.planned_all IS NULL OR s.planned_all = 0)
                    ORDER BY c.id
                    """,
                arguments: [Campaign.pushLayout])
            return try ids.compactMap { try SQLiteCampaignStore.find(id: $0, in: db) }.filter { $0.isDueForPlanning(now: now) }
        }
    }

    /// The registration id (`Installation.rowID`) the campaign's fan-out has reached.
    public func plannedThrough(campaignID: Int64) throws -> Int64 {
        try pool.read { try Int64.fetchOne($0, sql: "SELECT planned_through FROM push_sends WHERE campaign_id = ?", arguments: [campaignID]) ?? 0 }
    }

    /// Adds the rows of one page (each installation at most once per campaign) and moves the send's
    /// mark past the page, in one transaction, so a restart continues after it.
    public func plan(
        campaignID: Int64, appID: Int64, entries: [(installation: Installation, due: Date?)], through lastRowID: Int64?, complete: Bool, now: Date
    ) throws {
        try pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO push_sends (campaign_id, app_id, started_at) VALUES (?, ?, ?)",
                arguments: [campaignID, appID, now])
            let insert = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO push_outbox (app_id, campaign_id, installation_id, provider, token, platform, language, due_at_ms, state, reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (installation, due) in entries {
                guard let provider = installation.pushProvider, let token = installation.pushToken else { continue }
                let planned = PlannedRow(due: due)
                try insert.execute(arguments: [
                    appID, campaignID, installation.installationID, provider.rawValue, token, installation.platform.rawValue,
                    installation.language, planned.dueAtMilliseconds, planned.state, planned.reason,
                ])
            }
            if let lastRowID {
                try db.execute(sql: "UPDATE push_sends SET planned_through = ? WHERE campaign_id = ?", arguments: [lastRowID, campaignID])
            }
            if complete {
                try db.execute(sql: "UPDATE push_sends SET planned_all = 1 WHERE campaign_id = ?", arguments: [campaignID])
            }
        }
    }

    public func queueRefresh(appID: Int64, now: Date, spacing: TimeInterval) throws -> Int {
        try pool.write { db in
            let latest = try Int64.fetchOne(db, sql: "SELECT push_refresh_due_at_ms FROM apps WHERE id = ?", arguments: [appID])
            let due = RefreshSpacing.due(latest: latest, now: now.storedMilliseconds, spacing: spacing)
            try db.execute(
                sql: """
                    INSERT INTO push_outbox (app_id, campaign_id, installation_id, provider, token, platform, language, due_at_ms, state)
                    SELECT i.app_id, NULL, i.installation_id, i.push_provider, i.push_token, i.platform, i.language, ?, 'pending'
                    FROM installations i WHERE i.app_id = ? AND i.push_token IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM push_outbox o WHERE o.app_id = i.app_id AND o.campaign_id IS NULL AND o.test_send_id IS NULL
                                    AND o.installation_id = i.installation_id AND o.state = 'pending')
                    """,
                arguments: [due, appID])
            let queued = db.changesCount
            if queued > 0 {
                try db.execute(sql: "UPDATE apps SET push_refresh_due_at_ms = ? WHERE id = ?", arguments: [due, appID])
            }
            return queued
        }
    }

    // MARK: Sending

    /// Rows a previous process marked `sending` and never heard back about: their outcome is unknown
    /// and they are not sent again.
    public func settleInterrupted() throws -> Int {
        try pool.write { db in
            try db.execute(sql: "UPDATE push_outbox SET state = 'unknown', reason = 'interrupted' WHERE state = 'sending'")
            return db.changesCount
        }
    }

    /// Takes up to `limit` due rows of published campaigns (and refreshes) in due order and marks them
    /// `sending`, committed before any is sent. A row whose device already got `dailyCap` pushes of its
    /// app in the last 24 hours is skipped instead.
    public func claim(limit: Int, now: Date) throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }
        return try pool.write { db in
            let rows = try Row.fetchAll(
                db, sql: """
                    SELECT o.id, o.app_id, o.campaign_id, o.test_send_id, o.installation_id, o.provider, o.token, o.platform, o.language,
                           o.attempts, a.push_daily_cap AS cap
                    FROM push_outbox o JOIN apps a ON a.id = o.app_id LEFT JOIN campaigns c ON c.id = o.campaign_id
                    WHERE o.state = 'pending' AND o.due_at_ms <= ?
                    AND (o.campaign_id IS NULL OR (c.state = 'published' AND (c.end_at IS NULL OR c.end_at > ?)))
                    ORDER BY o.due_at_ms, o.id LIMIT ?
                    """,
                arguments: [now.storedMilliseconds, now, limit])
            var claimed: [OutboxEntry] = []
            for row in rows {
                let candidate = OutboxCandidate(
                    id: row["id"], appID: row["app_id"], campaignID: row["campaign_id"], testSendID: row["test_send_id"],
                    installationID: row["installation_id"],
                    provider: row["provider"], token: row["token"], platform: row["platform"], language: row["language"],
                    attempts: row["attempts"], cap: row["cap"])
                let decision = try candidate.decide(now: now) { appID, installationID, since in
                    try Int64.fetchOne(
                        db, sql: """
                            SELECT COUNT(*) FROM push_outbox WHERE app_id = ? AND installation_id = ? AND state = 'sent'
                            AND sent_at > ? AND campaign_id IS NOT NULL
                            """,
                        arguments: [appID, installationID, since]) ?? 0
                }
                switch decision {
                case .end(let state, let reason):
                    try db.execute(sql: "UPDATE push_outbox SET state = ?, reason = ? WHERE id = ?", arguments: [state, reason, candidate.id])
                case .send(let entry):
                    try db.execute(sql: "UPDATE push_outbox SET state = 'sending', attempts = attempts + 1 WHERE id = ?", arguments: [entry.id])
                    claimed.append(entry)
                }
            }
            return claimed
        }
    }

    /// Records what became of claimed rows, and removes dead tokens from their installations, in one transaction.
    public func record(_ outcomes: [(entry: OutboxEntry, outcome: OutboxOutcome)], now: Date) throws {
        guard !outcomes.isEmpty else { return }
        try pool.write { db in
            for (entry, outcome) in outcomes {
                let stored = outcome.stored
                try db.execute(
                    sql: "UPDATE push_outbox SET state = ?, reason = ?, sent_at = COALESCE(?, sent_at), due_at_ms = COALESCE(?, due_at_ms) WHERE id = ?",
                    arguments: [stored.state, stored.reason, stored.sentAt, stored.dueAt?.storedMilliseconds, entry.id])
                if case .unregistered = outcome {
                    try SQLiteInstallationStore.removeToken(
                        appID: entry.appID, provider: entry.provider, token: entry.token, reason: stored.reason ?? "", now: now, in: db)
                    // Other campaigns' rows for the dead token end too, instead of each being refused in turn.
                    try db.execute(
                        sql: "UPDATE push_outbox SET state = 'unregistered', reason = ? WHERE app_id = ? AND token = ? AND state = 'pending'",
                        arguments: [stored.reason, entry.appID, entry.token])
                }
            }
        }
    }

    /// When the earliest pending row falls due, if any.
    public func nextDue() throws -> Date? {
        try pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT MIN(due_at_ms) FROM push_outbox WHERE state = 'pending'").map(Date.init(storedMilliseconds:))
        }
    }

    // MARK: Reading

    public func progress(campaignID: Int64) throws -> PushProgress {
        try pool.read { db in
            var progress = PushProgress()
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM push_outbox WHERE campaign_id = ? GROUP BY state", arguments: [campaignID]) {
                progress.add(state: row["state"], count: row["n"])
            }
            if let send = try Row.fetchOne(db, sql: "SELECT planned_all, started_at FROM push_sends WHERE campaign_id = ?", arguments: [campaignID]) {
                progress.plannedAll = send["planned_all"]
                progress.started = send["started_at"]
            }
            return progress
        }
    }

    /// Rows that did not arrive, by state and reason, most first (at most `limit` kinds).
    public func failures(campaignID: Int64, limit: Int) throws -> [(state: String, reason: String, count: Int)] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: """
                    SELECT state, COALESCE(reason, '') AS reason, COUNT(*) AS n FROM push_outbox
                    WHERE campaign_id = ? AND state IN ('failed', 'unregistered', 'skipped', 'unknown')
                    GROUP BY state, reason ORDER BY n DESC, state, reason LIMIT ?
                    """,
                arguments: [campaignID, limit]
            ).map { ($0["state"], $0["reason"], $0["n"]) }
        }
    }

    /// Targeted and sent counts by platform, and sent by UTC day (`YYYY-MM-DD`).
    public func sentBreakdown(campaignID: Int64) throws -> (byPlatform: [(platform: String, targeted: Int, sent: Int)], byDay: [(day: String, sent: Int)]) {
        try pool.read { db in
            let platforms = try Row.fetchAll(
                db, sql: """
                    SELECT platform, COUNT(*) AS targeted, SUM(state = 'sent') AS sent FROM push_outbox
                    WHERE campaign_id = ? GROUP BY platform ORDER BY platform
                    """,
                arguments: [campaignID]
            ).map { (platform: $0["platform"] as String, targeted: $0["targeted"] as Int, sent: $0["sent"] as Int) }
            let days = try Row.fetchAll(
                db, sql: """
                    SELECT substr(sent_at, 1, 10) AS day, COUNT(*) AS sent FROM push_outbox
                    WHERE campaign_id = ? AND state = 'sent' GROUP BY day ORDER BY day
                    """,
                arguments: [campaignID]
            ).map { (day: $0["day"] as String, sent: $0["sent"] as Int) }
            return (platforms, days)
        }
    }
}
