import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `sessions` table.
struct SQLiteSessionStore: SessionStore {
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

extension Session: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "sessions"
}
