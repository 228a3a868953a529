import Foundation
import GRDB

/// The database: owns the connection pool and the migrator; features ask it for stores.
public final class AppDatabase: Sendable {
    public let pool: DatabasePool
    private let migrator: DatabaseMigrator

    /// Opens (creating if needed) the database at `path`, in WAL mode with foreign keys on.
    /// `migrations` is the folder of numbered `.sql` files.
    public init(path: String, migrations: URL) throws {
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.label = "herald"
        pool = try DatabasePool(path: path, configuration: configuration)
        migrator = try Self.migrator(loadingFrom: migrations)
    }

    /// Applies every migration not yet applied, each in its own transaction.
    /// Refuses a database that has migrations this binary does not know.
    public func migrate() throws {
        let superseded = try pool.read { try migrator.hasBeenSuperseded($0) }
        if superseded {
            let applied = try pool.read { try migrator.appliedIdentifiers($0) }
            let unknown = applied.subtracting(migrator.migrations).sorted()
            throw StorageError.databaseIsNewer(unknownMigrations: unknown)
        }
        try migrator.migrate(pool)
    }

    /// The migrations applied to this database, in order.
    public func appliedMigrations() throws -> [String] {
        try pool.read { try migrator.completedMigrations($0) }
    }

    /// The migrations this binary knows, in order.
    public var knownMigrations: [String] { migrator.migrations }

    /// Whether the database answers a query (for `/readyz`).
    public func isReachable() -> Bool {
        (try? pool.read { try Int.fetchOne($0, sql: "SELECT 1") }) == 1
    }

    /// Copies the database to `path` with SQLite's online backup, safe while others write.
    public func backup(to path: String) throws {
        let destination = try DatabaseQueue(path: path)
        try pool.backup(to: destination)
        try destination.close()
    }

    public func close() throws {
        try pool.close()
    }

    public var users: UserStore { UserStore(pool: pool) }
    public var sessions: SessionStore { SessionStore(pool: pool) }
    public var loginFailures: LoginFailureStore { LoginFailureStore(pool: pool) }
    public var apps: AppStore { AppStore(pool: pool) }
    public var apiKeys: APIKeyStore { APIKeyStore(pool: pool) }
    public var auditLog: AuditLogStore { AuditLogStore(pool: pool) }
    public var campaigns: CampaignStore { CampaignStore(pool: pool) }

    private static func migrator(loadingFrom folder: URL) throws -> DatabaseMigrator {
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        guard !files.isEmpty else { throw StorageError.noMigrations(folder: folder.path) }
        var migrator = DatabaseMigrator()
        for file in files {
            let sql = try String(contentsOf: file, encoding: .utf8)
            migrator.registerMigration(file.deletingPathExtension().lastPathComponent) { db in
                try db.execute(sql: sql)
            }
        }
        return migrator
    }
}

/// Errors from the storage layer, worded for the operator who reads them.
public enum StorageError: Error, CustomStringConvertible, Equatable {
    case databaseIsNewer(unknownMigrations: [String])
    case noMigrations(folder: String)

    public var description: String {
        switch self {
        case .databaseIsNewer(let unknown):
            "store: this database was migrated by a newer Herald (unknown migrations: \(unknown.joined(separator: ", "))). "
                + "Run the newer herald binary, or restore a backup made with this version."
        case .noMigrations(let folder):
            "store: no migrations found in \(folder); point --resources at the folder that holds migrations/"
        }
    }
}
