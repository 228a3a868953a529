import Foundation
import HeraldStorage
import Logging
import NIOCore
import PostgresNIO

/// Herald's database on PostgreSQL: the pool, the migrations in `migrations/postgres/`, and the stores.
/// Several Herald processes may share one: whatever must be atomic across them is a transaction or a lock
/// in PostgreSQL, never a lock in one process.
public final class PostgresAppDatabase: HeraldDatabase, Sendable {
    public let server: PostgresLocation
    let connections: PostgresConnections
    private let migrations: [Migration]
    public let changes = ChangeCounter()
    public let unavailability = UnavailabilityLog()
    /// A server that refuses writes answers each with an error; there is no read-only opening to report.
    public let openedReadOnly = false
    private let listener: PostgresChangeListener
    /// Event batches that arrive together at this instance are written in one transaction.
    private let eventIngestion = PostgresEventIngestion()
    /// Installation registrations that arrive together at this instance are written in one transaction.
    let installationRegistrations = InstallationGroupCommit()

    struct Migration: Sendable {
        let identifier: String
        let sql: String
    }

    /// Connects lazily: nothing is opened until the first query. `migrations` is the folder of numbered
    /// `.sql` files written for PostgreSQL (`migrations/postgres`).
    public init(location: PostgresLocation, migrations folder: URL, connections capacity: Int = 16, logger: Logger? = nil) throws {
        server = location
        let logger = logger ?? Logger(label: "herald.postgres")
        connections = try PostgresConnections(location: location, capacity: capacity, logger: logger)
        listener = PostgresChangeListener(connections: connections, changes: changes, logger: logger)
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        guard !files.isEmpty else { throw StorageError.noMigrations(folder: folder.path) }
        migrations = try files.map {
            Migration(identifier: $0.deletingPathExtension().lastPathComponent, sql: try String(contentsOf: $0, encoding: .utf8))
        }
    }

    /// Runs `body` with a connection and no transaction around it: each statement commits on its own.
    @discardableResult
    package func read<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try connections.withConnection { try body(PostgresSession(connection: $0, logger: connections.logger, prepared: connections.prepared)) }
    }

    /// Runs `body` in one transaction, committed when it returns and rolled back when it throws.
    @discardableResult
    func write<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try connections.withConnection { connection in
            let session = PostgresSession(connection: connection, logger: connections.logger, prepared: connections.prepared)
            try session.execute("BEGIN")
            do {
                let result = try body(session)
                try session.execute("COMMIT")
                return result
            } catch {
                try session.rollBack(after: error)
            }
        }
    }

    /// Applies every migration not yet applied, each in its own transaction, under a lock that makes
    /// instances starting together wait for the first one. Refuses a database with migrations this binary
    /// does not know.
    public func migrate() throws {
        do {
            try applyMigrations()
        } catch let error as PSQLError {
            // Connection failures, a refused login or a missing database (SQLSTATE classes 08 and 28, 3D000,
            // 53300, 57P03) are the URL's or the server's; anything else failed inside a migration.
            let state = sqlState(of: error) ?? ""
            let opening = PostgresConnections.isConnectionFailure(error) || state.hasPrefix("08") || state.hasPrefix("28")
                || ["3D000", "53300", "57P03"].contains(state)
            let reason = Self.reason(error)
            throw opening ? StorageError.cannotReach(location: server.description, reason: reason)
                : StorageError.migrationFailed(location: server.description, reason: reason)
        } catch where PostgresConnections.isConnectionFailure(error) {
            throw StorageError.cannotReach(location: server.description, reason: "\(error)")
        }
        _ = try serverSecrets.signingKey(now: Date())
    }

    /// What went wrong, as the server said it (a missing database, a refused password) or the connection
    /// failed (refused, timed out), for an operator.
    static func reason(_ error: PSQLError) -> String {
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return "\(underlying)" }
        return "\(error.code)"
    }

    private func applyMigrations() throws {
        try connections.withConnection { connection in
            let session = PostgresSession(connection: connection, logger: connections.logger, prepared: connections.prepared)
            try session.execute("SELECT pg_advisory_lock(\(Self.migrationLock))")
            defer { _ = try? session.execute("SELECT pg_advisory_unlock(\(Self.migrationLock))") }
            try session.execute(
                "CREATE TABLE IF NOT EXISTS herald_migrations (identifier text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            let applied = Set(try session.all("SELECT identifier FROM herald_migrations", as: String.self))
            let unknown = applied.subtracting(migrations.map(\.identifier)).sorted()
            guard unknown.isEmpty else { throw StorageError.databaseIsNewer(unknownMigrations: unknown) }
            for migration in migrations where !applied.contains(migration.identifier) {
                // The file and its record commit together, or not at all.
                try session.execute("BEGIN")
                do {
                    for statement in SQLScript.statements(migration.sql) {
                        try session.execute(PostgresQuery(unsafeSQL: statement))
                    }
                    try Self.dataSteps[migration.identifier]?(session)
                    try session.execute("INSERT INTO herald_migrations (identifier) VALUES (\(migration.identifier))")
                    try session.execute("COMMIT")
                } catch {
                    try session.rollBack(after: error)
                }
            }
        }
    }

    /// What a migration's SQL cannot do itself, run after it in the same transaction.
    private static let dataSteps: [String: @Sendable (PostgresSession) throws -> Void] = [
        "0007_week_sketches": PostgresDeviceRows.fillWeeks
    ]

    /// The advisory lock migrations run under (any number that no other lock in the database uses).
    private static let migrationLock: Int64 = 0x4845_5241_4C44  // "HERALD"

    /// The migrations applied to this database, in order.
    public func appliedMigrations() throws -> [String] {
        try read { try $0.all("SELECT identifier FROM herald_migrations ORDER BY identifier", as: String.self) }
    }

    /// Whether the server answers a query (for `/readyz`).
    public func isReachable() -> Bool {
        (try? read { try $0.one("SELECT 1::int8", as: Int64.self) }) == 1
    }

    public var location: String { server.description }

    public func feedGeneration() throws -> Int64 {
        try read { try $0.one("SELECT generation FROM feed_generation WHERE id = 1", as: Int64.self) } ?? 0
    }

    /// Listens for every instance's changes (`herald_changes`), so this one's copies rebuild at once.
    public func startBackgroundWork() throws {
        try listener.start()
    }

    public func storageSize() throws -> (database: Int64, log: Int64?) {
        (try read { try $0.one("SELECT pg_database_size(current_database())", as: Int64.self) } ?? 0, nil)
    }

    public func close() {
        listener.stop()
        connections.close()
    }

    public var users: any UserStore { PostgresUserStore(database: self) }
    public var sessions: any SessionStore { PostgresSessionStore(database: self) }
    public var loginThrottles: any LoginThrottleStore { PostgresLoginThrottleStore(database: self) }
    public var serverSecrets: any ServerSecretStore { PostgresServerSecretStore(database: self) }
    public var auditLog: any AuditLogStore { PostgresAuditLogStore(database: self) }
    public var apps: any AppStore { PostgresAppStore(database: self) }
    public var apiKeys: any APIKeyStore { PostgresAPIKeyStore(database: self) }
    public func pushCredentials(box: SecretBox) -> any PushCredentialStore { PostgresPushCredentialStore(database: self, box: box) }
    public var campaigns: any CampaignStore { PostgresCampaignStore(database: self) }
    public var testSends: any TestSendStore { PostgresTestSendStore(database: self) }
    public var installations: any InstallationStore { PostgresInstallationStore(database: self) }
    public var pushOutbox: any PushOutboxStore { PostgresPushOutboxStore(database: self) }
    public var events: any EventStore { PostgresEventStore(database: self, ingestion: eventIngestion) }

    /// Nothing to do: a dropped month partition gives its space back at once, and autovacuum reuses what
    /// deleted rows leave.
    public func reclaimFreePages(atMost pages: Int) throws {}
}

