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

/// An app's `app_push_credentials` row as either engine reads it.
struct StoredPushCredentials {
    var apnsKeySealed: Data?
    var apnsKeyID: String?
    var apnsTeamID: String?
    var apnsTopic: String?
    var apnsURL: String?
    var fcmAccountSealed: Data?
    var fcmProjectID: String?
    var fcmClientEmail: String?
    var fcmURL: String?
    var updatedAt: Date
    var updatedBy: String

    /// The credentials, opened with `box`; a provider whose sealed secret is there but whose other parts are
    /// not (written by something else) reads as not set up.
    func opened(box: SecretBox, appID: Int64) throws -> (apns: APNsCredentials?, fcm: FCMCredentials?) {
        var apns: APNsCredentials?
        if let apnsKeySealed, let apnsKeyID, let apnsTeamID, let apnsTopic {
            let key = try box.open(apnsKeySealed, context: StoredPushCredentials.context("apns", appID))
            apns = APNsCredentials(keyPEM: String(decoding: key, as: UTF8.self), keyID: apnsKeyID, teamID: apnsTeamID, topic: apnsTopic, url: apnsURL)
        }
        var fcm: FCMCredentials?
        if let fcmAccountSealed, let fcmProjectID, let fcmClientEmail {
            fcm = FCMCredentials(
                serviceAccountJSON: try box.open(fcmAccountSealed, context: StoredPushCredentials.context("fcm", appID)),
                projectID: fcmProjectID, clientEmail: fcmClientEmail, url: fcmURL)
        }
        return (apns, fcm)
    }

    /// What binds a sealed secret to its provider and app, so one cannot be moved to another.
    static func context(_ provider: String, _ appID: Int64) -> String { "herald push \(provider) app \(appID)" }

    /// What pages show: never a secret.
    var setup: PushSetup {
        let hasAPNs = apnsKeySealed != nil, hasFCM = fcmAccountSealed != nil
        return PushSetup(
            apnsKeyID: hasAPNs ? apnsKeyID : nil, apnsTeamID: hasAPNs ? apnsTeamID : nil, apnsTopic: hasAPNs ? apnsTopic : nil,
            apnsURL: hasAPNs ? apnsURL : nil, fcmProjectID: hasFCM ? fcmProjectID : nil, fcmClientEmail: hasFCM ? fcmClientEmail : nil,
            fcmURL: hasFCM ? fcmURL : nil, updatedAt: updatedAt, updatedBy: updatedBy)
    }
}

/// Apps' push credentials, sealed, on either engine.
public protocol PushCredentialStore: Sendable {
    /// Sets (or with nil, removes) the app's APNs credentials, with its audit line.
    func setAPNs(_ credentials: APNsCredentials?, appID: Int64, actor: AuditActor, now: Date) throws
    /// Sets (or with nil, removes) the app's FCM service account, with its audit line.
    func setFCM(_ credentials: FCMCredentials?, appID: Int64, actor: AuditActor, now: Date) throws
    /// The app's credentials, opened: for the sender only.
    func credentials(appID: Int64) throws -> (apns: APNsCredentials?, fcm: FCMCredentials?)
    /// What pages show: which providers are set up, by whom and when.
    func setup(appID: Int64) throws -> PushSetup
}

/// The `app_push_credentials` table: one row per app, secrets sealed by `SecretBox`.
public struct SQLitePushCredentialStore: PushCredentialStore {
    let pool: DatabasePool
    let box: SecretBox

    /// Sets (or with nil, removes) the app's APNs credentials.
    public func setAPNs(_ credentials: APNsCredentials?, appID: Int64, actor: AuditActor, now: Date) throws {
        let sealed = try credentials.map { try box.seal(Data($0.keyPEM.utf8), context: StoredPushCredentials.context("apns", appID)) }
        try pool.write { db in
            try Self.ensureRow(appID: appID, actor: actor, now: now, in: db)
            try db.execute(
                sql: """
                    UPDATE app_push_credentials SET apns_key_sealed = ?, apns_key_id = ?, apns_team_id = ?, apns_topic = ?, apns_url = ?,
                    updated_at = ?, updated_by = ? WHERE app_id = ?
                    """,
                arguments: [sealed, credentials?.keyID, credentials?.teamID, credentials?.topic, credentials?.url, now, actor.label, appID])
            try SQLiteAuditLogStore.record(actor, .apns(appID: appID, credentials), at: now, in: db)
        }
    }

    /// Sets (or with nil, removes) the app's FCM service account.
    public func setFCM(_ credentials: FCMCredentials?, appID: Int64, actor: AuditActor, now: Date) throws {
        let sealed = try credentials.map { try box.seal($0.serviceAccountJSON, context: StoredPushCredentials.context("fcm", appID)) }
        try pool.write { db in
            try Self.ensureRow(appID: appID, actor: actor, now: now, in: db)
            try db.execute(
                sql: """
                    UPDATE app_push_credentials SET fcm_account_sealed = ?, fcm_project_id = ?, fcm_client_email = ?, fcm_url = ?,
                    updated_at = ?, updated_by = ? WHERE app_id = ?
                    """,
                arguments: [sealed, credentials?.projectID, credentials?.clientEmail, credentials?.url, now, actor.label, appID])
            try SQLiteAuditLogStore.record(actor, .fcm(appID: appID, credentials), at: now, in: db)
        }
    }

    public func credentials(appID: Int64) throws -> (apns: APNsCredentials?, fcm: FCMCredentials?) {
        try stored(appID: appID)?.opened(box: box, appID: appID) ?? (nil, nil)
    }

    public func setup(appID: Int64) throws -> PushSetup {
        try stored(appID: appID)?.setup ?? PushSetup()
    }

    private func stored(appID: Int64) throws -> StoredPushCredentials? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM app_push_credentials WHERE app_id = ?", arguments: [appID]).map { row in
                StoredPushCredentials(
                    apnsKeySealed: row["apns_key_sealed"], apnsKeyID: row["apns_key_id"], apnsTeamID: row["apns_team_id"],
                    apnsTopic: row["apns_topic"], apnsURL: row["apns_url"], fcmAccountSealed: row["fcm_account_sealed"],
                    fcmProjectID: row["fcm_project_id"], fcmClientEmail: row["fcm_client_email"], fcmURL: row["fcm_url"],
                    updatedAt: row["updated_at"], updatedBy: row["updated_by"])
            }
        }
    }


    private static func ensureRow(appID: Int64, actor: AuditActor, now: Date, in db: Database) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO app_push_credentials (app_id, updated_at, updated_by) VALUES (?, ?, ?)",
            arguments: [appID, now, actor.label])
    }
}
