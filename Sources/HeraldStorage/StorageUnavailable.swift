import Foundation
import Synchronization

/// Why the database cannot do what was asked right now, though nothing is wrong with the request:
/// the disk is full, the file is read-only, the disk failed, or another writer held the lock too long.
/// Worded for the people who see it; a retry later may succeed, and nothing was saved.
public enum StorageUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    case diskFull
    case readOnly
    case diskError
    case cannotOpen
    case busy
    /// The PostgreSQL server does not answer (down, restarting, the network between).
    case unreachable

    /// The cause of `error` when it is one of these conditions (SQLite's `FULL`, `READONLY`, `IOERR`,
    /// `CANTOPEN`, `BUSY` after the busy timeout; PostgreSQL's like them, or a server that does not answer);
    /// nil for any other error. Each engine's module says which of its errors are which (`EngineFailure`).
    public init?(_ error: any Error) {
        if let known = error as? StorageUnavailable {
            self = known
        } else if let cause = (error as? any EngineFailure)?.unavailable {
            self = cause
        } else {
            return nil
        }
    }

    /// What stops the save, as the end of "Herald cannot save right now: …".
    public var reason: String {
        switch self {
        case .diskFull: "the disk that holds its database is full"
        case .readOnly: "its database is read-only"
        case .diskError: "the disk that holds its database refused to write (it may be full, read-only or failing)"
        case .cannotOpen: "its database file cannot be opened"
        case .busy: "its database is busy with another change"
        case .unreachable: "its database server cannot be reached"
        }
    }

    /// Seconds a client should wait before trying again.
    public var retryAfterSeconds: Int {
        self == .busy || self == .unreachable ? 5 : 30
    }

    public var description: String { "store: \(reason)" }
}

/// An error a database engine's library throws that may mean the database cannot take requests right now:
/// the engine modules conform their libraries' error types, so this module needs neither library.
package protocol EngineFailure: Error {
    /// The condition the error reports; nil when it is not one of them (a constraint, a bad statement).
    var unavailable: StorageUnavailable? { get }
    /// The engine's code when it refused text it cannot hold (`UnstorableText`); nil for any other error.
    var unstorableTextState: String? { get }
}

extension EngineFailure {
    package var unstorableTextState: String? { nil }
}

/// The last time the database could not take a request, and why: `/readyz` reports it to operators.
public final class UnavailabilityLog: Sendable {
    public struct Entry: Sendable, Equatable {
        public let cause: StorageUnavailable
        public let at: Date
    }

    /// How long a failure is reported after it happened: with no failure since, the database is taken to be fine again.
    public static let window: TimeInterval = 60

    private let last = Mutex<Entry?>(nil)

    public init() {}

    public func record(_ cause: StorageUnavailable, at date: Date) {
        last.withLock { $0 = Entry(cause: cause, at: date) }
    }

    /// The last failure, if it happened within `window` before `now`.
    public func recent(now: Date) -> Entry? {
        last.withLock { $0 }.flatMap { now.timeIntervalSince($0.at) <= Self.window ? $0 : nil }
    }
}
