import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `app_push_credentials` table: one row per app, secrets sealed by `SecretBox`.
struct SQLitePushCredentialStore: PushCredentialStore {
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
