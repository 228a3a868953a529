import Metrics
import Foundation
import HeraldStorage
import GRDB
import GRDBSQLite
import Synchronization

/// The database: owns the connection pool and the migrator; features ask it for stores.
public final class SQLiteAppDatabase: HeraldDatabase, Sendable {
    package let pool: DatabasePool
    private let migrator: DatabaseMigrator
    /// Counts committed transactions that touched what feeds, API keys and allowed web origins are built from, so
    /// in-memory copies know when to rebuild without asking the database.
    public let changes = ChangeCounter()
    /// Requests the database could not take lately (disk full, read-only, …), for `/readyz`.
    public let unavailability = UnavailabilityLog()
    private let observation = Mutex<AnyDatabaseCancellable?>(nil)
    /// Event batches that arrive together are written in one transaction.
    private let eventBatches = GroupCommit<EventIngestBatch, BatchIngestCounts>()
    /// Installation registrations that arrive together are written in one transaction.
    private let installationRegistrations = InstallationGroupCommit()
    /// SQLite found the file unwritable when it opened it (permissions, a read-only volume): reads work,
    /// every change fails until Herald is restarted on a writable file.
    public let openedReadOnly: Bool

    /// The database file's path.
    public let path: String
    /// The write-ahead log's checkpoints off the commit path, once `startBackgroundCheckpoints` is called.
    private let checkpoints: BackgroundCheckpoints

    /// Opens (creating if needed) the database at `path`, in WAL mode with foreign keys on.
    /// `migrations` is the folder of numbered `.sql` files.
    public init(path: String, migrations: URL) throws {
        self.path = path
        checkpoints = BackgroundCheckpoints(path: path)
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
            // Every statement of every connection passes here: the one place to time database work
            // without a timer at each of the stores' calls.
            let statementTime = Timer(label: "herald_database_statement_duration_seconds")
            db.trace(options: .profile) { event in
                if case .profile(_, let duration) = event { statementTime.recordSeconds(duration) }
            }
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
        try enableIncrementalVacuum()
        // Made here, with the schema, so that a database migrated (`herald migrate`) and then made
        // read-only still has the key every server on it signs with.
        _ = try serverSecrets.signingKey(now: Date())
        observeChanges()
    }

