import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `api_keys` table.
struct SQLiteAPIKeyStore: APIKeyStore {
    let pool: DatabasePool

    /// Creates a key (and its audit line, in one transaction) and returns it with its secret, which is
    /// not stored and cannot be shown again.
    public func create(appID: Int64, name: String, scopes: [APIScope], actor: AuditActor, now: Date) throws -> (key: APIKey, secret: String) {
        let (secret, prefix) = APIKey.newSecret()
        let scopeList = scopes.map(\.rawValue).joined(separator: " ")
        let id = try pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO api_keys (app_id, name, prefix, secret_hash, scopes, created_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [appID, name, prefix, Secret.sha256(secret), scopeList, now])
            let id = db.lastInsertedRowID
            try SQLiteAuditLogStore.record(actor, .keyCreated(prefix: prefix, appID: appID, scopes: scopes), at: now, in: db)
            return id
        }
        let key = APIKey(id: id, appID: appID, name: name, prefix: prefix, scopes: scopes, createdAt: now)
        return (key, secret)
    }

    public func all(appID: Int64) throws -> [APIKey] {
        try pool.read {
            try APIKey.fetchAll($0, sql: "SELECT * FROM api_keys WHERE app_id = ? ORDER BY created_at DESC, id DESC", arguments: [appID])
        }
    }

    public func find(id: Int64) throws -> APIKey? {
        try pool.read { try APIKey.fetchOne($0, sql: "SELECT * FROM api_keys WHERE id = ?", arguments: [id]) }
    }

    /// The live (not revoked) key whose secret is `secret`.
    public func authenticate(secret: String) throws -> APIKey? {
        try pool.read {
            try APIKey.fetchOne(
                $0, sql: "SELECT * FROM api_keys WHERE secret_hash = ? AND revoked_at IS NULL",
                arguments: [Secret.sha256(secret)])
        }
    }

    /// Records that the key was used, at most once a minute so busy keys do not write on every request.
    /// Only bookkeeping: when the database cannot be written (disk full, read-only) the request goes on without it.
    public func markUsed(_ key: APIKey, now: Date) throws {
        guard APIKey.shouldRecordUse(lastUsedAt: key.lastUsedAt, now: now) else { return }
        do {
            try pool.write { db in
                try db.execute(sql: "UPDATE api_keys SET last_used_at = ? WHERE id = ?", arguments: [now, key.id])
            }
        } catch where StorageUnavailable(error) != nil {
            return
        }
    }

    /// Revokes the key (with its audit line, in one transaction); returns false when it was already
    /// revoked or does not exist.
    public func revoke(_ key: APIKey, actor: AuditActor, now: Date) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [now, key.id])
            guard db.changesCount > 0 else { return false }
            try SQLiteAuditLogStore.record(actor, .keyRevoked(prefix: key.prefix, appID: key.appID), at: now, in: db)
            return true
        }
    }
}

extension APIKey: FetchableRecord {
    public init(row: Row) throws {
        let stored: String = row["scopes"]
        self.init(
            id: row["id"], appID: row["app_id"], name: row["name"], prefix: row["prefix"],
            scopes: stored.split(separator: " ").compactMap { APIScope(rawValue: String($0)) }, createdAt: row["created_at"],
            lastUsedAt: row["last_used_at"], revokedAt: row["revoked_at"])
    }
}
