import Foundation
import HeraldDomain
import HeraldStorage
import PostgresNIO

/// The `audit_log` table on PostgreSQL.
struct PostgresAuditLogStore: AuditLogStore {
    let database: PostgresAppDatabase

    func record(_ actor: AuditActor, action: String, subject: String, details: String, at time: Date) throws {
        try database.read { try Self.record(actor, action: action, subject: subject, details: details, at: time, in: $0) }
    }

    /// Records `line` inside a caller's transaction, so a change and its audit line commit together.
    static func record(_ actor: AuditActor, _ line: AuditLine, at time: Date, in session: PostgresSession) throws {
        try record(actor, action: line.action, subject: line.subject, details: line.details, arguments: line.storedArguments, at: time, in: session)
    }

    static func record(
        _ actor: AuditActor, action: String, subject: String, details: String, arguments: String? = nil, at time: Date, in session: PostgresSession
    ) throws {
        try session.execute(
            """
            INSERT INTO audit_log (occurred_at, actor_user_id, actor_key_id, actor, action, subject, details, arguments)
            VALUES (\(time.storedPrecision), \(actor.userID), \(actor.keyID), \(actor.label), \(action), \(subject), \(details), \(arguments))
            """)
    }

    private static let columns = "id, occurred_at, actor, action, subject, details, arguments"

    private static func entry(_ row: PostgresRow) throws -> AuditEntry {
        let (id, occurredAt, actor, action, subject, details, arguments) = try row.decode((Int64, Date, String, String, String, String, String?).self)
        return AuditEntry(id: id, occurredAt: occurredAt, actor: actor, action: action, subject: subject, details: details, arguments: arguments)
    }

    func page(offset: Int, limit: Int) throws -> [AuditEntry] {
        try database.read {
            try $0.rows(
                "SELECT \(unescaped: Self.columns) FROM audit_log ORDER BY id DESC LIMIT \(Int64(max(0, limit))) OFFSET \(Int64(max(0, offset)))"
            ).map(Self.entry)
        }
    }

    func latest(action: String) throws -> AuditEntry? {
        try database.read {
            try $0.rows("SELECT \(unescaped: Self.columns) FROM audit_log WHERE action = \(action) ORDER BY id DESC LIMIT 1")
                .first.map(Self.entry)
        }
    }

    func count() throws -> Int {
        Int(try database.read { try $0.one("SELECT count(*) FROM audit_log", as: Int64.self) } ?? 0)
    }
}