    /// Makes freed pages returnable to the file system (`reclaimFreePages`). SQLite changes an existing
    /// database's auto-vacuum mode only by rewriting it: a database made before migration 0012 pays one
    /// VACUUM at the first start of this version, which takes time and free disk space about the size of
    /// the file. A new database is empty then, so it costs nothing. A read-only database is left as it is.
    private func enableIncrementalVacuum() throws {
        guard !openedReadOnly else { return }
        try pool.writeWithoutTransaction { db in
            let incremental = 2
            guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != incremental else { return }
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "VACUUM")
        }
    }

    /// Gives back to the file system at most `pages` of the pages deletions freed, in one short write.
    public func reclaimFreePages(atMost pages: Int) throws {
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA incremental_vacuum(\(max(1, pages)))") }
    }

    /// The number triggers move with every change to what a feed is built from, by any process
    /// (migration 0014): one row read, so a server can check often for another process's changes.
    public func feedGeneration() throws -> Int64 {
        try pool.read { try Int64.fetchOne($0, sql: "SELECT generation FROM feed_generation WHERE id = 1") ?? 0 }
    }

    /// The database file's pages, and how many of them are free (for the file-size bound and the System page).
    public func pageCounts() throws -> (pages: Int, free: Int) {
        try pool.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0, try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0)
        }
    }

    private func observeChanges() {
        let changes = changes
        // Keys' last-use times change all the time and matter to no copy: only revocation is tracked there.
        let region = DatabaseRegionObservation(
            tracking: Table("campaigns"), Table("apps"), Table("test_devices"), Table("test_sends"), Table("app_origins"),
            Table("api_keys").select(Column("revoked_at")))
        let cancellable = region.start(in: pool, onError: { _ in changes.bump() }, onChange: { _ in changes.bump() })
        observation.withLock { $0 = cancellable }
    }

    /// The migrations applied to this database, in order.
    public func appliedMigrations() throws -> [String] {
        try pool.read { try migrator.completedMigrations($0) }
    }

    /// Whether the database answers a query (for `/readyz`).
    public func isReachable() -> Bool {
        (try? pool.read { try Int.fetchOne($0, sql: "SELECT 1") }) == 1
    }

    /// Copies the database to `path` with SQLite's online backup, safe while others write.
    /// Copies the database to `path`, and records the backup in the audit log (`database.backup`), which
    /// the System page reads for when the last one was made.
    public func backup(to path: String, actor: AuditActor = .commandLine, now: Date = Date()) throws {
        let destination = try DatabaseQueue(path: path)
        try pool.backup(to: destination)
        try destination.close()
        try auditLog.record(actor, action: "database.backup", subject: path, at: now)
    }

    /// The bytes of the database file and of its write-ahead log (0 when there is none).
    public func fileSizes() -> (database: Int64, writeAheadLog: Int64) {
        func size(_ file: String) -> Int64 {
            ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return (size(path), size(path + "-wal"))
    }

    public func storageSize() -> (database: Int64, log: Int64?) {
        let sizes = fileSizes()
        return (sizes.database, sizes.writeAheadLog)
    }

    public var location: String { path }

    public func startBackgroundWork() throws {
        try startBackgroundCheckpoints()
    }

    /// Moves the write-ahead log's checkpoints from the commit that crosses SQLite's threshold to a thread
    /// of their own (`BackgroundCheckpoints`), for a server whose commits answer requests. Nothing on a
    /// database opened read-only.
    public func startBackgroundCheckpoints(every interval: Duration = .milliseconds(100), truncateAbove: Int32 = 65_536) throws {
        guard !openedReadOnly else { return }
        try checkpoints.start(pool: pool, interval: interval, truncateAbove: truncateAbove)
    }

    public func close() throws {
        checkpoints.stop()
        observation.withLock { $0 = nil }
        try pool.close()
    }

    public var users: any UserStore { SQLiteUserStore(pool: pool) }
    public var sessions: any SessionStore { SQLiteSessionStore(pool: pool) }
    public var loginThrottles: any LoginThrottleStore { SQLiteLoginThrottleStore(pool: pool) }
    public var serverSecrets: any ServerSecretStore { SQLiteServerSecretStore(pool: pool) }
    public var apps: any AppStore { SQLiteAppStore(pool: pool) }
    public var apiKeys: any APIKeyStore { SQLiteAPIKeyStore(pool: pool) }
    public var auditLog: any AuditLogStore { SQLiteAuditLogStore(pool: pool) }
    public var campaigns: any CampaignStore { SQLiteCampaignStore(pool: pool) }
    public var testSends: any TestSendStore { SQLiteTestSendStore(pool: pool) }
    public var events: any EventStore { SQLiteEventStore(pool: pool, batches: eventBatches) }
    public var pushOutbox: any PushOutboxStore { SQLitePushOutboxStore(pool: pool) }
    public func pushCredentials(box: SecretBox) -> any PushCredentialStore { SQLitePushCredentialStore(pool: pool, box: box) }
    public var installations: any InstallationStore { SQLiteInstallationStore(pool: pool, registrations: installationRegistrations) }

    /// Checks that the file at `path` is a whole Herald database this binary can run: SQLite's
    /// `integrity_check` passes, it has Herald's migrations, and none this binary does not know. Opens it
    /// read-only and changes nothing. Answers how many migrations it has.
    public static func checkBackup(path: String, migrations: URL) throws -> Int {
        let known = try migrator(loadingFrom: migrations).migrations
        var configuration = Configuration()
        configuration.readonly = true
        let applied: [String]
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            applied = try queue.read { db -> [String] in
                let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard integrity == ["ok"] else { throw StorageError.notABackup(path: path, reason: "SQLite finds it damaged: \(integrity.prefix(3).joined(separator: "; "))") }
                guard try db.tableExists("grdb_migrations"), try db.tableExists("apps") else {
                    throw StorageError.notABackup(path: path, reason: "it is an SQLite database, but not Herald's")
                }
                return try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError.notABackup(path: path, reason: "it does not open as an SQLite database (\(error))")
        }
        let unknown = applied.filter { !known.contains($0) }.sorted()
        guard unknown.isEmpty else { throw StorageError.databaseIsNewer(unknownMigrations: unknown) }
        return applied.count
    }

    private static func migrator(loadingFrom folder: URL) throws -> DatabaseMigrator {
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        guard !files.isEmpty else { throw StorageError.noMigrations(folder: folder.path) }
        var migrator = DatabaseMigrator()
        for file in files {
            let sql = try String(contentsOf: file, encoding: .utf8)
            let identifier = file.deletingPathExtension().lastPathComponent
            let dataStep = dataSteps[identifier]
            migrator.registerMigration(identifier) { db in
                try db.execute(sql: sql)
                try dataStep?(db)
            }
        }
        return migrator
    }

    /// What a migration's SQL cannot do itself, run after it in the same transaction.
    private static let dataSteps: [String: @Sendable (Database) throws -> Void] = [
        "0015_device_bitmaps": DeviceBitmaps.fillFromDeviceRows,
        "0017_device_sketches": DeviceSketches.fillFromBitmaps,
        "0018_device_week_sketches": DeviceSketches.fillWeeks,
    ]
}


extension DatabaseError: EngineFailure {
    /// SQLite's `FULL`, `READONLY`, `IOERR` (a write past a file-size limit or onto a file system remounted
    /// read-only fails as one), `CANTOPEN`, and `BUSY` after the busy timeout.
    package var unavailable: StorageUnavailable? {
        switch resultCode {
        case .SQLITE_FULL: .diskFull
        case .SQLITE_READONLY: .readOnly
        case .SQLITE_IOERR: .diskError
        case .SQLITE_CANTOPEN: .cannotOpen
        case .SQLITE_BUSY: .busy
        default: nil
        }
    }
}
