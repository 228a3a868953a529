import Foundation
import HeraldDomain
import HeraldStorage
import PostgresNIO

/// The push outbox on PostgreSQL. Several instances claim from it at once: a claim locks the rows it takes
/// (`FOR UPDATE SKIP LOCKED`), so another instance passes over them instead of taking them too.
struct PostgresPushOutboxStore: PushOutboxStore {
    let database: PostgresAppDatabase

    // MARK: Planning

    func campaignsToPlan(now: Date) throws -> [StoredCampaign] {
        try database.read { session in
            try session.rows(
                """
                SELECT \(unescaped: PostgresCampaignStore.columns.split(separator: ", ").map { "c.\($0)" }.joined(separator: ", "))
                FROM campaigns c LEFT JOIN push_sends s ON s.campaign_id = c.id
                WHERE c.layout = \(Campaign.pushLayout) AND c.state = 'published' AND (s.planned_all IS NULL OR NOT s.planned_all)
                ORDER BY c.id
                """
            ).map(PostgresCampaignStore.stored).filter { $0.isDueForPlanning(now: now) }
        }
    }

    func plannedThrough(campaignID: Int64) throws -> Int64 {
        try database.read { try $0.one("SELECT planned_through FROM push_sends WHERE campaign_id = \(campaignID)", as: Int64.self) ?? 0 }
    }

    func plan(
        campaignID: Int64, appID: Int64, entries: [(installation: Installation, due: Date?)], through lastRowID: Int64?, complete: Bool, now: Date
    ) throws {
        try database.write { session in
            try session.execute(
                """
                INSERT INTO push_sends (campaign_id, app_id, started_at) VALUES (\(campaignID), \(appID), \(now.storedPrecision))
                ON CONFLICT (campaign_id) DO NOTHING
                """)
            let sendable = entries.compactMap { installation, due in
                installation.pushProvider.flatMap { provider in installation.pushToken.map { (installation, provider, $0, PlannedRow(due: due)) } }
            }
            // A page's rows as arrays in one statement: a statement a row was a round trip a row (a
            // 10,000-device fan-out, pages read and planned, took 6.3-7.9 s in a debug build; 2.3 s so).
            for part in sendable.chunked(PostgresEventStore.rowsPerStatement) {
                let (ids, providers, tokens) = (part.map(\.0.installationID), part.map(\.1.rawValue), part.map(\.2))
                let (platforms, languages, hasLanguage) = (part.map(\.0.platform.rawValue), part.map { $0.0.language ?? "" }, part.map { $0.0.language != nil })
                let (dues, states, reasons) = (part.map(\.3.dueAtMilliseconds), part.map(\.3.state), part.map { $0.3.reason ?? "" })
                // The unique (campaign, installation) decides: two instances planning one page add each row once.
                try session.execute(
                    """
                    INSERT INTO push_outbox (app_id, campaign_id, installation_id, provider, token, platform, language, due_at_ms, state, reason)
                    SELECT \(appID), \(campaignID), t.installation_id, t.provider, t.token, t.platform,
                        CASE WHEN t.has_language THEN t.language END, t.due_at_ms, t.state, nullif(t.reason, '')
                    FROM unnest(\(ids)::text[], \(providers)::text[], \(tokens)::text[], \(platforms)::text[], \(languages)::text[],
                                \(hasLanguage)::bool[], \(dues)::bigint[], \(states)::text[], \(reasons)::text[])
                        AS t(installation_id, provider, token, platform, language, has_language, due_at_ms, state, reason)
                    ON CONFLICT (campaign_id, installation_id) DO NOTHING
                    """)
            }
            if let lastRowID {
                // Never moved back by an instance that planned an earlier page late.
                try session.execute(
                    "UPDATE push_sends SET planned_through = GREATEST(planned_through, \(lastRowID)) WHERE campaign_id = \(campaignID)")
            }
            if complete {
                try session.execute("UPDATE push_sends SET planned_all = true WHERE campaign_id = \(campaignID)")
            }
        }
    }

