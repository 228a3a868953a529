import Foundation
import GRDB

/// Failed logins by account and by address, for throttling.
public struct LoginFailureStore: Sendable {
    let pool: DatabasePool

    public func record(email: String, address: String, at time: Date) throws {
        try pool.write { db in
            try db.execute(
                sql: "INSERT INTO login_failures (email, address, failed_at) VALUES (?, ?, ?)",
                arguments: [email, address, time])
        }
    }

    /// Times of the account's failures since `since`, oldest first.
    public func failures(email: String, since: Date) throws -> [Date] {
        try pool.read { db in
            try Date.fetchAll(
                db, sql: "SELECT failed_at FROM login_failures WHERE email = ? COLLATE NOCASE AND failed_at >= ? ORDER BY failed_at",
                arguments: [email, since])
        }
    }

    /// Times of the address's failures since `since`, oldest first.
    public func failures(address: String, since: Date) throws -> [Date] {
        try pool.read { db in
            try Date.fetchAll(
                db, sql: "SELECT failed_at FROM login_failures WHERE address = ? AND failed_at >= ? ORDER BY failed_at",
                arguments: [address, since])
        }
    }

    /// Forgets an account's failures after a successful login, and drops rows older than `before`.
    public func clear(email: String, olderThan before: Date) throws {
        try pool.write { db in
            try db.execute(
                sql: "DELETE FROM login_failures WHERE email = ? COLLATE NOCASE OR failed_at < ?",
                arguments: [email, before])
        }
    }
}
