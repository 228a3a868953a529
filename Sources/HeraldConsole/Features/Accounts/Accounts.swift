import Foundation
import HeraldDomain
import HeraldStorage

/// Creating and changing console accounts: shared by the forms and the command line.
public struct Accounts: Sendable {
    let database: any HeraldDatabase
    let hasher: PasswordHasher

    public init(database: any HeraldDatabase, hasher: PasswordHasher) {
        self.database = database
        self.hasher = hasher
    }

    /// Validates and creates a user; the audit line commits with it. Every problem is reported at once (a
    /// missing role and a taken email with the rest), so a form is not sent back once per mistake.
    public func create(email: String, name: String, role: Role?, password: String, actor: AuditActor, now: Date) throws -> User {
        var errors = Self.problems(email: email, name: name, password: password)
        if role == nil { errors.add("role", Self.chooseRole) }
        if errors.message(for: "email") == nil, try database.users.find(email: email.trimmingCharacters(in: .whitespaces)) != nil {
            errors.add("email", Self.emailTaken)
        }
        guard errors.isEmpty, let role else { throw errors }
        let user = try newUser(email: email, name: name, role: role, password: password, now: now)
        do {
            return try database.users.insert(user, actor: actor, now: now)
        } catch UserStoreError.emailTaken {
            // Taken between the check above and the insert.
            throw InputProblems("email", Self.emailTaken)
        }
    }

    static let emailTaken = Phrase("accounts.errors.email_taken")
    static let chooseRole = Phrase("users.errors.choose_role")

    /// Creates the first admin at setup, only if no user exists yet; the audit line names the new admin.
    func createFirstAdmin(email: String, name: String, password: String, timeZone: String? = nil, now: Date) throws -> User {
        var user = try newUser(email: email, name: name, role: .admin, password: password, now: now)
        user.timeZone = timeZone
        guard let created = try database.users.insertFirst(user, now: now) else {
            throw InputProblems("email", Phrase("accounts.errors.already_set_up"))
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
    static func problems(email: String, name: String, password: String) -> InputProblems {
        var errors = InputProblems()
        let name = name.trimmingCharacters(in: .whitespaces)
        if name.isEmpty { errors.add("name", Phrase("accounts.errors.name_required")) }
        if name.scalarCount > 100 { errors.add("name", Phrase("accounts.errors.name_too_long", ["limit": .number(100)])) }
        if let problem = InputRules.controlCharacterProblem(name) { errors.add("name", problem) }
        if let problem = InputRules.emailProblem(email.trimmingCharacters(in: .whitespaces)) { errors.add("email", problem) }
        if let problem = InputRules.passwordProblem(password) { errors.add("password", problem) }
        return errors
    }

    /// `user` if it is active and `password` is its password, else nil. Takes as long when there is no such
    /// user (an unknown email) as when there is, so the time says nothing about who has an account.
    func authenticate(_ user: User?, password: String) -> User? {
        guard let user else {
            _ = hasher.verify(password, against: hasher.decoy)
            return nil
        }
        guard hasher.verify(password, against: user.passwordHash), user.active else { return nil }
        return user
    }

    /// Saves a change to a user with its audit line, ending the sessions `ending` names in the same
    /// transaction; explains refusals in words for the form.
    func update(_ user: User, ending: SessionsToEnd = .none, line: AuditLine, actor: AuditActor, now: Date) throws {
        var changed = user
        changed.updatedAt = now
        do {
            try database.users.update(changed, ending: ending, line: line, actor: actor, now: now)
        } catch UserStoreError.lastAdmin {
            throw InputProblems("role", Phrase("accounts.errors.last_admin"))
        }
    }

    /// Deactivates `user` and ends every session they have: they are signed out at once, everywhere.
    func deactivate(_ user: User, actor: AuditActor, now: Date) throws {
        var changed = user
        changed.active = false
        try update(changed, ending: .all, line: .userChanged("user.deactivate", email: user.email), actor: actor, now: now)
    }

    /// An admin sets someone's password: every session of theirs ends, so whoever held one (perhaps the
    /// reason for the reset) must sign in with the new password.
    func resetPassword(of user: User, to password: String, actor: AuditActor, now: Date) throws {
        if let problem = InputRules.passwordProblem(password) { throw InputProblems("password", problem) }
        var changed = user
        changed.passwordHash = try hasher.hash(password)
        try update(changed, ending: .all, line: .userChanged("user.password_reset", email: user.email), actor: actor, now: now)
    }

    /// A user changes their own password: the session they use stays signed in, their other sessions end.
    func changeOwnPassword(
        of user: User, current: String, new password: String, confirmation: String, keeping session: Session, now: Date
    ) throws {
        var errors = InputProblems()
        if !hasher.verify(current, against: user.passwordHash) {
            errors.add("current_password", Phrase("accounts.errors.current_password_wrong"))
        }
        if let problem = InputRules.passwordProblem(password) {
            errors.add("password", problem)
        } else if password == current {
            errors.add("password", Phrase("accounts.errors.password_unchanged"))
        }
        if password != confirmation { errors.add("password_confirmation", Self.passwordsDiffer) }
        guard errors.isEmpty, let id = user.id else { throw errors }
        var changed = user
        changed.passwordHash = try hasher.hash(password)
        try update(changed, ending: .allExcept(tokenHash: session.tokenHash), line: .userChanged("user.password_change", email: user.email),
                   actor: .user(id: id, email: user.email), now: now)
    }

    /// What a form says when a password and its confirmation differ.
    static let passwordsDiffer = Phrase("accounts.errors.passwords_differ")
}