    func queueRefresh(appID: Int64, now: Date, spacing: TimeInterval) throws -> Int {
        try database.write { session in
            // Two instances queueing at once: the second sees the first's pending rows and due time, and adds none.
            try session.lock("push_outbox refresh \(appID)")
            let latest = try session.one("SELECT push_refresh_due_at_ms FROM apps WHERE id = \(appID)", as: Int64?.self) ?? nil
            let due = RefreshSpacing.due(latest: latest, now: now.storedMilliseconds, spacing: spacing)
            let queued = try session.changes(
                """
                INSERT INTO push_outbox (app_id, campaign_id, installation_id, provider, token, platform, language, due_at_ms, state)
                SELECT i.app_id, NULL, i.installation_id, i.push_provider, i.push_token, i.platform, i.language, \(due), 'pending'
                FROM installations i WHERE i.app_id = \(appID) AND i.push_token IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM push_outbox o WHERE o.app_id = i.app_id AND o.campaign_id IS NULL AND o.test_send_id IS NULL
                                AND o.installation_id = i.installation_id AND o.state = 'pending')
                """)
            if queued > 0 {
                try session.execute("UPDATE apps SET push_refresh_due_at_ms = \(due) WHERE id = \(appID)")
            }
            return queued
        }
    }

    // MARK: Sending

    func settleInterrupted() throws -> Int {
        try database.write { try $0.changes("UPDATE push_outbox SET state = 'unknown', reason = 'interrupted' WHERE state = 'sending'") }
    }

