import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `users` table.
struct SQLiteUserStore: UserStore {
    let pool: DatabasePool

    public func count() throws -> Int {
        try pool.read { try User.fetchCount($0) }
    }

    /// Inserts `user` with its audit line, returning it with its id. Fails with `.emailTaken` when the email exists.
    public func insert(_ user: User, actor: AuditActor, now: Date) throws -> User {
        try pool.write { db in
            if try User.filter(Column("email").collating(.nocase) == user.email).fetchCount(db) > 0 {
                throw UserStoreError.emailTaken
            }
            var inserted = user
            try inserted.insert(db)
            try SQLiteAuditLogStore.record(actor, .userCreated(email: user.email, role: user.role, atSetup: false), at: now, in: db)
            return inserted
        }
    }

    /// Inserts `user` only if there is no user at all (first-run setup), atomically. The audit line names the
    /// new user as the one who made the account: nobody else was there.
    public func insertFirst(_ user: User, now: Date) throws -> User? {
        try pool.write { db in
            guard try User.fetchCount(db) == 0 else { return nil }
            var inserted = user
            try inserted.insert(db)
            let setUp = AuditActor.user(id: db.lastInsertedRowID, email: user.email)
            try SQLiteAuditLogStore.record(setUp, .userCreated(email: user.email, role: user.role, atSetup: true), at: now, in: db)
            return inserted
        }
    }

    public func find(id: Int64) throws -> User? {
        try pool.read { try User.fetchOne($0, key: id) }
    }

    public func find(email: String) throws -> User? {
        try pool.read { try User.filter(Column("email").collating(.nocase) == email).fetchOne($0) }
    }

    public func all() throws -> [User] {
        try pool.read { try User.order(Column("email").collating(.nocase)).fetchAll($0) }
    }

    /// Saves `user`'s role, name, active flag and password hash with its audit line, and ends the sessions
    /// `ending` names, in one transaction; refuses to leave no active admin.
    public func update(_ user: User, ending: SessionsToEnd, line: AuditLine, actor: AuditActor, now: Date) throws {
        try pool.write { db in
            do {
                try user.update(db)
            } catch RecordError.recordNotFound {
                throw UserStoreError.notFound
            }
            let admins = try User.filter(Column("role") == Role.admin.rawValue && Column("active") == true).fetchCount(db)
            if admins == 0 { throw UserStoreError.lastAdmin }
            if let id = user.id {
                switch ending {
                case .none:
                    break
                case .all:
                    try db.execute(sql: "DELETE FROM sessions WHERE user_id = ?", arguments: [id])
                case .allExcept(let kept):
                    try db.execute(sql: "DELETE FROM sessions WHERE user_id = ? AND token_hash <> ?", arguments: [id, kept])
                }
            }
            try SQLiteAuditLogStore.record(actor, line, at: now, in: db)
        }
    }
}

extension User: FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "users"

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
