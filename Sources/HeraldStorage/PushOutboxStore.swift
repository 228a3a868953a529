import Foundation
import GRDB
import HeraldDomain

/// One notification to one device, as the outbox holds it.
public struct OutboxEntry: Sendable, Equatable {
    public var id: Int64
    public var appID: Int64
    /// Nil for a silent feed refresh.
    public var campaignID: Int64?
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

/// The `push_sends` and `push_outbox` tables: a durable outbox with one row per installation and
/// campaign. A row is marked `sending` in a committed transaction before it is handed to a provider,
/// so a process killed mid-send never sends it again: on restart such rows become `unknown`.
public struct PushOutboxStore: Sendable {
    let pool: DatabasePool

    /// How many installations one planning transaction reads.
    public static let planPage = 1000

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
            return try ids.compactMap { try CampaignStore.find(id: $0, in: db) }.filter { stored in
                let campaign = stored.campaign
                let startsLater = (campaign.schedule.start.map { $0 > now } ?? false) && !campaign.testOnDevice && campaign.push?.inDeviceTimeZone != true
                let ended = campaign.schedule.end.map { $0 <= now } ?? false
                return !startsLater && !ended
            }
        }
    }

    /// The registration id (`Installation.rowID`) the campaign's fan-out has reached.
    public func plannedThrough(campaignID: Int64) throws -> Int64 {
        try pool.read { try Int64.fetchOne($0, sql: "SELECT planned_through FROM push_sends WHERE campaign_id = ?", arguments: [campaignID]) ?? 0 }
    }

    /// Adds the rows of one page (each installation at most once per campaign) and moves the send's
    /// mark past the page, in one transaction, so a restart continues after it.
    public func plan(
        campaignID: Int64, appID: Int64, entries: [(installation: Installation, due: Date)], through lastRowID: Int64?, complete: Bool, now: Date
    ) throws {
        try pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO push_sends (campaign_id, app_id, started_at) VALUES (?, ?, ?)",
                arguments: [campaignID, appID, now])
            let insert = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO push_outbox (app_id, campaign_id, installation_id, provider, token, platform, language, due_at, state)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')
                """)
            for (installation, due) in entries {
                guard let provider = installation.pushProvider, let token = installation.pushToken else { continue }
                try insert.execute(arguments: [
                    appID, campaignID, installation.installationID, provider.rawValue, token, installation.platform.rawValue,
                    installation.language, due,
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

    /// Queues a silent feed refresh for each of the app's installations with a token that has none pending.
    public func queueRefresh(appID: Int64, now: Date) throws -> Int {
        try pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO push_outbox (app_id, campaign_id, installation_id, provider, token, platform, language, due_at, state)
                    SELECT i.app_id, NULL, i.installation_id, i.push_provider, i.push_token, i.platform, i.language, ?, 'pending'
                    FROM installations i WHERE i.app_id = ? AND i.push_token IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM push_outbox o WHERE o.app_id = i.app_id AND o.campaign_id IS NULL
                                    AND o.installation_id = i.installation_id AND o.state = 'pending')
                    """,
                arguments: [now, appID])
            return db.changesCount
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
                    SELECT o.id, o.app_id, o.campaign_id, o.installation_id, o.provider, o.token, o.platform, o.language, o.attempts,
                           a.push_daily_cap AS cap
                    FROM push_outbox o JOIN apps a ON a.id = o.app_id LEFT JOIN campaigns c ON c.id = o.campaign_id
                    WHERE o.state = 'pending' AND o.due_at <= ?
                    AND (o.campaign_id IS NULL OR (c.state = 'published' AND (c.end_at IS NULL OR c.end_at > ?)))
                    ORDER BY o.due_at, o.id LIMIT ?
                    """,
                arguments: [now, now, limit])
            var claimed: [OutboxEntry] = []
            let dayAgo = now.addingTimeInterval(-86_400)
            for row in rows {
                let id: Int64 = row["id"]
                let campaignID: Int64? = row["campaign_id"]
                let installationID: String = row["installation_id"]
                if let cap: Int = row["cap"], campaignID != nil {
                    let recent = try Int.fetchOne(
                        db, sql: """
                            SELECT COUNT(*) FROM push_outbox WHERE app_id = ? AND installation_id = ? AND state = 'sent'
                            AND sent_at > ? AND campaign_id IS NOT NULL
                            """,
                        arguments: [row["app_id"], installationID, dayAgo]) ?? 0
                    if recent >= cap {
                        try db.execute(sql: "UPDATE push_outbox SET state = 'skipped', reason = 'frequency_cap' WHERE id = ?", arguments: [id])
                        continue
                    }
                }
                guard let provider = PushProvider(rawValue: row["provider"]) else { continue }
                try db.execute(sql: "UPDATE push_outbox SET state = 'sending', attempts = attempts + 1 WHERE id = ?", arguments: [id])
                claimed.append(OutboxEntry(
                    id: id, appID: row["app_id"], campaignID: campaignID, installationID: installationID, provider: provider,
                    token: row["token"], platform: row["platform"], language: row["language"], attempts: row["attempts"] + 1))
            }
            return claimed
        }
    }

    /// Records what became of claimed rows, and removes dead tokens from their installations, in one transaction.
    public func record(_ outcomes: [(entry: OutboxEntry, outcome: OutboxOutcome)], now: Date) throws {
        guard !outcomes.isEmpty else { return }
        try pool.write { db in
            for (entry, outcome) in outcomes {
                switch outcome {
                case .sent(let at):
                    try db.execute(sql: "UPDATE push_outbox SET state = 'sent', sent_at = ?, reason = NULL WHERE id = ?", arguments: [at, entry.id])
                case .retry(let at, let reason):
                    try db.execute(sql: "UPDATE push_outbox SET state = 'pending', due_at = ?, reason = ? WHERE id = ?", arguments: [at, reason, entry.id])
                case .failed(let reason):
                    try db.execute(sql: "UPDATE push_outbox SET state = 'failed', reason = ? WHERE id = ?", arguments: [reason, entry.id])
                case .skipped(let reason):
                    try db.execute(sql: "UPDATE push_outbox SET state = 'skipped', reason = ? WHERE id = ?", arguments: [reason, entry.id])
                case .unregistered(let reason):
                    try db.execute(sql: "UPDATE push_outbox SET state = 'unregistered', reason = ? WHERE id = ?", arguments: [reason, entry.id])
                    try InstallationStore.removeToken(appID: entry.appID, provider: entry.provider, token: entry.token, reason: reason, now: now, in: db)
                    // Other campaigns' rows for the dead token end too, instead of each being refused in turn.
                    try db.execute(
                        sql: "UPDATE push_outbox SET state = 'unregistered', reason = ? WHERE app_id = ? AND token = ? AND state = 'pending'",
                        arguments: [reason, entry.appID, entry.token])
                }
            }
        }
    }

    /// When the earliest pending row falls due, if any.
    public func nextDue() throws -> Date? {
        try pool.read { try Date.fetchOne($0, sql: "SELECT MIN(due_at) FROM push_outbox WHERE state = 'pending'") }
    }

    // MARK: Reading

    public func progress(campaignID: Int64) throws -> PushProgress {
        try pool.read { db in
            var progress = PushProgress()
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM push_outbox WHERE campaign_id = ? GROUP BY state", arguments: [campaignID]) {
                let count: Int = row["n"]
                progress.planned += count
                switch row["state"] as String {
                case "pending": progress.pending = count
                case "sending": progress.sending = count
                case "sent": progress.sent = count
                case "failed": progress.failed = count
                case "unregistered": progress.unregistered = count
                case "skipped": progress.skipped = count
                default: progress.unknown = count
                }
            }
            if let send = try Row.fetchOne(db, sql: "SELECT planned_all, started_at FROM push_sends WHERE campaign_id = ?", arguments: [campaignID]) {
                progress.plannedAll = send["planned_all"]
                progress.started = send["started_at"]
            }
            return progress
        }
    }

    /// Rows that did not arrive, by state and reason, most first (at most `limit` kinds).
    public func failures(campaignID: Int64, limit: Int = 20) throws -> [(state: String, reason: String, count: Int)] {
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
