import Foundation
import GRDB

/// What login throttling counts failures for.
public struct LoginThrottleKey: Hashable, Sendable {
    public enum Kind: String, Sendable {
        /// An email typed into the login form, known or not (so a refusal says nothing about who exists).
        case account
        /// The client's address (an IPv6 client's /64 network).
        case address
        /// A browser where the account signed in before.
        case browser
        /// A signed-in session checking its user's current password (to change it).
        case session
    }

    public let kind: Kind
    public let subject: String

    public init(_ kind: Kind, _ subject: String) {
        self.kind = kind
        self.subject = subject
    }
}

/// The failures counted for one key.
public struct LoginFailures: Sendable, Equatable {
    public var count: Int
    public var first: Date
    public var last: Date

    public init(count: Int, first: Date, last: Date) {
        self.count = count
        self.first = first
        self.last = last
    }
}

/// Login failures counted per key: the `login_throttles` table on either engine.
public protocol LoginThrottleStore: Sendable {
    /// Reads the failures of `keys`, lets `decide` change them, and saves what it changed (nil or a zero count
    /// deletes), atomically: racing attempts, on any thread or in any process, each see what the one before
    /// left. Rows whose last failure is before `forgetBefore` are swept first.
    func update<Decision>(
        _ keys: [LoginThrottleKey], forgetBefore: Date, _ decide: (inout [LoginThrottleKey: LoginFailures]) throws -> Decision
    ) throws -> Decision
}

/// The `login_throttles` table.
public struct SQLiteLoginThrottleStore: LoginThrottleStore {
    let pool: DatabasePool

    /// Reads the failures of `keys`, lets `decide` change them, and saves what it changed (nil deletes), in one
    /// write transaction: racing attempts, on any thread or in any process, each see what the one before left.
    /// Rows whose last failure is before `forgetBefore` are swept first, so the table keeps only what counts.
    public func update<Decision>(
        _ keys: [LoginThrottleKey], forgetBefore: Date,
        _ decide: (inout [LoginThrottleKey: LoginFailures]) throws -> Decision
    ) throws -> Decision {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM login_throttles WHERE last_failure_at < ?", arguments: [forgetBefore])
            var failures: [LoginThrottleKey: LoginFailures] = [:]
            for key in keys {
                let row = try Row.fetchOne(
                    db, sql: "SELECT failures, first_failure_at, last_failure_at FROM login_throttles WHERE kind = ? AND subject = ?",
                    arguments: [key.kind.rawValue, key.subject])
                if let row { failures[key] = LoginFailures(count: row[0], first: row[1], last: row[2]) }
            }
            let before = failures
            let decision = try decide(&failures)
            for key in keys where failures[key] != before[key] {
                if let counted = failures[key], counted.count > 0 {
                    try db.execute(
                        sql: """
                            INSERT INTO login_throttles (kind, subject, failures, first_failure_at, last_failure_at) VALUES (?, ?, ?, ?, ?)
                            ON CONFLICT (kind, subject) DO UPDATE SET
                                failures = excluded.failures, first_failure_at = excluded.first_failure_at, last_failure_at = excluded.last_failure_at
                            """,
                        arguments: [key.kind.rawValue, key.subject, counted.count, counted.first, counted.last])
                } else {
                    try db.execute(
                        sql: "DELETE FROM login_throttles WHERE kind = ? AND subject = ?", arguments: [key.kind.rawValue, key.subject])
                }
            }
            return decision
        }
    }
}
