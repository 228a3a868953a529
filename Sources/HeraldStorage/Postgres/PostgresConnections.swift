import Foundation
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
        slots.wait()
        defer { slots.signal() }
        let connection = try idle.withLock { $0.popLast() }.flatMap { $0.isClosed ? nil : $0 } ?? open()
        do {
            let result = try body(connection)
            idle.withLock { $0.append(connection) }
            return result
        } catch {
            if Self.isConnectionFailure(error) || connection.isClosed {
                _ = try? connection.close().wait()
            } else {
                idle.withLock { $0.append(connection) }
            }
            throw error
        }
    }

    private func open() throws -> PostgresConnection {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        return try PostgresConnection.connect(
            on: eventLoops.next(), configuration: configuration, id: id, logger: logger
        ).wait()
    }

    /// Opens a connection of its own, outside the pool, for a long-lived use (listening for notifications).
    func openDedicated() throws -> PostgresConnection {
        try open()
    }

    /// Whether `error` means the connection itself is gone, rather than that one statement failed.
    static func isConnectionFailure(_ error: any Error) -> Bool {
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
        for connection in connections { _ = try? connection.close().wait() }
        try? eventLoops.syncShutdownGracefully()
    }
}
