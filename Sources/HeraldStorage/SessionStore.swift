import Foundation
import GRDB

/// A signed-in browser session, made at sign-in. The token itself is only in the cookie.
public struct Session: Sendable, Equatable, Codable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "sessions"

    public var tokenHash: String
    public var userID: Int64
    public var csrfToken: String
    public var flashKind: String?
    public var flashMessage: String?
    public var createdAt: Date
    public var lastSeenAt: Date
    public var expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case tokenHash = "token_hash"
        case userID = "user_id"
        case csrfToken = "csrf_token"
        case flashKind = "flash_kind"
        case flashMessage = "flash_message"
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
        case expiresAt = "expires_at"
    }
}

extension Session {
    /// A new session for `userID` and its token, which only the cookie keeps: the row stores its hash.
    static func new(userID: Int64, now: Date, lifetime: TimeInterval) -> (token: String, session: Session) {
        let token = Secret.random()
        let session = Session(
            tokenHash: Secret.sha256(token), userID: userID, csrfToken: Secret.random(),
            flashKind: nil, flashMessage: nil, createdAt: now.storedPrecision, lastSeenAt: now.storedPrecision,
            expiresAt: now.addingTimeInterval(lifetime).storedPrecision)
        return (token, session)
    }
}

/// A session with its user, read together: every signed-in page starts with both.
public struct SessionWithUser: Sendable {
    public var session: Session
    public var user: User
}

/// Signed-in browser sessions: the `sessions` table on either engine.
public protocol SessionStore: Sendable {
    /// Creates a session and returns its token (to put in the cookie) with the stored row; sweeps expired ones.
    func create(userID: Int64, now: Date, lifetime: TimeInterval) throws -> (token: String, session: Session)
    /// The session `token` names with its user (active or not), whatever its times; nil when there is none.
    func find(token: String) throws -> SessionWithUser?
    func save(_ session: Session) throws
    func delete(tokenHash: String) throws
}

/// The `sessions` table.
public struct SQLiteSessionStore: SessionStore {
    let pool: DatabasePool

    /// Creates a session and returns its token (to put in the cookie) with the stored row.
    public func create(userID: Int64, now: Date, lifetime: TimeInterval) throws -> (token: String, session: Session) {
        let (token, session) = Session.new(userID: userID, now: now, lifetime: lifetime)
        try pool.write { db in
            // Expired sessions are swept as new ones arrive, so the table stays small without a timer.
            try Session.filter(Column("expires_at") < now).deleteAll(db)
            try session.insert(db)
        }
        return (token, session)
    }

    public func find(token: String) throws -> SessionWithUser? {
        try pool.read { db in
            guard let session = try Session.fetchOne(db, key: Secret.sha256(token)), let user = try User.fetchOne(db, key: session.userID) else {
                return nil
            }
            return SessionWithUser(session: session, user: user)
        }
    }

    public func save(_ session: Session) throws {
        try pool.write { db in
            do {
                try session.update(db)
            } catch RecordError.recordNotFound {
                // A session ended meanwhile (signed out in another tab) stays ended.
            }
        }
    }

    public func delete(tokenHash: String) throws {
        _ = try pool.write { try Session.deleteOne($0, key: tokenHash) }
    }
}
