import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The database: owns the connection pool and the migrator; features ask it for stores.
public final class AppDatabase: Sendable {
    public let pool: DatabasePool
    private let migrator: DatabaseMigrator
    /// Counts committed transactions that touched what feeds, API keys and allowed web origins are built from, so
    /// in-memory copies know when to rebuild without asking the database.
    public let changes = ChangeCounter()
    /// Requests the database could not take lately (disk full, read-only, …), for `/readyz`.
    public let unavailability = UnavailabilityLog()
    private let observation = Mutex<AnyDatabaseCancellable?>(nil)
    /// Event batches that arrive together are written in one transaction.
    private let eventBatches = GroupCommit<EventStore.IngestBatch, EventStore.IngestCounts>()
    /// SQLite found the file unwritable when it opened it (permissions, a read-only volume): reads work,
    /// every change fails until Herald is restarted on a writable file.
    public let openedReadOnly: Bool

    /// Opens (creating if needed) the database at `path`, in WAL mode with foreign keys on.
    /// `migrations` is the folder of numbered `.sql` files.
    public init(path: String, migrations: URL) throws {
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.label = "herald"
        configuration.prepareDatabase { db in
            // SQLite's default 2 MB page cache makes every event insert re-read B-tree pages through
            // syscalls; 32 MB keeps the hot pages at hand. No memory-mapped I/O: mapped database pages
            // count in the process's resident memory (300 MB at 3 M events) and reads were no faster.
            try db.execute(sql: "PRAGMA cache_size = -32768")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            guard let cause = StorageUnavailable(error) else { throw error }
            throw StorageError.cannotOpen(path: path, cause: cause)
        }
        openedReadOnly = pool.writeWithoutTransaction { sqlite3_db_readonly($0.sqliteConnection, "main") == 1 }
        // GRDB sets WAL's usual NORMAL, which syncs only at checkpoints: a power cut could lose commits
        // already answered. FULL syncs the WAL at every commit, so an acknowledged write (an event
        // batch's 200) is durable; group commit shares that sync among concurrent batches.
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
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
        // Made here, with the schema, so that a database migrated (`herald migrate`) and then made
        // read-only still has the key every server on it signs with.
        _ = try serverSecrets.signingKey(now: Date())
        observeChanges()
    }

    private func observeChanges() {
        let changes = changes
        // Keys' last-use times change all the time and matter to no copy: only revocation is tracked there.
        let region = DatabaseRegionObservation(
            tracking: Table("campaigns"), Table("apps"), Table("test_devices"), Table("app_origins"),
            Table("api_keys").select(Column("revoked_at")))
        let cancellable = region.start(in: pool, onError: { _ in changes.bump() }, onChange: { _ in changes.bump() })
        observation.withLock { $0 = cancellable }
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
        observation.withLock { $0 = nil }
        try pool.close()
    }

    public var users: UserStore { UserStore(pool: pool) }
    public var sessions: SessionStore { SessionStore(pool: pool) }
    public var loginThrottles: LoginThrottleStore { LoginThrottleStore(pool: pool) }
    public var serverSecrets: ServerSecretStore { ServerSecretStore(pool: pool) }
    public var apps: AppStore { AppStore(pool: pool) }
    public var apiKeys: APIKeyStore { APIKeyStore(pool: pool) }
    public var auditLog: AuditLogStore { AuditLogStore(pool: pool) }
    public var campaigns: CampaignStore { CampaignStore(pool: pool) }
    public var events: EventStore { EventStore(pool: pool, batches: eventBatches) }
    public var pushOutbox: PushOutboxStore { PushOutboxStore(pool: pool) }
    public func pushCredentials(box: SecretBox) -> PushCredentialStore { PushCredentialStore(pool: pool, box: box) }
    public var installations: InstallationStore { InstallationStore(pool: pool) }

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
    case cannotOpen(path: String, cause: StorageUnavailable)

    public var description: String {
        switch self {
        case .databaseIsNewer(let unknown):
            "store: this database was migrated by a newer Herald (unknown migrations: \(unknown.joined(separator: ", "))). "
                + "Run the newer herald binary, or restore a backup made with this version."
        case .noMigrations(let folder):
            "store: no migrations found in \(folder); point --resources at the folder that holds migrations/"
        case .cannotOpen(let path, let cause):
            "store: cannot open \(path) for writing"
                + (cause == .readOnly ? ": the file or its folder is read-only" : " (\(cause.reason))")
                + ". Herald writes the database and the -wal and -shm files beside it: give it write permission on the file "
                + "and its folder (or a writable volume), then start again."
        }
    }
}

/// A number that goes up whenever something observed changes.
public final class ChangeCounter: Sendable {
    private let value = Atomic<Int>(0)

    public init() {}

    public var current: Int { value.load(ordering: .acquiring) }

    public func bump() {
        value.add(1, ordering: .releasing)
    }
}
