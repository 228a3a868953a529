import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `login_throttles` table.
struct SQLiteLoginThrottleStore: LoginThrottleStore {
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
