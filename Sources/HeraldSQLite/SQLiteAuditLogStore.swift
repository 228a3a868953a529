import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `audit_log` table: append-only.
struct SQLiteAuditLogStore: AuditLogStore {
    let pool: DatabasePool

    public func record(_ actor: AuditActor, action: String, subject: String, details: String, at time: Date) throws {
        try pool.write { db in
            try Self.record(actor, action: action, subject: subject, details: details, at: time, in: db)
        }
    }

    /// Records `line` inside a caller's transaction, so a change and its audit line commit together.
    public static func record(_ actor: AuditActor, _ line: AuditLine, at time: Date, in db: Database) throws {
        try record(actor, action: line.action, subject: line.subject, details: line.details, arguments: line.storedArguments, at: time, in: db)
    }

    static func record(
        _ actor: AuditActor, action: String, subject: String, details: String, arguments: String? = nil, at time: Date, in db: Database
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO audit_log (occurred_at, actor_user_id, actor_key_id, actor, action, subject, details, arguments)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [time, actor.userID, actor.keyID, actor.label, action, subject, details, arguments])
    }

    /// A page of entries, newest first.
    public func page(offset: Int, limit: Int) throws -> [AuditEntry] {
        try pool.read {
            try AuditEntry.fetchAll(
                $0, sql: "SELECT * FROM audit_log ORDER BY id DESC LIMIT ? OFFSET ?", arguments: [limit, offset])
        }
    }

    /// The newest entry of `action` (the last backup, for the System page).
    public func latest(action: String) throws -> AuditEntry? {
        try pool.read {
            try AuditEntry.fetchOne($0, sql: "SELECT * FROM audit_log WHERE action = ? ORDER BY id DESC LIMIT 1", arguments: [action])
        }
    }

    public func count() throws -> Int {
        try pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM audit_log") ?? 0 }
    }
}

extension AuditEntry: FetchableRecord {
    public init(row: Row) throws {
        self.init(
            id: row["id"], occurredAt: row["occurred_at"], actor: row["actor"], action: row["action"], subject: row["subject"],
            details: row["details"], arguments: row["arguments"])
    }
}