    func claim(limit: Int, now: Date) throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }
        let stamp = now.storedPrecision
        return try database.write { session in
            let candidates = try session.rows(
                """
                SELECT o.id, o.app_id, o.campaign_id, o.test_send_id, o.installation_id, o.provider, o.token, o.platform, o.language,
                       o.attempts, a.push_daily_cap
                FROM push_outbox o JOIN apps a ON a.id = o.app_id LEFT JOIN campaigns c ON c.id = o.campaign_id
                WHERE o.state = 'pending' AND o.due_at_ms <= \(now.storedMilliseconds)
                AND (o.campaign_id IS NULL OR (c.state = 'published' AND (c.end_at IS NULL OR c.end_at > \(stamp))))
                ORDER BY o.due_at_ms, o.id LIMIT \(Int64(limit))
                FOR UPDATE OF o SKIP LOCKED
                """
            ).map { row in
                let (id, appID, campaignID, testSendID, installationID, provider, token, platform, language, attempts, cap) = try row.decode(
                    (Int64, Int64, Int64?, Int64?, String, String, String, String, String?, Int64, Int64?).self)
                return OutboxCandidate(
                    id: id, appID: appID, campaignID: campaignID, testSendID: testSendID, installationID: installationID, provider: provider,
                    token: token,
                    platform: platform, language: language, attempts: attempts, cap: cap)
            }
            var claimed: [OutboxEntry] = []
            for candidate in candidates {
                let decision = try candidate.decide(now: now) { appID, installationID, since in
                    try session.one(
                        """
                        SELECT count(*) FROM push_outbox WHERE app_id = \(appID) AND installation_id = \(installationID) AND state = 'sent'
                        AND sent_at > \(since.storedPrecision) AND campaign_id IS NOT NULL
                        """, as: Int64.self) ?? 0
                }
                switch decision {
                case .end(let state, let reason):
                    try session.execute("UPDATE push_outbox SET state = \(state), reason = \(reason) WHERE id = \(candidate.id)")
                case .send(let entry):
                    try session.execute("UPDATE push_outbox SET state = 'sending', attempts = attempts + 1 WHERE id = \(entry.id)")
                    claimed.append(entry)
                }
            }
            return claimed
        }
    }

    func record(_ outcomes: [(entry: OutboxEntry, outcome: OutboxOutcome)], now: Date) throws {
        guard !outcomes.isEmpty else { return }
        try database.write { session in
            for (entry, outcome) in outcomes {
                let stored = outcome.stored
                try session.execute(
                    """
                    UPDATE push_outbox SET state = \(stored.state), reason = \(stored.reason),
                        sent_at = COALESCE(\(stored.sentAt?.storedPrecision), sent_at), due_at_ms = COALESCE(\(stored.dueAt?.storedMilliseconds), due_at_ms)
                    WHERE id = \(entry.id)
                    """)
                if case .unregistered = outcome {
                    try PostgresInstallationStore.removeToken(
                        appID: entry.appID, provider: entry.provider, token: entry.token, reason: stored.reason ?? "", now: now, in: session)
                    // Other campaigns' rows for the dead token end too, instead of each being refused in turn.
                    try session.execute(
                        """
                        UPDATE push_outbox SET state = 'unregistered', reason = \(stored.reason)
                        WHERE app_id = \(entry.appID) AND token = \(entry.token) AND state = 'pending'
                        """)
                }
            }
        }
    }

    func nextDue() throws -> Date? {
        try database.read { session in
            (try session.one("SELECT min(due_at_ms) FROM push_outbox WHERE state = 'pending'", as: Int64?.self) ?? nil).map(Date.init(storedMilliseconds:))
        }
    }

    // MARK: Reading

    func progress(campaignID: Int64) throws -> PushProgress {
        try database.read { session in
            var progress = PushProgress()
            for row in try session.rows("SELECT state, count(*) FROM push_outbox WHERE campaign_id = \(campaignID) GROUP BY state") {
                let (state, count) = try row.decode((String, Int64).self)
                progress.add(state: state, count: Int(count))
            }
            if let send = try session.rows("SELECT planned_all, started_at FROM push_sends WHERE campaign_id = \(campaignID)").first {
                (progress.plannedAll, progress.started) = try send.decode((Bool, Date?).self)
            }
            return progress
        }
    }

    func failures(campaignID: Int64, limit: Int) throws -> [(state: String, reason: String, count: Int)] {
        try database.read { session in
            try session.rows(
                """
                SELECT state, reason, n FROM (
                    SELECT state, COALESCE(reason, '') AS reason, count(*) AS n FROM push_outbox
                    WHERE campaign_id = \(campaignID) AND state IN ('failed', 'unregistered', 'skipped', 'unknown')
                    GROUP BY 1, 2
                ) AS kinds
                ORDER BY n DESC, state COLLATE "C", reason COLLATE "C" LIMIT \(Int64(max(0, limit)))
                """
            ).map { row in
                let (state, reason, count) = try row.decode((String, String, Int64).self)
                return (state, reason, Int(count))
            }
        }
    }

    func sentBreakdown(campaignID: Int64) throws -> (byPlatform: [(platform: String, targeted: Int, sent: Int)], byDay: [(day: String, sent: Int)]) {
        try database.read { session in
            let platforms = try session.rows(
                """
                SELECT platform, count(*), count(*) FILTER (WHERE state = 'sent') FROM push_outbox
                WHERE campaign_id = \(campaignID) GROUP BY platform ORDER BY platform COLLATE "C"
                """
            ).map { row in
                let (platform, targeted, sent) = try row.decode((String, Int64, Int64).self)
                return (platform: platform, targeted: Int(targeted), sent: Int(sent))
            }
            let days = try session.rows(
                """
                SELECT to_char(sent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) FROM push_outbox
                WHERE campaign_id = \(campaignID) AND state = 'sent' GROUP BY day ORDER BY day
                """
            ).map { row in
                let (day, sent) = try row.decode((String, Int64).self)
                return (day: day, sent: Int(sent))
            }
            return (platforms, days)
        }
    }
}
