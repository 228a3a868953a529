import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `installations` table in SQLite.
struct SQLiteInstallationStore: InstallationStore {
    let pool: DatabasePool
    let registrations: InstallationGroupCommit

    public func upsert(
        appID: Int64, installationID: String, registration: InstallationRegistration, now: Date
    ) throws -> (installation: Installation, created: Bool) {
        try registration.refuseNUL(installationID: installationID)
        let upsert = InstallationUpsert(appID: appID, installationID: installationID, registration: registration, now: now)
        return try registrations.submit(upsert) { group in
            try pool.write { db in try group.map { try Self.upsert($0, db) } }
        }
    }

    /// One registration of a group, inside the group's transaction. Its statements are the connection's
    /// cached ones: compiling them again for every registration (SQLite's parser, GRDB's authorizer and
    /// region) cost more CPU than running them.
    private static func upsert(_ upsert: InstallationUpsert, _ db: Database) throws -> (installation: Installation, created: Bool) {
        let (appID, installationID, registration, now) = (upsert.appID, upsert.installationID, upsert.registration, upsert.now)
        let existing = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM installations WHERE app_id = ? AND installation_id = ?"), arguments: [appID, installationID])
        if let provider = registration.pushProvider, let token = registration.pushToken {
            try db.cachedStatement(
                sql: """
                    UPDATE installations SET push_token = NULL, push_provider = NULL, updated_at = ?
                    WHERE app_id = ? AND push_provider = ? AND push_token = ? AND installation_id <> ?
                    """
            ).execute(arguments: [now, appID, provider.rawValue, token, installationID])
        }
        // A new token is live whatever happened to the last one; without one, a pruned token's record stays.
        let hasToken = registration.pushToken != nil
        try db.cachedStatement(
            sql: """
                INSERT INTO installations
                    (app_id, installation_id, platform, push_provider, push_token, app_version, language, country, time_zone,
                     notifications_allowed, created_at, updated_at, registered_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_id, installation_id) DO UPDATE SET
                    platform = excluded.platform,
                    push_provider = CASE WHEN excluded.push_token IS NOT NULL OR token_removed_at IS NULL
                        THEN excluded.push_provider ELSE push_provider END,
                    push_token = excluded.push_token, app_version = excluded.app_version, language = excluded.language,
                    country = excluded.country, time_zone = excluded.time_zone, notifications_allowed = excluded.notifications_allowed,
                    token_removed_at = CASE WHEN ? THEN NULL ELSE token_removed_at END,
                    token_removed_reason = CASE WHEN ? THEN NULL ELSE token_removed_reason END,
                    updated_at = excluded.updated_at, registered_at = excluded.registered_at
                """
        ).execute(
            arguments: [
                appID, installationID, registration.platform.rawValue, registration.pushProvider?.rawValue, registration.pushToken,
                registration.appVersion, registration.language, registration.country, registration.timeZone,
                registration.notificationsAllowed, now, now, now, hasToken, hasToken,
            ])
        guard let stored = try Self.installation(appID: appID, id: installationID, db) else {
            throw InstallationStoreError.unreadable("installation \(installationID) of app \(appID) after saving it")
        }
        return (stored, existing == nil)
    }

    public func installation(appID: Int64, id: String) throws -> Installation? {
        try pool.read { try Self.installation(appID: appID, id: id, $0) }
    }

    /// `installation(appID:id:)` inside the caller's transaction (a push test reads its devices' tokens as it queues them).
    static func installation(appID: Int64, id: String, _ db: Database) throws -> Installation? {
        try Installation.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM installations WHERE app_id = ? AND installation_id = ?"), arguments: [appID, id])
    }

    @discardableResult
    public func removeToken(appID: Int64, provider: PushProvider, token: String, reason: String, now: Date) throws -> Bool {
        try pool.write { try Self.removeToken(appID: appID, provider: provider, token: token, reason: reason, now: now, in: $0) }
    }

    /// `removeToken` inside the caller's transaction (the outbox records the send and prunes at once).
    @discardableResult
    static func removeToken(appID: Int64, provider: PushProvider, token: String, reason: String, now: Date, in db: Database) throws -> Bool {
        try db.execute(
            sql: """
                UPDATE installations SET push_token = NULL, token_removed_at = ?, token_removed_reason = ?, updated_at = ?
                WHERE app_id = ? AND push_provider = ? AND push_token = ?
                """,
            arguments: [now, Installation.storedReason(reason), now, appID, provider.rawValue, token])
        return db.changesCount > 0
    }

