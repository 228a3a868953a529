import Foundation
import HeraldDomain
import HeraldStorage

/// Creating and changing console accounts: shared by the forms and the command line.
public struct Accounts: Sendable {
    let database: AppDatabase
    let hasher: PasswordHasher

    public init(database: AppDatabase, hasher: PasswordHasher) {
        self.database = database
        self.hasher = hasher
    }

    /// Validates and creates a user; the audit line commits with it.
    public func create(email: String, name: String, role: Role, password: String, actor: AuditActor, now: Date) throws -> User {
        let user = try newUser(email: email, name: name, role: role, password: password, now: now)
        do {
            return try database.users.insert(user, actor: actor, now: now)
        } catch UserStoreError.emailTaken {
            throw FormErrors("email", "A user with this email already exists.")
        }
    }

    /// Creates the first admin at setup, only if no user exists yet; the audit line names the new admin.
    func createFirstAdmin(email: String, name: String, password: String, now: Date) throws -> User {
        let user = try newUser(email: email, name: name, role: .admin, password: password, now: now)
        guard let created = try database.users.insertFirst(user, now: now) else {
            throw FormErrors("email", "Herald is already set up. Sign in instead.")
        }
        return created
    }

    private func newUser(email: String, name: String, role: Role, password: String, now: Date) throws -> User {
        let email = email.trimmingCharacters(in: .whitespaces)
        let name = name.trimmingCharacters(in: .whitespaces)
        let errors = Self.problems(email: email, name: name, password: password)
        guard errors.isEmpty else { throw errors }
        return User(
            id: nil, email: email, name: name, role: role, passwordHash: try hasher.hash(password),
            active: true, createdAt: now, updatedAt: now)
    }

    /// What is wrong with a new user's details, field by field.
    static func problems(email: String, name: String, password: String) -> FormErrors {
        var errors = FormErrors()
        let name = name.trimmingCharacters(in: .whitespaces)
        if name.isEmpty { errors.add("name", "Enter a name, so others can tell who changed what.") }
        if name.count > 100 { errors.add("name", "Use at most 100 characters for the name.") }
        if let problem = InputRules.emailProblem(email.trimmingCharacters(in: .whitespaces)) { errors.add("email", problem) }
        if let problem = InputRules.passwordProblem(password) { errors.add("password", problem) }
        return errors
    }

    /// The active user with these credentials, or nil. Takes as long for unknown emails as for known ones.
    func authenticate(email: String, password: String) throws -> User? {
        guard let user = try database.users.find(email: email.trimmingCharacters(in: .whitespaces)) else {
            _ = hasher.verify(password, against: Self.timingDecoy)
            return nil
        }
        guard hasher.verify(password, against: user.passwordHash), user.active else { return nil }
        return user
    }

    /// Saves a change to a user; explains refusals in words for the form.
    func update(_ user: User, action: String, details: String, actor: AuditActor, now: Date) throws {
        var changed = user
        changed.updatedAt = now
        do {
            try database.users.update(changed, action: action, details: details, actor: actor, now: now)
        } catch UserStoreError.lastAdmin {
            throw FormErrors("role", "Herald needs at least one active admin. Make someone else an admin first.")
        }
    }

    func setPassword(_ user: User, to password: String, actor: AuditActor, now: Date) throws {
        if let problem = InputRules.passwordProblem(password) { throw FormErrors("password", problem) }
        var changed = user
        changed.passwordHash = try hasher.hash(password)
        try update(changed, action: "user.password_reset", details: "", actor: actor, now: now)
    }

    /// A valid hash of a random password, verified against when the email is unknown.
    private static let timingDecoy = (try? PasswordHasher().hash(Secret.random())) ?? ""
}
