import Foundation
import HeraldDomain
import HeraldStorage
import NIOFoundationCompat
import PostgresNIO

/// Push credentials on PostgreSQL: one row per app, secrets sealed by `SecretBox`.
struct PostgresPushCredentialStore: PushCredentialStore {
    let database: PostgresAppDatabase
    let box: SecretBox

    func setAPNs(_ credentials: APNsCredentials?, appID: Int64, actor: AuditActor, now: Date) throws {
        let sealed = try credentials.map { ByteBuffer(data: try box.seal(Data($0.keyPEM.utf8), context: StoredPushCredentials.context("apns", appID))) }
        try database.write { db in
            try db.execute(
                """
                INSERT INTO app_push_credentials (app_id, apns_key_sealed, apns_key_id, apns_team_id, apns_topic, apns_url, updated_at, updated_by)
                VALUES (\(appID), \(sealed), \(credentials?.keyID), \(credentials?.teamID), \(credentials?.topic), \(credentials?.url),
                        \(now.storedPrecision), \(actor.label))
                ON CONFLICT (app_id) DO UPDATE SET
                    apns_key_sealed = excluded.apns_key_sealed, apns_key_id = excluded.apns_key_id, apns_team_id = excluded.apns_team_id,
                    apns_topic = excluded.apns_topic, apns_url = excluded.apns_url, updated_at = excluded.updated_at,
                    updated_by = excluded.updated_by
                """)
            try PostgresAuditLogStore.record(actor, .apns(appID: appID, credentials), at: now, in: db)
        }
    }

    func setFCM(_ credentials: FCMCredentials?, appID: Int64, actor: AuditActor, now: Date) throws {
        let sealed = try credentials.map { ByteBuffer(data: try box.seal($0.serviceAccountJSON, context: StoredPushCredentials.context("fcm", appID))) }
        try database.write { db in
            try db.execute(
                """
                INSERT INTO app_push_credentials (app_id, fcm_account_sealed, fcm_project_id, fcm_client_email, fcm_url, updated_at, updated_by)
                VALUES (\(appID), \(sealed), \(credentials?.projectID), \(credentials?.clientEmail), \(credentials?.url),
                        \(now.storedPrecision), \(actor.label))
                ON CONFLICT (app_id) DO UPDATE SET
                    fcm_account_sealed = excluded.fcm_account_sealed, fcm_project_id = excluded.fcm_project_id,
                    fcm_client_email = excluded.fcm_client_email, fcm_url = excluded.fcm_url, updated_at = excluded.updated_at,
                    updated_by = excluded.updated_by
                """)
            try PostgresAuditLogStore.record(actor, .fcm(appID: appID, credentials), at: now, in: db)
        }
    }

    func credentials(appID: Int64) throws -> (apns: APNsCredentials?, fcm: FCMCredentials?) {
        try stored(appID: appID)?.opened(box: box, appID: appID) ?? (nil, nil)
    }

    func setup(appID: Int64) throws -> PushSetup {
        try stored(appID: appID)?.setup ?? PushSetup()
    }

    private func stored(appID: Int64) throws -> StoredPushCredentials? {
        try database.read { db in
            try db.rows(
                """
                SELECT apns_key_sealed, apns_key_id, apns_team_id, apns_topic, apns_url, fcm_account_sealed, fcm_project_id,
                       fcm_client_email, fcm_url, updated_at, updated_by
                FROM app_push_credentials WHERE app_id = \(appID)
                """
            ).first.map { row in
                let (apnsKey, apnsKeyID, apnsTeamID, apnsTopic, apnsURL, fcmAccount, fcmProjectID, fcmClientEmail, fcmURL, updatedAt, updatedBy) =
                    try row.decode((ByteBuffer?, String?, String?, String?, String?, ByteBuffer?, String?, String?, String?, Date, String).self)
                return StoredPushCredentials(
                    apnsKeySealed: apnsKey.map { Data(buffer: $0) }, apnsKeyID: apnsKeyID, apnsTeamID: apnsTeamID, apnsTopic: apnsTopic,
                    apnsURL: apnsURL, fcmAccountSealed: fcmAccount.map { Data(buffer: $0) }, fcmProjectID: fcmProjectID,
                    fcmClientEmail: fcmClientEmail, fcmURL: fcmURL, updatedAt: updatedAt, updatedBy: updatedBy)
            }
        }
    }
}
