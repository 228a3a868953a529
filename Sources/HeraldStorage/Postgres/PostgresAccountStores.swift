import Foundation
import HeraldDomain
import PostgresNIO

/// A stored value this version cannot read (a role written by something else): the row is refused, not guessed.
public struct UnreadableStoredValue: Error, CustomStringConvertible {
    public let column: String
    public let value: String

    public var description: String { "store: the stored \(column) \"\(value)\" is not one this version knows" }
}

/// The PostgreSQL error code of `error` (SQLSTATE), when it is one the server sent.
func sqlState(of error: any Error) -> String? {
    (error as? PSQLError)?.serverInfo?[.sqlState]
}

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

/// The `sessions` table on PostgreSQL.
struct PostgresSessionStore: SessionStore {
    let database: PostgresAppDatabase

    func create(userID: Int64, now: Date, lifetime: TimeInterval) throws -> (token: String, session: Session) {
        let (token, session) = Session.new(userID: userID, now: now, lifetime: lifetime)
        try database.write { db in
            try db.execute("DELETE FROM sessions WHERE expires_at < \(now.storedPrecision)")
            try db.execute(
                """
                INSERT INTO sessions (token_hash, user_id, csrf_token, flash_kind, flash_message, created_at, last_seen_at, expires_at)
                VALUES (\(session.tokenHash), \(session.userID), \(session.csrfToken), \(session.flashKind), \(session.flashMessage),
                        \(session.createdAt), \(session.lastSeenAt), \(session.expiresAt))
                """)
        }
        return (token, session)
    }

    /// The user's columns as `user(_:from:)` reads them, of the users table joined as `u`.
    private static let userColumns = PostgresUserStore.columns.split(separator: ", ").map { "u." + $0 }.joined(separator: ", ")

    func find(token: String) throws -> SessionWithUser? {
        // One statement for both: each is a round trip through postgres-nio, and every signed-in page reads both.
        try database.read { db in
            try db.rows(
                """
                SELECT s.token_hash, s.user_id, s.csrf_token, s.flash_kind, s.flash_message, s.created_at, s.last_seen_at, s.expires_at,
                    \(unescaped: Self.userColumns)
                FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = \(Secret.sha256(token))
                """
            ).first.map { row in
                let (tokenHash, userID, csrfToken, flashKind, flashMessage, createdAt, lastSeenAt, expiresAt) = try row.decode(
                    (String, Int64, String, String?, String?, Date, Date, Date).self)
                let session = Session(
                    tokenHash: tokenHash, userID: userID, csrfToken: csrfToken, flashKind: flashKind, flashMessage: flashMessage,
                    createdAt: createdAt, lastSeenAt: lastSeenAt, expiresAt: expiresAt)
                return SessionWithUser(session: session, user: try PostgresUserStore.user(row.makeRandomAccess(), from: 8))
            }
        }
    }

    func save(_ session: Session) throws {
        // A session ended meanwhile (signed out in another tab, on another instance) stays ended.
        try database.read { db in
            try db.execute(
                """
                UPDATE sessions SET user_id = \(session.userID), csrf_token = \(session.csrfToken), flash_kind = \(session.flashKind),
                    flash_message = \(session.flashMessage), created_at = \(session.createdAt.storedPrecision),
                    last_seen_at = \(session.lastSeenAt.storedPrecision), expires_at = \(session.expiresAt.storedPrecision)
                WHERE token_hash = \(session.tokenHash)
                """)
        }
    }

    func delete(tokenHash: String) throws {
        try database.read { try $0.execute("DELETE FROM sessions WHERE token_hash = \(tokenHash)") }
    }
}

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

/// The `server_secrets` table on PostgreSQL.
struct PostgresServerSecretStore: ServerSecretStore {
    let database: PostgresAppDatabase

    func signingKey(now: Date) throws -> [UInt8] {
        let name = "signing_key"
        let made = Secret.randomBytes(32)
        return try database.read { db in
            // The first instance's key wins; every other one reads it.
            try db.execute(
                """
                INSERT INTO server_secrets (name, value, created_at) VALUES (\(name), \(ByteBuffer(bytes: made)), \(now.storedPrecision))
                ON CONFLICT (name) DO NOTHING
                """)
            guard let stored = try db.one("SELECT value FROM server_secrets WHERE name = \(name)", as: ByteBuffer.self) else {
                throw UnreadableStoredValue(column: "server_secrets.value", value: name)
            }
            return Array(buffer: stored)
        }
    }
}

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
