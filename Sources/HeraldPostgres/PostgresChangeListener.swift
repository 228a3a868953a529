import Foundation
import HeraldStorage
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Keeps one connection listening on `herald_changes`, which the schema's triggers notify at every commit
/// that changes what feeds, keys or origins are built from, by any instance. Each notification moves
/// `changes`, so this instance's in-memory copies rebuild on their next use. A lost connection is
/// reopened after a pause, and `changes` moves then too: notifications sent meanwhile were missed.
final class PostgresChangeListener: Sendable {
    static let channel = "herald_changes"
    /// How the listening connection is named in pg_stat_activity.
    static let applicationName = "herald listener"
    /// How long to wait before listening again after the connection was lost.
    static let retryAfter: TimeAmount = .seconds(1)

    private let connections: PostgresConnections
    private let changes: ChangeCounter
    private let logger: Logger
    private let state = Mutex<State>(State())

    private struct State {
        var running = false
        var connection: PostgresConnection?
    }

    init(connections: PostgresConnections, changes: ChangeCounter, logger: Logger) {
        self.connections = connections
        self.changes = changes
        self.logger = logger
    }

    /// Starts listening; the first connection is opened here, so a server that cannot be reached fails the start.
    func start() throws {
        let connection = try connections.openDedicated(as: Self.applicationName)
        let started = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            return true
        }
        guard started else {
            _ = try? connection.close().wait()
            return
        }
        listen(on: connection)
    }

    func stop() {
        let connection = state.withLock { state -> PostgresConnection? in
            state.running = false
            defer { state.connection = nil }
            return state.connection
        }
        _ = try? connection?.close().wait()
    }

    private func listen(on connection: PostgresConnection) {
        let kept = state.withLock { state -> Bool in
            guard state.running else { return false }
            state.connection = connection
            return true
        }
        guard kept else {
            connection.close().whenComplete { _ in }
            return
        }
        let changes = changes
        connection.addListener(channel: Self.channel) { _, _ in changes.bump() }
        connection.closeFuture.whenComplete { [self] _ in reconnect(after: Self.retryAfter, on: connection.eventLoop) }
        // The connection runs what it is sent in order: once this answers, LISTEN is in effect, and every
        // change committed from now on is heard.
        _ = try? connection.answer("SELECT 1", logger: logger)
        // Whatever changed before, or between two connections, was not heard: every copy rebuilds once.
        changes.bump()
    }

    private func reconnect(after delay: TimeAmount, on eventLoop: any EventLoop) {
        guard state.withLock({ $0.running }) else { return }
        logger.warning("lost the PostgreSQL connection that listens for other instances' changes; listening again in \(delay.nanoseconds / 1_000_000) ms")
        eventLoop.scheduleTask(in: delay) { [self] in
            // Opening waits on a future, which must not happen on an event loop: a thread of its own does it.
            DispatchQueue.global(qos: .utility).async { [self] in
                do {
                    listen(on: try connections.openDedicated(as: Self.applicationName))
                } catch {
                    reconnect(after: Self.retryAfter, on: eventLoop)
                }
            }
        }
    }
}
