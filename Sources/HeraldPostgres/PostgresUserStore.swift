import Foundation
import HeraldStorage
import HeraldDomain
import PostgresNIO

/// The `users` table on PostgreSQL.
struct PostgresUserStore: UserStore {
    let database: PostgresAppDatabase

    /// What `user(_:from:)` reads, in its order.
    static let columns = "id, email, name, role, password_hash, active, language, time_zone, created_at, updated_at"

    private static func user(_ row: PostgresRow) throws -> User {
        try user(row.makeRandomAccess(), from: 0)
    }

    /// The user in the row's `columns` from cell `first` on.
    static func user(_ cells: PostgresRandomAccessRow, from first: Int) throws -> User {
        func cell<Value: PostgresDecodable>(_ offset: Int, _ type: Value.Type) throws -> Value { try cells[first + offset].decode(Value.self) }
        let (id, email, name, role, passwordHash, active) = (
            try cell(0, Int64.self), try cell(1, String.self), try cell(2, String.self), try cell(3, String.self), try cell(4, String.self),
            try cell(5, Bool.self))
        let (language, timeZone, createdAt, updatedAt) = (
            try cell(6, String?.self), try cell(7, String?.self), try cell(8, Date.self), try cell(9, Date.self))
        guard let known = Role(rawValue: role) else { throw UnreadableStoredValue(column: "users.role", value: role) }
        var user = User(
            id: id, email: email, name: name, role: known, passwordHash: passwordHash, active: active,
            createdAt: createdAt, updatedAt: updatedAt)
        user.language = language
        user.timeZone = timeZone
        return user
    }

    func count() throws -> Int {
        Int(try database.read { try $0.one("SELECT count(*) FROM users", as: Int64.self) } ?? 0)
    }

    func insert(_ user: User, actor: AuditActor, now: Date) throws -> User {
        try database.write { session in
            guard let inserted = try Self.insert(user, in: session) else { throw UserStoreError.emailTaken }
            try PostgresAuditLogStore.record(actor, .userCreated(email: user.email, role: user.role, atSetup: false), at: now, in: session)
            return inserted
        }
    }

    func insertFirst(_ user: User, now: Date) throws -> User? {
        try database.write { session in
            // Two set-up forms sent at once, to two instances: the second waits here and then sees the first's user.
            try session.lock("users.first")
            guard try session.one("SELECT count(*) FROM users", as: Int64.self) == 0 else { return nil }
            guard let inserted = try Self.insert(user, in: session), let id = inserted.id else { throw UserStoreError.emailTaken }
            let setUp = AuditActor.user(id: id, email: user.email)
            try PostgresAuditLogStore.record(setUp, .userCreated(email: inserted.email, role: inserted.role, atSetup: true), at: now, in: session)
            return inserted
        }
    }

    /// The inserted user, or nil when its email (folded) is taken: the unique index decides, so two
    /// instances adding the same email at once cannot both succeed.
    private static func insert(_ user: User, in session: PostgresSession) throws -> User? {
        let rows = try session.rows(
            """
            INSERT INTO users (email, name, role, password_hash, active, language, time_zone, created_at, updated_at)
            VALUES (\(user.email), \(user.name), \(user.role.rawValue), \(user.passwordHash), \(user.active), \(user.language),
                    \(user.timeZone), \(user.createdAt.storedPrecision), \(user.updatedAt.storedPrecision))
            ON CONFLICT DO NOTHING
            RETURNING \(unescaped: columns)
            """)
        return try rows.first.map(Self.user)
    }

    func find(id: Int64) throws -> User? {
        try database.read { try $0.rows("SELECT \(unescaped: Self.columns) FROM users WHERE id = \(id)").first.map(Self.user) }
    }

    func find(email: String) throws -> User? {
        try database.read {
            try $0.rows("SELECT \(unescaped: Self.columns) FROM users WHERE herald_fold(email) = herald_fold(\(email))").first.map(Self.user)
        }
    }

    func all() throws -> [User] {
        try database.read {
            try $0.rows("SELECT \(unescaped: Self.columns) FROM users ORDER BY herald_fold(email) COLLATE \"C\"").map(Self.user)
        }
    }

    func update(_ user: User, ending: SessionsToEnd, line: AuditLine, actor: AuditActor, now: Date) throws {
        guard let id = user.id else { return }
        try database.write { session in
            // Two admins demoting each other on two instances: the second waits, then counts the first's change.
            try session.lock("users.admins")
            let changed = try session.changes(
                """
                UPDATE users SET email = \(user.email), name = \(user.name), role = \(user.role.rawValue),
                    password_hash = \(user.passwordHash), active = \(user.active), language = \(user.language),
                    time_zone = \(user.timeZone), created_at = \(user.createdAt.storedPrecision),
                    updated_at = \(user.updatedAt.storedPrecision)
                WHERE id = \(id)
                """)
            guard changed == 1 else { throw UserStoreError.notFound }
            let admins = try session.one(
                "SELECT count(*) FROM users WHERE role = \(Role.admin.rawValue) AND active", as: Int64.self) ?? 0
            if admins == 0 { throw UserStoreError.lastAdmin }
            switch ending {
            case .none:
                break
            case .all:
                try session.execute("DELETE FROM sessions WHERE user_id = \(id)")
            case .allExcept(let kept):
                try session.execute("DELETE FROM sessions WHERE user_id = \(id) AND token_hash <> \(kept)")
            }
            try PostgresAuditLogStore.record(actor, line, at: now, in: session)
        }
    }
}
