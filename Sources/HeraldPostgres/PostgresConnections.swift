import Foundation
import HeraldStorage
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// A bounded pool of PostgreSQL connections for code that runs on the HTTP server's worker threads.
///
/// The stores are synchronous, like GRDB's: a request's worker thread waits for its query, as it waits for
/// SQLite's disk. postgres-nio does the network work on its own event loops, and the worker blocks on the
/// answer's future (never on a Swift concurrency task, which the design forbids on those threads). A
/// connection is lent to one caller at a time; at most `capacity` exist, and a caller beyond them waits
/// for one to come back.
final class PostgresConnections: Sendable {
    private let configuration: PostgresConnection.Configuration
    private let eventLoops: MultiThreadedEventLoopGroup
    private let idle = Mutex<[PostgresConnection]>([])
    private let slots: DispatchSemaphore
    private let nextID = Atomic<Int>(0)
    let prepared = PreparedStatements()
    let logger: Logger

    init(location: PostgresLocation, capacity: Int, logger: Logger) throws {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: try Self.tls(location.tls))
        configuration.options.connectTimeout = .seconds(10)
        self.configuration = configuration
        eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        slots = DispatchSemaphore(value: max(1, capacity))
        self.logger = logger
    }

    private static func tls(_ mode: PostgresLocation.TLSMode) throws -> PostgresConnection.Configuration.TLS {
        var client = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable:
            return .disable
        case .prefer:
            client.certificateVerification = .none
            return .prefer(try NIOSSLContext(configuration: client))
        case .require:
            client.certificateVerification = .none
            return .require(try NIOSSLContext(configuration: client))
        case .verifyFull:
            return .require(try NIOSSLContext(configuration: client))
        }
    }

    /// Lends a connection to `body` and takes it back; a connection that failed below SQL (closed, reset) is
    /// dropped instead, and the next caller opens a new one.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        // Every connection lent for longer than this is a server in trouble: the caller gets a busy answer
        // instead of a worker waiting without end.
        guard slots.wait(timeout: .now() + Self.longestWaitForConnection) == .success else { throw StorageUnavailable.busy }
        defer { slots.signal() }
        var lent: PostgresConnection?
        if let reused = idle.withLock({ $0.popLast() }) {
            if reused.isClosed { drop(reused) } else { lent = reused }
        }
        let connection = try lent ?? open()
        do {
            let result = try body(connection)
            idle.withLock { $0.append(connection) }
            return result
        } catch let unusable as Unusable {
            drop(connection)
            throw unusable.error
        } catch {
            if Self.isConnectionFailure(error) || connection.isClosed {
                drop(connection)
            } else {
                idle.withLock { $0.append(connection) }
            }
            throw error
        }
    }

    /// Closes a connection that is not lent again, and forgets what it prepared.
    private func drop(_ connection: PostgresConnection) {
        _ = try? connection.close().wait()
        prepared.forget(connection)
    }

    /// The longest a worker waits for an answer: the server's statement timeout (30 s) and a margin. Past
    /// it the server is not answering as it should, and the connection is closed.
    static let longestAnswer: DispatchTimeInterval = .seconds(40)

    /// Thrown through `withConnection` when the connection must not be lent again (a transaction that
    /// could not be rolled back is still open on it); `error` is what the caller is told.
    struct Unusable: Error {
        let error: any Error
    }

    private func open(as applicationName: String = "herald") throws -> PostgresConnection {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        var configuration = configuration
        // No statement holds a connection (and the worker waiting on it) longer than 30 s; one that would is
        // cancelled and answered as busy. Operators tell Herald's connections apart in pg_stat_activity by name.
        configuration.options.additionalStartupParameters = [("statement_timeout", "30000"), ("application_name", applicationName)]
        return try PostgresConnection.connect(
            on: eventLoops.next(), configuration: configuration, id: id, logger: logger
        ).wait()
    }

    /// Opens a connection of its own, outside the pool, for a long-lived use (listening for notifications),
    /// named `applicationName` in pg_stat_activity.
    func openDedicated(as applicationName: String) throws -> PostgresConnection {
        try open(as: applicationName)
    }

    /// How long a caller waits for a connection when all are lent.
    static let longestWaitForConnection: DispatchTimeInterval = .seconds(10)

    /// Whether `error` means the connection itself is gone or could not be made, rather than that one statement failed.
    static func isConnectionFailure(_ error: any Error) -> Bool {
        if error is NIOConnectionError || error is IOError || error is ChannelError { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection, .failedToAddSSLHandler,
            .sslUnsupported:
            return true
        default:
            return false
        }
    }

    deinit {
        close()
    }

    /// Closes the idle connections and stops the event loop; safe to call more than once. A connection
    /// lent out at the time is closed with the event loop.
    func close() {
        let connections = idle.withLock { current in
            defer { current.removeAll() }
            return current
        }
        for connection in connections { drop(connection) }
        try? eventLoops.syncShutdownGracefully()
    }
}

