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

    /// Validates and creates a user; `first` creates the first admin only if no user exists yet.
    public func create(
        email: String, name: String, role: Role, password: String, actor: AuditActor, now: Date, first: Bool = false
    ) throws -> User {
        let email = email.trimmingCharacters(in: .whitespaces)
        let name = name.trimmingCharacters(in: .whitespaces)
        let errors = Self.problems(email: email, name: name, password: password)
        guard errors.isEmpty else { throw errors }

        let user = User(
            id: nil, email: email, name: name, role: role, passwordHash: try hasher.hash(password),
            active: true, createdAt: now, updatedAt: now)
        let created: User
        do {
            if first {
                guard let inserted = try database.users.insertFirst(user) else {
                    throw FormErrors("email", "Herald is already set up. Sign in instead.")
                }
                created = inserted
            } else {
                created = try database.users.insert(user)
            }
        } catch UserStoreError.emailTaken {
            throw FormErrors("email", "A user with this email already exists.")
        }
        try database.auditLog.record(actor, action: "user.create", subject: "user \(email)", details: "role \(role.rawValue)", at: now)
        return created
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
            try database.users.update(changed)
        } catch UserStoreError.lastAdmin {
            throw FormErrors("role", "Herald needs at least one active admin. Make someone else an admin first.")
        }
        try database.auditLog.record(actor, action: action, subject: "user \(user.email)", details: details, at: now)
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
