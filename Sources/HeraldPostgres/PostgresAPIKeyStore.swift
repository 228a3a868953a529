import Foundation
import HeraldDomain
import HeraldStorage
import NIOFoundationCompat
import PostgresNIO

/// API keys on PostgreSQL.
struct PostgresAPIKeyStore: APIKeyStore {
    let database: PostgresAppDatabase

    private static let columns = "id, app_id, name, prefix, scopes, created_at, last_used_at, revoked_at"

    private static func key(_ row: PostgresRow) throws -> APIKey {
        let (id, appID, name, prefix, scopes, createdAt, lastUsedAt, revokedAt) = try row.decode(
            (Int64, Int64, String, String, String, Date, Date?, Date?).self)
        return APIKey(
            id: id, appID: appID, name: name, prefix: prefix, scopes: scopes.split(separator: " ").compactMap { APIScope(rawValue: String($0)) },
            createdAt: createdAt, lastUsedAt: lastUsedAt, revokedAt: revokedAt)
    }

    func create(appID: Int64, name: String, scopes: [APIScope], actor: AuditActor, now: Date) throws -> (key: APIKey, secret: String) {
        let (secret, prefix) = APIKey.newSecret()
        let scopeList = scopes.map(\.rawValue).joined(separator: " ")
        let key = try database.write { db in
            guard let row = try db.rows(
                """
                INSERT INTO api_keys (app_id, name, prefix, secret_hash, scopes, created_at)
                VALUES (\(appID), \(name), \(prefix), \(Secret.sha256(secret)), \(scopeList), \(now.storedPrecision))
                RETURNING \(unescaped: Self.columns)
                """
            ).first else { throw UnreadableStoredValue(column: "api_keys.id", value: prefix) }
            try PostgresAuditLogStore.record(actor, .keyCreated(prefix: prefix, appID: appID, scopes: scopes), at: now, in: db)
            return try Self.key(row)
        }
        return (key, secret)
    }

    func all(appID: Int64) throws -> [APIKey] {
        try database.read {
            try $0.rows("SELECT \(unescaped: Self.columns) FROM api_keys WHERE app_id = \(appID) ORDER BY created_at DESC, id DESC").map(Self.key)
        }
    }

    func find(id: Int64) throws -> APIKey? {
        try database.read { try $0.rows("SELECT \(unescaped: Self.columns) FROM api_keys WHERE id = \(id)").first.map(Self.key) }
    }

    func authenticate(secret: String) throws -> APIKey? {
        try database.read {
            try $0.rows(
                "SELECT \(unescaped: Self.columns) FROM api_keys WHERE secret_hash = \(Secret.sha256(secret)) AND revoked_at IS NULL"
            ).first.map(Self.key)
        }
    }

    func markUsed(_ key: APIKey, now: Date) throws {
        guard APIKey.shouldRecordUse(lastUsedAt: key.lastUsedAt, now: now) else { return }
        do {
            try database.read { try $0.execute("UPDATE api_keys SET last_used_at = \(now.storedPrecision) WHERE id = \(key.id)") }
        } catch where StorageUnavailable(error) != nil {
            return
        }
    }

    func revoke(_ key: APIKey, actor: AuditActor, now: Date) throws -> Bool {
        try database.write { db in
            let changed = try db.changes("UPDATE api_keys SET revoked_at = \(now.storedPrecision) WHERE id = \(key.id) AND revoked_at IS NULL")
            guard changed > 0 else { return false }
            try PostgresAuditLogStore.record(actor, .keyRevoked(prefix: key.prefix, appID: key.appID), at: now, in: db)
            return true
        }
    }
}