/// One lent connection: runs queries and waits for their answers.
package struct PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    let prepared: PreparedStatements

    @discardableResult
    package func execute(_ query: PostgresQuery) throws -> PostgresQueryResult {
        try connection.answer(query, logger: logger)
    }

    /// The rows of `sql` with `binds`, as a statement this connection prepared (`PreparedStatements`).
    func preparedRows(_ sql: String, _ binds: [PostgresData]) throws -> [PostgresRow] {
        try prepared.rows(sql, binds, on: connection)
    }

    func rows(_ query: PostgresQuery) throws -> [PostgresRow] {
        Array(try execute(query).rows)
    }

    func all<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type) throws -> [T] {
        try rows(query).map { try $0.decode(T.self) }
    }

    func one<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type) throws -> T? {
        try rows(query).first.map { try $0.decode(T.self) }
    }

    /// Rolls the open transaction back and throws `error`, what made it fail. When the rollback fails too,
    /// the transaction may still be open on this connection, so the pool closes it instead of lending it
    /// again (the next caller would run inside an aborted transaction).
    func rollBack(after failure: any Error) throws -> Never {
        // A connection already found unusable (an answer that never came) is not asked again.
        if failure is PostgresConnections.Unusable { throw failure }
        do {
            try execute("ROLLBACK")
        } catch {
            throw PostgresConnections.Unusable(error: failure)
        }
        throw failure
    }

    /// How many rows the statement inserted, updated or deleted.
    func changes(_ query: PostgresQuery) throws -> Int {
        try execute(query).metadata.rows ?? 0
    }

    /// Waits for the transaction lock named by `key`, held until commit or rollback: what SQLite's single
    /// writer gives for free, given to a read-modify-write that several processes may race on. A shared
    /// lock is held by any number of transactions at once and keeps out only the exclusive one.
    func lock(_ key: String, shared: Bool = false) throws {
        if shared {
            try execute("SELECT pg_advisory_xact_lock_shared(hashtextextended(\(key), 0))")
        } else {
            try execute("SELECT pg_advisory_xact_lock(hashtextextended(\(key), 0))")
        }
    }
}
