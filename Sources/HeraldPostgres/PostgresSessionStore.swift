import Foundation
import HeraldDomain
import HeraldStorage
import PostgresNIO

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