extension StorageUnavailable {
    /// The cause of a PostgreSQL error when it is one the request did not make: the server's disk is full
    /// (SQLSTATE 53100), it is read-only (25006, a standby), it is too busy or the change collided with
    /// another (53300, 40001, 40P01, 57014 a statement past its timeout, 55P03 a lock not granted), or it
    /// cannot be reached at all (a refused or lost connection, 57P01–57P03 shutting down or starting).
    init?(postgres error: any Error) {
        if PostgresConnections.isConnectionFailure(error) {
            self = .unreachable
            return
        }
        guard let state = sqlState(of: error) else { return nil }
        switch state {
        case "53100": self = .diskFull
        case "25006": self = .readOnly
        case "53300", "40001", "40P01", "57014", "55P03": self = .busy
        case "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004": self = .unreachable
        default: return nil
        }
    }
}

// The errors a PostgreSQL request fails with: the server's, and the network's below it.
extension PSQLError: EngineFailure {
    package var unavailable: StorageUnavailable? { StorageUnavailable(postgres: self) }

    /// 22021 (a NUL in text) or 22P05 (`\u0000` in JSON it was to read as `jsonb`).
    package var unstorableTextState: String? {
        sqlState(of: self).flatMap { $0 == "22021" || $0 == "22P05" ? $0 : nil }
    }
}

extension NIOConnectionError: EngineFailure {
    package var unavailable: StorageUnavailable? { .unreachable }
}

extension IOError: EngineFailure {
    package var unavailable: StorageUnavailable? { .unreachable }
}

extension ChannelError: EngineFailure {
    package var unavailable: StorageUnavailable? { .unreachable }
}

extension PostgresConnection {
    /// `query`'s answer, waited for by the calling worker thread (see `PendingAnswer`).
    func answer(_ query: PostgresQuery, logger: Logger) throws -> PostgresQueryResult {
        try PendingAnswer(on: self) { self.query(query, logger: logger) }.wait()
    }
}

/// A statement sent and its answer still to come, read once. (postgres-nio writes a connection's next
/// statement only after the previous one has answered: statements sent together still take a round trip
/// each, so a report reads its parts with one statement, `PostgresEventCounts`.)
///
/// postgres-nio (1.33) writes a query to its channel without a promise, so a query sent to a connection
/// that has closed (a backend the server ended between two statements, a restart) is dropped and its
/// future never completes: a worker waiting on it would wait forever. A closed connection is refused
/// before sending, and the wait is bounded.
final class PendingAnswer<Answer: Sendable>: Sendable {
    private let connection: PostgresConnection
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<Answer, any Error>?>(nil)

    /// Sends with `send` unless the connection is closed.
    init(on connection: PostgresConnection, _ send: () -> EventLoopFuture<Answer>) {
        self.connection = connection
        guard !connection.isClosed else {
            outcome.withLock { $0 = .failure(ChannelError.ioOnClosedChannel) }
            done.signal()
            return
        }
        send().whenComplete { [self] result in
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// The answer, waited for at most `PostgresConnections.longestAnswer`; past that the connection is
    /// closed and the caller told the server is busy.
    func wait() throws -> Answer {
        guard done.wait(timeout: .now() + PostgresConnections.longestAnswer) == .success, let result = outcome.withLock({ $0 }) else {
            connection.close().whenComplete { _ in }
            throw PostgresConnections.Unusable(error: StorageUnavailable.busy)
        }
        return try result.get()
    }
}

/// The statements each pooled connection has prepared, by their SQL: parsed and planned by the server once,
/// then executed by name. For statements that are costly to plan and run often (a report's, about 2 ms of
/// parsing and planning a time); the server keeps them until the connection closes, and so do we.
final class PreparedStatements: Sendable {
    private let byConnection = Mutex<[PostgresConnection.ID: [String: PreparedQuery]]>([:])

    /// The rows of `sql` run with `binds` on `connection`, prepared there first if it is not yet. Their cells
    /// are read with `preparedCell`.
    func rows(_ sql: String, _ binds: [PostgresData], on connection: PostgresConnection) throws -> [PostgresRow] {
        let statement: PreparedQuery
        if let known = byConnection.withLock({ $0[connection.id]?[sql] }) {
            statement = known
        } else {
            statement = try PendingAnswer(on: connection) { connection.prepare(query: sql) }.wait()
            byConnection.withLock { $0[connection.id, default: [:]][sql] = statement }
        }
        return try PendingAnswer(on: connection) { statement.execute(binds) }.wait()
    }

    /// Forgets what `connection` prepared, as it closes.
    func forget(_ connection: PostgresConnection) {
        _ = byConnection.withLock { $0.removeValue(forKey: connection.id) }
    }
}

extension PostgresRandomAccessRow {
    /// The cell `name` of a row that `PreparedStatements` answered. Its answer comes in binary, as
    /// postgres-nio asks for every answer, but its rows describe their columns as text (postgres-nio 1.33
    /// keeps the statement's description as the server sent it when preparing, before any format was
    /// chosen): the cell is read as what it is.
    func preparedCell(_ name: String) -> PostgresCell {
        var cell = self[name]
        cell.format = .binary
        return cell
    }
}

/// The PostgreSQL error code of `error` (SQLSTATE), when it is one the server sent.
func sqlState(of error: any Error) -> String? {
    (error as? PSQLError)?.serverInfo?[.sqlState]
}
