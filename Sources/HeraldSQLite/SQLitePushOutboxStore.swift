import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The outbox in SQLite.
struct SQLitePushOutboxStore: PushOutboxStore {
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
