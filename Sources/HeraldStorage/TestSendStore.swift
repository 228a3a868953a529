import Foundation
import GRDB
import HeraldDomain

/// A campaign's current document sent to chosen test devices, apart from the live campaign: its state,
/// revision and figures stay as they were. An in-app test is in the devices' feeds until `expiresAt`; a
/// push test is one notification per device with a registered token, through the push outbox.
public struct TestSend: Sendable, Equatable, Identifiable {
    /// What happened to one device when the test was sent.
    public enum Outcome: String, Sendable, Equatable {
        /// In-app: in the device's feed until the test expires.
        case inFeed = "in_feed"
        /// Push: a notification is in the outbox (`Device.delivery` says what followed).
        case queued
        /// Push: the installation has registered no push token, so there is nothing to send to.
        case noToken = "no_token"
    }

    /// A queued notification as the outbox has it now.
    public struct Delivery: Sendable, Equatable {
        /// `pending`, `sending`, `sent`, `failed`, `unregistered`, `skipped` or `unknown` (as `push_outbox.state`).
        public var state: String
        /// The provider's reason, for the states that did not arrive.
        public var reason: String?
        public var sentAt: Date?
    }

    public struct Device: Sendable, Equatable {
        public var installationID: String
        /// The test device's name when the test was sent.
        public var name: String
        public var outcome: Outcome
        public var delivery: Delivery?
    }

    public var id: Int64
    public var appID: Int64
    public var campaignID: Int64
    public var channel: Channel
    /// The campaign's revision that was sent, and its document then.
    public var revision: Int
    public var campaign: Campaign
    public var sentAt: Date
    /// Who sent it, as audit lines name people (`AuditActor.label`).
    public var sentBy: String
    public var expiresAt: Date
    public var devices: [Device]

    /// How long an in-app test stays in its devices' feeds: time to pick up the phone and fire its
    /// trigger, short enough that a forgotten test does not follow its tester through the day.
    public static let inAppLifetime: TimeInterval = 3600
    /// The most devices one test goes to.
    public static let maxDevices = 50
    /// The sends kept per campaign (older ones, with their outbox rows, are removed by the next send).
    public static let keptPerCampaign = 20
    /// The most live in-app tests an app's feeds carry (the newest).
    public static let liveLimit = 200

    /// Whether the test is still in its devices' feeds at `now`.
    public func isLive(at now: Date) -> Bool {
        channel == .inApp && now < expiresAt
    }

    /// Where a test stands on one device, as pages and the API say it.
    public enum Status: Sendable, Equatable {
        /// In-app: in the device's feed until the test expires.
        case inFeed(until: Date)
        /// In-app: the test has left the device's feed.
        case expired(at: Date)
        case noToken
        /// Push: waiting in the outbox, or with the provider now.
        case pending
        case sent(at: Date?)
        /// Push: the provider refused it, or Herald gave up after its tries.
        case failed(reason: String?)
        /// Push: the provider called the token dead; the installation lost it.
        case unregistered(reason: String?)
        /// Push: Herald stopped between handing it over and hearing back; it is not sent again.
        case unknown
        /// An outbox row in a state this version does not know (written by a newer Herald).
        case other(state: String, reason: String?)

        /// The API's word for it.
        public var code: String {
            switch self {
            case .inFeed: "in_feed"
            case .expired: "expired"
            case .noToken: "no_token"
            case .pending: "pending"
            case .sent: "sent"
            case .failed: "failed"
            case .unregistered: "unregistered"
            case .unknown: "unknown"
            case .other(let state, _): state
            }
        }

        /// Whether more may happen to it (a push still in the outbox).
        public var isSettled: Bool { self != .pending }
    }

    /// Where the test stands on `device` at `now`.
    public func status(of device: Device, at now: Date) -> Status {
        switch device.outcome {
        case .inFeed: return now < expiresAt ? .inFeed(until: expiresAt) : .expired(at: expiresAt)
        case .noToken: return .noToken
        case .queued:
            // A queued row went with its send; none means it was removed with an older send, which keeps no rows.
            guard let delivery = device.delivery else { return .unknown }
            switch delivery.state {
            case "pending", "sending": return .pending
            case "sent": return .sent(at: delivery.sentAt)
            case "failed", "skipped": return .failed(reason: delivery.reason)
            case "unregistered": return .unregistered(reason: delivery.reason)
            case "unknown": return .unknown
            default: return .other(state: delivery.state, reason: delivery.reason)
            }
        }
    }

