import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `test_sends` and `test_send_devices` tables in SQLite, and a push test's rows of `push_outbox`.
struct SQLiteTestSendStore: TestSendStore {
    let pool: DatabasePool

    public func send(_ stored: StoredCampaign, to devices: [TestDevice], actor: AuditActor, now: Date) throws -> TestSend {
        let id = try pool.write { db -> Int64 in
            var tokens: [String: Installation] = [:]
            if stored.campaign.channel == .push {
                for device in devices {
                    tokens[device.installationID] = try SQLiteInstallationStore.installation(appID: stored.campaign.app, id: device.installationID, db)
                }
            }
            let plan = try TestSendRow.Plan(stored, devices: devices, tokens: tokens, now: now)
            try db.execute(
                sql: """
                    INSERT INTO test_sends (app_id, campaign_id, channel, revision, document, sent_at, sent_by, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [stored.campaign.app, stored.id, plan.channel.rawValue, stored.revision, plan.document, now, actor.label, plan.expiresAt])
            let id = db.lastInsertedRowID
            for (position, (device, outcome, installation)) in plan.devices.enumerated() {
                try db.execute(
                    sql: "INSERT INTO test_send_devices (test_send_id, position, installation_id, name, outcome) VALUES (?, ?, ?, ?, ?)",
                    arguments: [id, position, device.installationID, device.name, outcome.rawValue])
                guard let installation, let provider = installation.pushProvider, let token = installation.pushToken else { continue }
                try db.execute(
                    sql: """
                        INSERT INTO push_outbox (app_id, campaign_id, test_send_id, installation_id, provider, token, platform, language, due_at_ms, state)
                        VALUES (?, NULL, ?, ?, ?, ?, ?, ?, ?, 'pending')
                        """,
                    arguments: [stored.campaign.app, id, installation.installationID, provider.rawValue, token, installation.platform.rawValue,
                                installation.language, now.storedMilliseconds])
            }
            try db.execute(
                sql: "DELETE FROM test_sends WHERE campaign_id = ? AND id NOT IN (SELECT id FROM test_sends WHERE campaign_id = ? ORDER BY id DESC LIMIT ?)",
                arguments: [stored.id, stored.id, TestSend.keptPerCampaign])
            try SQLiteAuditLogStore.record(
                actor, .campaignTestSent(id: stored.id, name: stored.campaign.name, revision: stored.revision, devices: plan.devices.map(\.device.name)),
                at: now, in: db)
            return id
        }
        guard let sent = try find(id: id) else { throw UnreadableStoredValue(column: "test_sends.id", value: String(id)) }
        return sent
    }

    public func find(id: Int64) throws -> TestSend? {
        try pool.read { db in try Self.sends(sql: "SELECT * FROM test_sends WHERE id = ?", arguments: [id], in: db).first }
    }

    public func recent(campaignID: Int64, limit: Int) throws -> [TestSend] {
        try pool.read { db in
            try Self.sends(
                sql: "SELECT * FROM test_sends WHERE campaign_id = ? ORDER BY id DESC LIMIT ?", arguments: [campaignID, max(0, limit)], in: db)
        }
    }

    public func live(appID: Int64, now: Date) throws -> [TestSend] {
        try pool.read { db in
            try Self.sends(
                sql: "SELECT * FROM test_sends WHERE app_id = ? AND channel = 'in_app' AND expires_at > ? ORDER BY id DESC LIMIT ?",
                arguments: [appID, now, TestSend.liveLimit], in: db)
        }
    }

    private static func sends(sql: String, arguments: StatementArguments, in db: Database) throws -> [TestSend] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            let id: Int64 = row["id"]
            let devices = try Row.fetchAll(
                db, sql: """
                    SELECT d.installation_id, d.name, d.outcome, o.state, o.reason, o.sent_at FROM test_send_devices d
                    LEFT JOIN push_outbox o ON o.test_send_id = d.test_send_id AND o.installation_id = d.installation_id
                    WHERE d.test_send_id = ? ORDER BY d.position
                    """,
                arguments: [id]
            ).map { device in
                try TestSendRow.device(
                    installationID: device["installation_id"], name: device["name"], outcome: device["outcome"], state: device["state"],
                    reason: device["reason"], sentAt: device["sent_at"])
            }
            return try TestSendRow(
                id: id, appID: row["app_id"], campaignID: row["campaign_id"], channel: row["channel"], revision: row["revision"],
                document: row["document"], sentAt: row["sent_at"], sentBy: row["sent_by"], expiresAt: row["expires_at"]
            ).testSend(devices: devices)
        }
    }
}
