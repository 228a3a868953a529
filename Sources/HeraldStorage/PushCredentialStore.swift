import Foundation
import GRDB

/// What signs an app's APNs requests: the `.p8` key (PKCS#8 PEM), its id, the team, and the topic
/// (the app's bundle id); `url` replaces Apple's address (a test server, a proxy).
public struct APNsCredentials: Sendable, Equatable {
    public var keyPEM: String
    public var keyID: String
    public var teamID: String
    public var topic: String
    public var url: String?

    public init(keyPEM: String, keyID: String, teamID: String, topic: String, url: String? = nil) {
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.url = url
    }
}

/// An app's FCM service account: the JSON file Google issues, with the parts pages show read out.
public struct FCMCredentials: Sendable, Equatable {
    public var serviceAccountJSON: Data
    public var projectID: String
    public var clientEmail: String
    public var url: String?

    public init(serviceAccountJSON: Data, projectID: String, clientEmail: String, url: String? = nil) {
        self.serviceAccountJSON = serviceAccountJSON
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.url = url
    }
}

/// What an app page shows of its push set-up: never a secret.
public struct PushSetup: Sendable, Equatable {
    public var apnsKeyID: String?
    public var apnsTeamID: String?
    public var apnsTopic: String?
    public var apnsURL: String?
    public var fcmProjectID: String?
    public var fcmClientEmail: String?
    public var fcmURL: String?
    public var updatedAt: Date?
    public var updatedBy: String?

    public var hasAPNs: Bool { apnsKeyID != nil }
    public var hasFCM: Bool { fcmProjectID != nil }
}

/// The `app_push_credentials` table: one row per app, secrets sealed by `SecretBox`.
public struct PushCredentialStore: Sendable {
    let pool: DatabasePool
    let box: SecretBox

    /// Sets (or with nil, removes) the app's APNs credentials.
    public func setAPNs(_ credentials: APNsCredentials?, appID: Int64, actor: AuditActor, now: Date) throws {
        let sealed = try credentials.map { try box.seal(Data($0.keyPEM.utf8), context: Self.context("apns", appID)) }
        try pool.write { db in
            try Self.ensureRow(appID: appID, actor: actor, now: now, in: db)
            try db.execute(
                sql: """
                    UPDATE app_push_credentials SET apns_key_sealed = ?, apns_key_id = ?, apns_team_id = ?, apns_topic = ?, apns_url = ?,
                    updated_at = ?, updated_by = ? WHERE app_id = ?
                    """,
                arguments: [sealed, credentials?.keyID, credentials?.teamID, credentials?.topic, credentials?.url, now, actor.label, appID])
            try SQLiteAuditLogStore.record(
                actor, action: credentials == nil ? "app.push.apns.remove" : "app.push.apns.set", subject: "app \(appID)",
                details: credentials.map { "key \($0.keyID), team \($0.teamID), topic \($0.topic)" } ?? "", at: now, in: db)
        }
    }

    /// Sets (or with nil, removes) the app's FCM service account.
    public func setFCM(_ credentials: FCMCredentials?, appID: Int64, actor: AuditActor, now: Date) throws {
        let sealed = try credentials.map { try box.seal($0.serviceAccountJSON, context: Self.context("fcm", appID)) }
        try pool.write { db in
            try Self.ensureRow(appID: appID, actor: actor, now: now, in: db)
            try db.execute(
                sql: """
                    UPDATE app_push_credentials SET fcm_account_sealed = ?, fcm_project_id = ?, fcm_client_email = ?, fcm_url = ?,
                    updated_at = ?, updated_by = ? WHERE app_id = ?
                    """,
                arguments: [sealed, credentials?.projectID, credentials?.clientEmail, credentials?.url, now, actor.label, appID])
            try SQLiteAuditLogStore.record(
                actor, action: credentials == nil ? "app.push.fcm.remove" : "app.push.fcm.set", subject: "app \(appID)",
                details: credentials.map { "project \($0.projectID), \($0.clientEmail)" } ?? "", at: now, in: db)
        }
    }

    /// The app's credentials, opened: for the sender only.
    public func credentials(appID: Int64) throws -> (apns: APNsCredentials?, fcm: FCMCredentials?) {
        guard let row = try pool.read({ try Row.fetchOne($0, sql: "SELECT * FROM app_push_credentials WHERE app_id = ?", arguments: [appID]) }) else {
            return (nil, nil)
        }
        var apns: APNsCredentials?
        if let sealed: Data = row["apns_key_sealed"] {
            let key = try box.open(sealed, context: Self.context("apns", appID))
            apns = APNsCredentials(
                keyPEM: String(decoding: key, as: UTF8.self), keyID: row["apns_key_id"], teamID: row["apns_team_id"],
                topic: row["apns_topic"], url: row["apns_url"])
        }
        var fcm: FCMCredentials?
        if let sealed: Data = row["fcm_account_sealed"] {
            fcm = FCMCredentials(
                serviceAccountJSON: try box.open(sealed, context: Self.context("fcm", appID)), projectID: row["fcm_project_id"],
                clientEmail: row["fcm_client_email"], url: row["fcm_url"])
        }
        return (apns, fcm)
    }

    /// What pages show: which providers are set up, by whom and when.
    public func setup(appID: Int64) throws -> PushSetup {
        try pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM app_push_credentials WHERE app_id = ?", arguments: [appID]) else {
                return PushSetup()
            }
            let hasAPNs = (row["apns_key_sealed"] as Data?) != nil, hasFCM = (row["fcm_account_sealed"] as Data?) != nil
            return PushSetup(
                apnsKeyID: hasAPNs ? row["apns_key_id"] : nil, apnsTeamID: hasAPNs ? row["apns_team_id"] : nil,
                apnsTopic: hasAPNs ? row["apns_topic"] : nil, apnsURL: hasAPNs ? row["apns_url"] : nil,
                fcmProjectID: hasFCM ? row["fcm_project_id"] : nil, fcmClientEmail: hasFCM ? row["fcm_client_email"] : nil,
                fcmURL: hasFCM ? row["fcm_url"] : nil, updatedAt: row["updated_at"], updatedBy: row["updated_by"])
        }
    }

    private static func context(_ provider: String, _ appID: Int64) -> String { "herald push \(provider) app \(appID)" }

    private static func ensureRow(appID: Int64, actor: AuditActor, now: Date, in db: Database) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO app_push_credentials (app_id, updated_at, updated_by) VALUES (?, ?, ?)",
            arguments: [appID, now, actor.label])
    }
}