    /// When a test sent at `now` leaves the feeds: a push test is never in them.
    static func expiry(of channel: Channel, sentAt now: Date) -> Date {
        channel == .inApp ? now.addingTimeInterval(inAppLifetime) : now
    }
}

public enum TestSendError: Error, Equatable {
    /// No device, or more than `TestSend.maxDevices`.
    case deviceCount
}

/// Test sends on either engine.
public protocol TestSendStore: Sendable {
    /// Records a test of `stored` as it is now to `devices` (test devices of its app), with its audit line,
    /// in one transaction: an in-app test goes in the devices' feeds; a push test queues one notification
    /// per device with a registered token, due now. Keeps the newest `TestSend.keptPerCampaign` sends of
    /// the campaign. The campaign itself is not written.
    func send(_ stored: StoredCampaign, to devices: [TestDevice], actor: AuditActor, now: Date) throws -> TestSend
    func find(id: Int64) throws -> TestSend?
    /// The campaign's newest sends, newest first.
    func recent(campaignID: Int64, limit: Int) throws -> [TestSend]
    /// The app's in-app tests still in feeds at `now`, newest first, at most `TestSend.liveLimit`.
    func live(appID: Int64, now: Date) throws -> [TestSend]
}

/// A `test_sends` row and its devices as either engine reads them.
struct TestSendRow {
    var id: Int64
    var appID: Int64
    var campaignID: Int64
    var channel: String
    var revision: Int64
    var document: String
    var sentAt: Date
    var sentBy: String
    var expiresAt: Date

    func testSend(devices: [TestSend.Device]) throws -> TestSend {
        guard let channel = Channel(rawValue: channel) else { throw UnreadableStoredValue(column: "test_sends.channel", value: channel) }
        var campaign = try CampaignSave.decode(document)
        campaign.id = campaignID
        return TestSend(
            id: id, appID: appID, campaignID: campaignID, channel: channel, revision: Int(revision), campaign: campaign, sentAt: sentAt,
            sentBy: sentBy, expiresAt: expiresAt, devices: devices)
    }

    /// One device's row, with its outbox row's columns when it was queued.
    static func device(
        installationID: String, name: String, outcome: String, state: String?, reason: String?, sentAt: Date?
    ) throws -> TestSend.Device {
        guard let known = TestSend.Outcome(rawValue: outcome) else { throw UnreadableStoredValue(column: "test_send_devices.outcome", value: outcome) }
        return TestSend.Device(
            installationID: installationID, name: name, outcome: known,
            delivery: state.map { TestSend.Delivery(state: $0, reason: reason, sentAt: sentAt) })
    }

    /// What a send writes, decided alike on every engine: the row's columns, and each device's outcome from
    /// its registration (`tokens`: the installations with a push token, by installation id).
    struct Plan {
        let document: String
        let channel: Channel
        let expiresAt: Date
        let devices: [(device: TestDevice, outcome: TestSend.Outcome, installation: Installation?)]

        init(_ stored: StoredCampaign, devices chosen: [TestDevice], tokens: [String: Installation], now: Date) throws {
            var seen = Set<String>()
            let devices = chosen.filter { seen.insert($0.installationID).inserted }
            guard (1...TestSend.maxDevices).contains(devices.count) else { throw TestSendError.deviceCount }
            document = try CampaignSave.encode(stored.campaign.content)
            channel = stored.campaign.channel
            expiresAt = TestSend.expiry(of: channel, sentAt: now)
            self.devices = devices.map { device in
                guard stored.campaign.channel == .push else { return (device, .inFeed, nil) }
                guard let installation = tokens[device.installationID], installation.pushToken != nil, installation.pushProvider != nil else {
                    return (device, .noToken, nil)
                }
                return (device, .queued, installation)
            }
        }
    }
}

/// The `test_sends` and `test_send_devices` tables in SQLite, and a push test's rows of `push_outbox`.
public struct SQLiteTestSendStore: TestSendStore {
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
