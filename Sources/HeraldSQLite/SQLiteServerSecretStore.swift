import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `server_secrets` table: keys made once per database and shared by every process that opens it.
struct SQLiteServerSecretStore: ServerSecretStore {
    let pool: DatabasePool

    /// The 32-byte key that signs what the server hands browsers to bring back (visitors' form tokens,
    /// trusted-browser cookies), made the first time it is asked for. Read before any write, so a
    /// read-only database that already has it still serves.
    public func signingKey(now: Date) throws -> [UInt8] {
        let name = "signing_key"
        if let key = try pool.read({ try Self.value(named: name, in: $0) }) { return key }
        return try pool.write { db in
            // Write transactions are IMMEDIATE: another process that made it since the read is seen here.
            if let key = try Self.value(named: name, in: db) { return key }
            let key = Secret.randomBytes(32)
            try db.execute(
                sql: "INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?)",
                arguments: [name, Data(key), now])
            return key
        }
    }

    private static func value(named name: String, in db: Database) throws -> [UInt8]? {
        try Data.fetchOne(db, sql: "SELECT value FROM server_secrets WHERE name = ?", arguments: [name]).map(Array.init)
    }
}
