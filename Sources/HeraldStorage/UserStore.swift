import Foundation
import HeraldDomain

/// A console account.
public struct User: Sendable, Equatable, Codable {
    public var id: Int64?
    public var email: String
    public var name: String
    public var role: Role
    public var passwordHash: String
    public var active: Bool
    /// The console language the user chose (a `ConsoleLanguage` tag); nil follows the browser.
    public var language: String?
    /// The IANA time zone pages show times in; nil until the first sign-in stores the browser's.
    public var timeZone: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: Int64? = nil, email: String, name: String, role: Role, passwordHash: String, active: Bool = true,
        createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.email = email
        self.name = name
        self.role = role
        self.passwordHash = passwordHash
        self.active = active
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, email, name, role, active, language
        case timeZone = "time_zone"
        case passwordHash = "password_hash"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

/// Console accounts: the `users` table on either engine.
public protocol UserStore: Sendable {
    func count() throws -> Int
    /// Inserts `user` with its audit line, returning it with its id. Fails with `.emailTaken` when the email
    /// exists, compared with ASCII letters folded (as SQLite's NOCASE does).
    func insert(_ user: User, actor: AuditActor, now: Date) throws -> User
    /// Inserts `user` only if there is no user at all (first-run setup), atomically. The audit line names the
    /// new user as the one who made the account: nobody else was there.
    func insertFirst(_ user: User, now: Date) throws -> User?
    func find(id: Int64) throws -> User?
    func find(email: String) throws -> User?
    /// Every user, by email with ASCII letters folded.
    func all() throws -> [User]
    /// Saves `user`'s role, name, active flag, password hash, language and time zone with its audit line,
    /// and ends the sessions `ending` names, in one transaction; refuses to leave no active admin.
    func update(_ user: User, ending: SessionsToEnd, line: AuditLine, actor: AuditActor, now: Date) throws
}

/// Which of a user's sessions a change to the user ends.
public enum SessionsToEnd: Sendable, Equatable {
    case none
    case all
    /// Every session but the one with this token hash: the browser that made the change stays signed in.
    case allExcept(tokenHash: String)
}

public enum UserStoreError: Error, Equatable {
    case emailTaken
    /// The user was not there to update (removed meanwhile).
    case notFound
    /// The change would leave no active admin, and nobody could manage users any more.
    case lastAdmin
}
