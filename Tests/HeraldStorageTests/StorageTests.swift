import Foundation
import GRDB
@testable import HeraldSQLite
import HeraldStorage
import TestSupport
import Testing

@Suite("Storage: migrations, pool settings, backup, password hashes")
struct StorageTests {
    private func openDatabase(in folder: TemporaryFolder) throws -> SQLiteAppDatabase {
        try SQLiteAppDatabase(path: folder.url.appendingPathComponent("db/herald.sqlite").path,
                        migrations: repositoryRoot.appendingPathComponent("migrations"))
    }

    @Test("A new database gets every migration, WAL mode with a sync at every commit, foreign keys and a busy timeout")
    func freshDatabase() async throws {
        // Given a path in a folder that does not exist yet
        let folder = try TemporaryFolder()
        // When the database is opened and migrated
        let database = try openDatabase(in: folder)
        try database.migrate()
        // Then every migration file is applied, in order
        let files = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("migrations").path)
            .filter { $0.hasSuffix(".sql") }.sorted().map { String($0.dropLast(4)) }
        #expect(try database.appliedMigrations() == files)
        let settings = try await database.pool.write { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA foreign_keys"),
             try Int.fetchOne(db, sql: "PRAGMA busy_timeout"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(settings.0 == "wal")
        #expect(settings.1 == 1)
        #expect(settings.2 == 5000)
        #expect(settings.3 == 2, "FULL: a committed write survives a power cut, so an acknowledged event is durable")
        // And migrating again changes nothing
        try database.migrate()
        #expect(try database.appliedMigrations() == files)
        // And the signing key exists from migration on, so a database migrated and then made read-only can serve
        let keys = try await database.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM server_secrets WHERE name = 'signing_key'") }
        #expect(keys == 1)
    }

    @Test("A database migrated by a newer Herald is refused with a clear message")
    func newerDatabaseRefused() async throws {
        let folder = try TemporaryFolder()
        let database = try openDatabase(in: folder)
        try database.migrate()
        try await database.pool.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_from_the_future')")
        }
        let error = #expect(throws: StorageError.self) { try database.migrate() }
        #expect(error == .databaseIsNewer(unknownMigrations: ["9999_from_the_future"]))
        #expect(error?.description.contains("migrated by a newer Herald") == true)
    }

    @Test("Foreign keys are enforced")
    func foreignKeys() async throws {
        let folder = try TemporaryFolder()
        let database = try openDatabase(in: folder)
        try database.migrate()
        #expect(throws: DatabaseError.self) {
            _ = try database.apiKeys.create(appID: 42, name: "orphan", scopes: [.feedRead], actor: .commandLine, now: Date())
        }
    }

    @Test("A backup is a complete, valid SQLite database")
    func backup() async throws {
        let folder = try TemporaryFolder()
        let database = try openDatabase(in: folder)
        try database.migrate()
        let shop = try database.apps.create(name: "Shop", platforms: [.web], actor: .commandLine, now: Date())
        let target = folder.url.appendingPathComponent("backup.sqlite").path
        try database.backup(to: target)
        let copy = try DatabaseQueue(path: target)
        let (integrity, name) = try await copy.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check"),
             try String.fetchOne(db, sql: "SELECT name FROM apps WHERE id = ?", arguments: [shop.id]))
        }
        #expect(integrity == "ok")
        #expect(name == "Shop")
    }

    @Test("Password hashes are self-describing scrypt strings with a random salt")
    func passwordHashes() throws {
        let hasher = PasswordHasher(logRounds: 8)
        let first = try hasher.hash("correct horse battery")
        let second = try hasher.hash("correct horse battery")
        #expect(first.hasPrefix("$scrypt$ln=8,r=8,p=1$"))
        #expect(first != second)
        #expect(hasher.verify("correct horse battery", against: first))
        #expect(!hasher.verify("correct horse batterY", against: first))
        // The parameters come from the stored string, so raising the cost keeps old hashes valid.
        #expect(PasswordHasher(logRounds: 12).verify("correct horse battery", against: first))
        #expect(!hasher.verify("x", against: "$scrypt$ln=99,r=8,p=1$AAAA$AAAA"))
        #expect(!hasher.verify("x", against: "plain"))
    }
}
