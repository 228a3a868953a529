import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/users`: admins create users, change roles, deactivate and reset passwords.
struct UserPages: Sendable {
    let services: Services

    struct UserRow: Sendable {
        let id: Int64
        let email: String
        let name: String
        let role: String
        let roleBadge: String
        let active: Bool
        let created: String
        let createdISO: String
        let isYou: Bool
    }

    struct UserList: Sendable {
        let users: [UserRow]
    }

    func index(_ context: RequestContext) throws -> Response {
        let localizer = context.localizer
        let rows = try services.database.users.all().map { user in
            UserRow(
                id: user.id ?? 0, email: user.email, name: user.name, role: localizer("roles." + user.role.rawValue),
                roleBadge: "badge-\(user.role.rawValue)", active: user.active,
                created: localizer.date(user.createdAt), createdISO: UTCTime.rfc3339(user.createdAt), isYou: isYou(user, context))
        }
        return try services.page(.users, title: localizer("users.index.title"), model: UserList(users: rows), context: context)
    }

    struct NewUserForm: Sendable {
        let fields: [FieldView]
        let roles: [ChoiceView]
        let roleError: String?
        let errors: [ErrorSummaryItem]
    }

    func new(_ context: RequestContext) throws -> Response {
        try renderNew(context, form: FormData(), errors: InputProblems())
    }

    func create(_ context: RequestContext) throws -> Response {
        let form = context.form
        do {
            let user = try services.accounts.create(
                email: form["email"] ?? "", name: form["name"] ?? "", role: form["role"].flatMap(Role.init(rawValue:)), password: form["password"] ?? "",
                actor: context.actor, now: context.now)
            try services.flash(context, .success, context.localizer(
                "users.flash.created", ["name": Localizer.isolated(user.name), "email": Localizer.isolated(user.email)]))
            return .redirect(to: "/users")
        } catch let problems as InputProblems {
            return try renderNew(context, form: form, errors: problems, status: 422)
        }
    }

    private func renderNew(_ context: RequestContext, form: FormData, errors: InputProblems, status: Int = 200) throws -> Response {
        let localizer = context.localizer
        let errors = errors.localized(by: localizer)
        let chosen = form["role"] ?? Role.editor.rawValue
        let model = NewUserForm(
            fields: [
                FieldView("name", label: localizer("users.new.name"), value: form["name"] ?? "", autocomplete: "off", errors: errors),
                FieldView("email", label: localizer("users.new.email"), type: "email", value: form["email"] ?? "", autocomplete: "off", errors: errors),
                FieldView("password", label: localizer("users.new.password"), type: "password", autocomplete: "new-password",
                          hint: localizer("users.new.password_hint", ["count": localizer.number(InputRules.minimumPasswordLength)]),
                          errors: errors),
            ],
            roles: Self.roleChoices(checked: chosen, localizer),
            roleError: errors.message(for: "role"),
            errors: errors.summary)
        return try services.page(.newUser, title: localizer("users.new.title"), model: model, context: context, status: status)
    }

    struct EditUserForm: Sendable {
        let id: Int64
        let email: String
        let name: String
        let active: Bool
        let isYou: Bool
        let roles: [ChoiceView]
        let roleError: String?
        let confirmError: String?
        let confirmLabel: String
        let password: FieldView
        let errors: [ErrorSummaryItem]
    }

    func edit(_ context: RequestContext) throws -> Response {
        try renderEdit(context, user: try user(context), errors: InputProblems())
    }

    func changeRole(_ context: RequestContext) throws -> Response {
        var user = try user(context)
        guard let role = context.form["role"].flatMap(Role.init(rawValue:)) else {
            return try renderEdit(context, user: user, errors: InputProblems("role", Accounts.chooseRole), status: 422)
        }
        let previous = user.role
        user.role = role
        let message = context.localizer("users.flash.role_" + role.rawValue, ["name": Localizer.isolated(user.name)])
        return try save(context, message: message) {
            try services.accounts.update(
                user, line: .userRoleChanged(email: user.email, from: previous, to: role), actor: context.actor, now: context.now)
            // An admin who stepped down can no longer see the users pages.
            return isYou(user, context) && role != .admin ? "/campaigns" : "/users/\(user.id ?? 0)"
        }
    }

    func deactivate(_ context: RequestContext) throws -> Response {
        let user = try user(context)
        if isYou(user, context) {
            return try renderEdit(context, user: user, errors: InputProblems("confirm", Self.cannotDeactivateYourself), status: 422)
        }
        guard context.form["confirm"] == "yes" else {
            let problem = Phrase("users.errors.confirm_deactivation")
            return try renderEdit(context, user: user, errors: InputProblems("confirm", problem), status: 422)
        }
        return try save(context, message: context.localizer("users.flash.deactivated", ["name": Localizer.isolated(user.name)])) {
            try services.accounts.deactivate(user, actor: context.actor, now: context.now)
            return "/users/\(user.id ?? 0)"
        }
    }

    func activate(_ context: RequestContext) throws -> Response {
        var user = try user(context)
        user.active = true
        return try save(context, message: context.localizer("users.flash.activated", ["name": Localizer.isolated(user.name)])) {
            try services.accounts.update(user, line: .userChanged("user.activate", email: user.email), actor: context.actor, now: context.now)
            return "/users/\(user.id ?? 0)"
        }
    }

    func resetPassword(_ context: RequestContext) throws -> Response {
        let user = try user(context)
        if isYou(user, context) {
            return try renderEdit(context, user: user, errors: InputProblems("password", Self.resetYourOwnPassword), status: 422)
        }
        return try save(context, message: context.localizer("users.flash.password_reset", ["name": Localizer.isolated(user.name)])) {
            try services.accounts.resetPassword(of: user, to: context.form["password"] ?? "", actor: context.actor, now: context.now)
            return "/users/\(user.id ?? 0)"
        }
    }

    /// Runs `change`, which answers where to go next; a refusal re-renders the stored user's page with it.
    private func save(_ context: RequestContext, message: String, _ change: () throws -> String) throws -> Response {
        let location: String
        do {
            location = try change()
        } catch let problems as InputProblems {
            return try renderEdit(context, user: try user(context), errors: problems, status: 422)
        }
        try services.flash(context, .success, message)
        return .redirect(to: location)
    }

    private func isYou(_ user: User, _ context: RequestContext) -> Bool {
        user.id != nil && user.id == context.user?.id
    }

    /// Deactivating yourself would end the very session making the change, with nobody left to undo it.
    static let cannotDeactivateYourself = Phrase(
        "users.errors.deactivate_yourself")
    /// Your own password is changed where the current one is asked for, which keeps this session signed in.
    static let resetYourOwnPassword = Phrase(
        "users.errors.reset_your_own_password")

    private func user(_ context: RequestContext) throws -> User {
        guard let user = try services.database.users.find(id: try context.id("id")) else { throw HTTPError.notFound }
        return user
    }

    private func renderEdit(_ context: RequestContext, user: User, errors: InputProblems, status: Int = 200) throws -> Response {
        let localizer = context.localizer
        let errors = errors.localized(by: localizer)
        let model = EditUserForm(
            id: user.id ?? 0, email: user.email, name: user.name, active: user.active, isYou: isYou(user, context),
            roles: Self.roleChoices(checked: user.role.rawValue, localizer),
            roleError: errors.message(for: "role"),
            confirmError: errors.message(for: "confirm"),
            confirmLabel: localizer("users.edit.confirm_deactivate", ["email": Localizer.isolated(user.email)]),
            password: FieldView("password", label: localizer("users.edit.new_password"), type: "password", autocomplete: "new-password",
                                hint: localizer("users.edit.password_hint", ["count": localizer.number(InputRules.minimumPasswordLength)]),
                                errors: errors),
            errors: errors.summary)
        return try services.page(.editUser, title: user.name, model: model, context: context, status: status)
    }

    private static func roleChoices(checked: String, _ localizer: Localizer) -> [ChoiceView] {
        Role.allCases.map {
            ChoiceView(name: "role", value: $0.rawValue, label: localizer("roles." + $0.rawValue),
                       hint: localizer("roles.hints." + $0.rawValue), checked: $0.rawValue == checked)
        }
    }
}
