import Foundation
import HeraldDomain
import HeraldStorage
import PostgresNIO

/// The `server_secrets` table on PostgreSQL.
struct PostgresServerSecretStore: ServerSecretStore {
    let database: PostgresAppDatabase

    func signingKey(now: Date) throws -> [UInt8] {
        let name = "signing_key"
        let made = Secret.randomBytes(32)
        return try database.read { db in
            // The first instance's key wins; every other one reads it.
            try db.execute(
                """
                INSERT INTO server_secrets (name, value, created_at) VALUES (\(name), \(ByteBuffer(bytes: made)), \(now.storedPrecision))
                ON CONFLICT (name) DO NOTHING
                """)
            guard let stored = try db.one("SELECT value FROM server_secrets WHERE name = \(name)", as: ByteBuffer.self) else {
                throw UnreadableStoredValue(column: "server_secrets.value", value: name)
            }
            return Array(buffer: stored)
        }
    }
}