    public func withTokens(appID: Int64, provider: PushProvider?, after: Int64?, pageSize: Int) throws -> InstallationPage {
        let limit = InstallationPage.limit(pageSize)
        let installations = try pool.read { db in
            try Installation.fetchAll(
                db, sql: """
                    SELECT * FROM installations
                    WHERE app_id = ? AND (? IS NULL OR push_provider = ?) AND push_token IS NOT NULL AND id > ?
                    ORDER BY id LIMIT ?
                    """,
                arguments: [appID, provider?.rawValue, provider?.rawValue, after ?? 0, limit])
        }
        return InstallationPage(installations, limit: limit)
    }

    public func counts(appID: Int64) throws -> InstallationCounts {
        try pool.read { db in
            var counts = InstallationCounts()
            if let row = try Row.fetchOne(
                db, sql: """
                    SELECT COUNT(*) AS installations, COALESCE(SUM(notifications_allowed), 0) AS allowed,
                        COALESCE(SUM(push_token IS NULL AND token_removed_at IS NOT NULL), 0) AS removed
                    FROM installations WHERE app_id = ?
                    """, arguments: [appID]) {
                counts.installations = row["installations"]
                counts.notificationsAllowed = row["allowed"]
                counts.tokensRemoved = row["removed"]
            }
            for provider in PushProvider.allCases {
                counts.withToken[provider] = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM installations WHERE app_id = ? AND push_provider = ? AND push_token IS NOT NULL",
                    arguments: [appID, provider.rawValue]) ?? 0
            }
            return counts
        }
    }

    public func profiles(appID: Int64, limit: Int) throws -> InstallationProfiles {
        try pool.read { db in
            // The counts the triggers of migration 0025 keep: a row per group, not per installation.
            let groups = try Row.fetchAll(
                db, sql: """
                    SELECT platform, app_version, language, country, installations, with_token FROM installation_profiles
                    WHERE app_id = ? ORDER BY installations DESC, platform, app_version, language, country LIMIT ?
                    """, arguments: [appID, max(limit, 0)]
            ).compactMap { row in
                InstallationProfiles.group(platform: row[0], appVersion: row[1], language: row[2], country: row[3], installations: row[4], withToken: row[5])
            }
            let totals = try Row.fetchOne(
                db, sql: "SELECT COALESCE(SUM(installations), 0), COALESCE(SUM(with_token), 0) FROM installation_profiles WHERE app_id = ?",
                arguments: [appID])
            return InstallationProfiles(groups: groups, installations: totals?[0] ?? 0, withToken: totals?[1] ?? 0)
        }
    }

    /// Migration 0025's triggers keep the counts in place.
    public func foldProfileChanges() throws {}

    public func deleteUnregistered(since cutoff: Date, limit: Int) throws -> Int {
        try pool.write { db in
            try db.execute(
                sql: """
                    DELETE FROM installations WHERE id IN (
                        SELECT id FROM installations WHERE registered_at < ? ORDER BY registered_at LIMIT ?)
                    """,
                arguments: [cutoff, max(limit, 0)])
            return db.changesCount
        }
    }

    /// Deletes the app's installation `installationID` inside the caller's transaction (an erasure);
    /// returns whether there was one.
    static func delete(appID: Int64, installationID: String, in db: Database) throws -> Bool {
        try db.execute(sql: "DELETE FROM installations WHERE app_id = ? AND installation_id = ?", arguments: [appID, installationID])
        return db.changesCount > 0
    }
}

extension Installation: FetchableRecord {
    public init(row: Row) throws {
        try self.init(
            rowID: row["id"], appID: row["app_id"], installationID: row["installation_id"], platform: row["platform"] as String,
            pushProvider: row["push_provider"] as String?, pushToken: row["push_token"], appVersion: row["app_version"], language: row["language"],
            country: row["country"], timeZone: row["time_zone"], notificationsAllowed: row["notifications_allowed"],
            tokenRemovedAt: row["token_removed_at"], tokenRemovedReason: row["token_removed_reason"], createdAt: row["created_at"],
            updatedAt: row["updated_at"], registeredAt: row["registered_at"])
    }
}
