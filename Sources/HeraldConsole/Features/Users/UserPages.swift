import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/users`: admins create users, change roles, deactivate and reset passwords.
struct UserPages: Sendable {
    let services: Services

    private var accounts: Accounts {
        Accounts(database: services.database, hasher: services.configuration.passwordHasher)
    }

    struct UserRow: Sendable {
        let id: Int64
        let email: String
        let name: String
        let role: String
        let roleBadge: String
        let active: Bool
        let created: String
        let isYou: Bool
    }

    struct UserList: Sendable {
        let users: [UserRow]
    }

    func index(_ context: RequestContext) throws -> Response {
        let rows = try services.database.users.all().map { user in
            UserRow(
                id: user.id ?? 0, email: user.email, name: user.name, role: user.role.title,
                roleBadge: "badge-\(user.role.rawValue)", active: user.active,
                created: DisplayTime.date(user.createdAt), isYou: user.id == context.user?.id)
        }
        return try services.page(.users, title: "Users", model: UserList(users: rows), context: context)
    }

    struct NewUserForm: Sendable {
        let fields: [FieldView]
        let roles: [ChoiceView]
        let roleError: String?
        let errors: [ErrorSummaryItem]
    }

    func new(_ context: RequestContext) throws -> Response {
        try renderNew(context, form: FormData(), errors: FormErrors())
    }

    func create(_ context: RequestContext) throws -> Response {
        let form = context.form
        do {
            guard let role = form["role"].flatMap(Role.init(rawValue:)) else {
                throw FormErrors("role", "Choose a role: viewer, editor or admin.")
            }
            let user = try accounts.create(
                email: form["email"] ?? "", name: form["name"] ?? "", role: role, password: form["password"] ?? "",
                actor: context.actor, now: context.now)
            try services.flash(context, .success, "\(user.name) can now sign in as \(user.email).")
            return .redirect(to: "/users")
        } catch let problems as FormErrors {
            return try renderNew(context, form: form, errors: problems, status: 422)
        }
    }

    private func renderNew(_ context: RequestContext, form: FormData, errors: FormErrors, status: Int = 200) throws -> Response {
        let chosen = form["role"] ?? Role.editor.rawValue
        let model = NewUserForm(
            fields: [
                FieldView("name", label: "Name", value: form["name"] ?? "", autocomplete: "off", errors: errors),
                FieldView("email", label: "Email", type: "email", value: form["email"] ?? "", autocomplete: "off", errors: errors),
                FieldView("password", label: "Initial password", type: "password", autocomplete: "new-password",
                          hint: "At least \(InputRules.minimumPasswordLength) characters. Share it privately; they can sign in with it at once.",
                          errors: errors),
            ],
            roles: Self.roleChoices(checked: chosen),
            roleError: errors.message(for: "role"),
            errors: errors.summary)
        return try services.page(.newUser, title: "Add a user", model: model, context: context, status: status)
    }

    struct EditUserForm: Sendable {
        let id: Int64
        let email: String
        let name: String
        let active: Bool
        let isYou: Bool
        let roles: [ChoiceView]
        let roleError: String?
        let password: FieldView
        let errors: [ErrorSummaryItem]
    }

    func edit(_ context: RequestContext) throws -> Response {
        try renderEdit(context, user: try user(context), errors: FormErrors())
    }

    func changeRole(_ context: RequestContext) throws -> Response {
        var user = try user(context)
        guard let role = context.form["role"].flatMap(Role.init(rawValue:)) else {
            return try renderEdit(context, user: user, errors: FormErrors("role", "Choose a role: viewer, editor or admin."), status: 422)
        }
        let previous = user.role
        user.role = role
        return try save(user, context: context, action: "user.role_change", details: "\(previous.rawValue) → \(role.rawValue)",
                        message: "\(user.name) is now \(role.rawValue == "admin" ? "an" : "a") \(role.rawValue).")
    }

    func deactivate(_ context: RequestContext) throws -> Response {
        var user = try user(context)
        guard context.form["confirm"] == "yes" else {
            return try renderEdit(context, user: user, errors: FormErrors("confirm", "Tick the box to confirm the deactivation."), status: 422)
        }
        user.active = false
        return try save(user, context: context, action: "user.deactivate", details: "",
                        message: "\(user.name) can no longer sign in, and has been signed out.")
    }

    func activate(_ context: RequestContext) throws -> Response {
        var user = try user(context)
        user.active = true
        return try save(user, context: context, action: "user.activate", details: "", message: "\(user.name) can sign in again.")
    }

    func resetPassword(_ context: RequestContext) throws -> Response {
        let user = try user(context)
        do {
            try accounts.setPassword(user, to: context.form["password"] ?? "", actor: context.actor, now: context.now)
        } catch let problems as FormErrors {
            return try renderEdit(context, user: user, errors: problems, status: 422)
        }
        try services.flash(context, .success, "The password of \(user.name) has been changed.")
        return .redirect(to: "/users/\(user.id ?? 0)")
    }

    private func save(_ user: User, context: RequestContext, action: String, details: String, message: String) throws -> Response {
        do {
            try accounts.update(user, action: action, details: details, actor: context.actor, now: context.now)
        } catch let problems as FormErrors {
            let stored = try self.user(context)
            return try renderEdit(context, user: stored, errors: problems, status: 422)
        }
        try services.flash(context, .success, message)
        return .redirect(to: "/users/\(user.id ?? 0)")
    }

    private func user(_ context: RequestContext) throws -> User {
        guard let user = try services.database.users.find(id: try context.id("id")) else { throw HTTPError.notFound }
        return user
    }

    private func renderEdit(_ context: RequestContext, user: User, errors: FormErrors, status: Int = 200) throws -> Response {
        let model = EditUserForm(
            id: user.id ?? 0, email: user.email, name: user.name, active: user.active, isYou: user.id == context.user?.id,
            roles: Self.roleChoices(checked: user.role.rawValue),
            roleError: errors.message(for: "role") ?? errors.message(for: "confirm"),
            password: FieldView("password", label: "New password", type: "password", autocomplete: "new-password",
                                hint: "At least \(InputRules.minimumPasswordLength) characters.", errors: errors),
            errors: errors.summary)
        return try services.page(.editUser, title: user.name, model: model, context: context, status: status)
    }

    private static func roleChoices(checked: String) -> [ChoiceView] {
        let hints: [Role: String] = [
            .viewer: "Reads campaigns and reports.",
            .editor: "Composes, schedules and publishes campaigns.",
            .admin: "Everything, plus users, apps and API keys.",
        ]
        return Role.allCases.map {
            ChoiceView(name: "role", value: $0.rawValue, label: $0.title, hint: hints[$0], checked: $0.rawValue == checked)
        }
    }
}

/// Times as people read them. Stored times are UTC; the console shows UTC, labeled, until users pick a zone.
enum DisplayTime {
    static func date(_ date: Date) -> String {
        date.formatted(Date.VerbatimFormatStyle(
            format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits)", timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }

    static func dateTime(_ date: Date) -> String {
        date.formatted(Date.VerbatimFormatStyle(
            format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits) UTC",
            timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }
}
