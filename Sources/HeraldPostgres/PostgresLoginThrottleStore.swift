import Foundation
import HeraldDomain
import HeraldStorage
import PostgresNIO

/// The `login_throttles` table on PostgreSQL.
struct PostgresLoginThrottleStore: LoginThrottleStore {
    let database: PostgresAppDatabase

    func update<Decision>(
        _ keys: [LoginThrottleKey], forgetBefore: Date, _ decide: (inout [LoginThrottleKey: LoginFailures]) throws -> Decision
    ) throws -> Decision {
        try database.write { db in
            // Each key's lock, in one order, so that racing attempts on any instance read what the one before
            // left, and two attempts naming the same keys cannot wait on each other.
            for key in Set(keys).sorted(by: { ($0.kind.rawValue, $0.subject) < ($1.kind.rawValue, $1.subject) }) {
                try db.lock("login_throttles \(key.kind.rawValue) \(key.subject)")
            }
            try db.execute("DELETE FROM login_throttles WHERE last_failure_at < \(forgetBefore.storedPrecision)")
            var failures: [LoginThrottleKey: LoginFailures] = [:]
            for key in keys {
                let row = try db.rows(
                    """
                    SELECT failures, first_failure_at, last_failure_at FROM login_throttles
                    WHERE kind = \(key.kind.rawValue) AND subject = \(key.subject)
                    """
                ).first
                if let row {
                    let (count, first, last) = try row.decode((Int64, Date, Date).self)
                    failures[key] = LoginFailures(count: Int(clamping: count), first: first, last: last)
                }
            }
            let before = failures
            let decision = try decide(&failures)
            for key in keys where failures[key] != before[key] {
                if let counted = failures[key], counted.count > 0 {
                    try db.execute(
                        """
                        INSERT INTO login_throttles (kind, subject, failures, first_failure_at, last_failure_at)
                        VALUES (\(key.kind.rawValue), \(key.subject), \(Int64(counted.count)), \(counted.first.storedPrecision),
                                \(counted.last.storedPrecision))
                        ON CONFLICT (kind, subject) DO UPDATE SET
                            failures = excluded.failures, first_failure_at = excluded.first_failure_at,
                            last_failure_at = excluded.last_failure_at
                        """)
                } else {
                    try db.execute("DELETE FROM login_throttles WHERE kind = \(key.kind.rawValue) AND subject = \(key.subject)")
                }
            }
            return decision
        }
    }
}
