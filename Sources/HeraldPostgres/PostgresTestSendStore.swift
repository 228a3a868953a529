import Foundation
import HeraldStorage
import HeraldDomain
import PostgresNIO

/// Test sends on PostgreSQL: `test_sends`, `test_send_devices`, and a push test's rows of `push_outbox`.
struct PostgresTestSendStore: TestSendStore {
    let database: PostgresAppDatabase

    private static let columns = "id, app_id, campaign_id, channel, revision, document, sent_at, sent_by, expires_at"

    func send(_ stored: StoredCampaign, to devices: [TestDevice], actor: AuditActor, now: Date) throws -> TestSend {
        let stamp = now.storedPrecision
        let id = try database.write { session -> Int64 in
            var tokens: [String: Installation] = [:]
            if stored.campaign.channel == .push {
                for device in devices {
                    tokens[device.installationID] = try PostgresInstallationStore.installation(
                        appID: stored.campaign.app, id: device.installationID, in: session)
                }
            }
            let plan = try TestSendRow.Plan(stored, devices: devices, tokens: tokens, now: stamp)
            guard let id = try session.one(
                """
                INSERT INTO test_sends (app_id, campaign_id, channel, revision, document, sent_at, sent_by, expires_at)
                VALUES (\(stored.campaign.app), \(stored.id), \(plan.channel.rawValue), \(Int64(stored.revision)), \(plan.document), \(stamp),
                        \(actor.label), \(plan.expiresAt.storedPrecision))
                RETURNING id
                """, as: Int64.self)
            else { throw UnreadableStoredValue(column: "test_sends.id", value: String(stored.id)) }
            for (position, (device, outcome, installation)) in plan.devices.enumerated() {
                try session.execute(
                    """
                    INSERT INTO test_send_devices (test_send_id, position, installation_id, name, outcome)
                    VALUES (\(id), \(Int64(position)), \(device.installationID), \(device.name), \(outcome.rawValue))
                    """)
                guard let installation, let provider = installation.pushProvider, let token = installation.pushToken else { continue }
                try session.execute(
                    """
                    INSERT INTO push_outbox (app_id, campaign_id, test_send_id, installation_id, provider, token, platform, language, due_at_ms, state)
                    VALUES (\(stored.campaign.app), NULL, \(id), \(installation.installationID), \(provider.rawValue), \(token),
                            \(installation.platform.rawValue), \(installation.language), \(stamp.storedMilliseconds), 'pending')
                    """)
            }
            try session.execute(
                """
                DELETE FROM test_sends WHERE campaign_id = \(stored.id)
                AND id NOT IN (SELECT id FROM test_sends WHERE campaign_id = \(stored.id) ORDER BY id DESC LIMIT \(Int64(TestSend.keptPerCampaign)))
                """)
            try PostgresAuditLogStore.record(
                actor, .campaignTestSent(id: stored.id, name: stored.campaign.name, revision: stored.revision, devices: plan.devices.map(\.device.name)),
                at: now, in: session)
            return id
        }
        guard let sent = try find(id: id) else { throw UnreadableStoredValue(column: "test_sends.id", value: String(id)) }
        return sent
    }

    func find(id: Int64) throws -> TestSend? {
        try database.read { try Self.sends("SELECT \(unescaped: Self.columns) FROM test_sends WHERE id = \(id)", in: $0).first }
    }

    func recent(campaignID: Int64, limit: Int) throws -> [TestSend] {
        try database.read {
            try Self.sends(
                "SELECT \(unescaped: Self.columns) FROM test_sends WHERE campaign_id = \(campaignID) ORDER BY id DESC LIMIT \(Int64(max(0, limit)))",
                in: $0)
        }
    }

    func live(appID: Int64, now: Date) throws -> [TestSend] {
        try database.read {
            try Self.sends(
                """
                SELECT \(unescaped: Self.columns) FROM test_sends
                WHERE app_id = \(appID) AND channel = 'in_app' AND expires_at > \(now.storedPrecision)
                ORDER BY id DESC LIMIT \(Int64(TestSend.liveLimit))
                """, in: $0)
        }
    }

    private static func sends(_ query: PostgresQuery, in session: PostgresSession) throws -> [TestSend] {
        try session.rows(query).map { row in
            let (id, appID, campaignID, channel, revision, document, sentAt, sentBy, expiresAt) = try row.decode(
                (Int64, Int64, Int64, String, Int64, String, Date, String, Date).self)
            let devices = try session.rows(
                """
                SELECT d.installation_id, d.name, d.outcome, o.state, o.reason, o.sent_at FROM test_send_devices d
                LEFT JOIN push_outbox o ON o.test_send_id = d.test_send_id AND o.installation_id = d.installation_id
                WHERE d.test_send_id = \(id) ORDER BY d.position
                """
            ).map { device in
                let (installationID, name, outcome, state, reason, sentAt) = try device.decode((String, String, String, String?, String?, Date?).self)
                return try TestSendRow.device(installationID: installationID, name: name, outcome: outcome, state: state, reason: reason, sentAt: sentAt)
            }
            return try TestSendRow(
                id: id, appID: appID, campaignID: campaignID, channel: channel, revision: revision, document: document, sentAt: sentAt,
                sentBy: sentBy, expiresAt: expiresAt
            ).testSend(devices: devices)
        }
    }
}
