import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// First-run setup, login and logout.
struct AccountPages: Sendable {
    let services: Services

    func setupForm(_ context: RequestContext) throws -> Response {
        if try services.database.users.count() > 0 { return .redirect(to: "/login") }
        return try renderSetup(context, form: FormData(), errors: InputProblems())
    }

    func setup(_ context: RequestContext) throws -> Response {
        let form = context.form
        if try services.database.users.count() > 0 { return .redirect(to: VisitorNotice.alreadySetUp.loginPage) }
        var errors = Accounts.problems(email: form["email"] ?? "", name: form["name"] ?? "", password: form["password"] ?? "")
        if form["password"] != form["password_confirmation"] {
            errors.add("password_confirmation", Accounts.passwordsDiffer)
        }
        do {
            guard errors.isEmpty else { throw errors }
            let user = try services.accounts.createFirstAdmin(
                email: form["email"] ?? "", name: form["name"] ?? "", password: form["password"] ?? "",
                timeZone: Self.browserTimeZone(context), now: context.now)
            let localizer = services.localization.localizer(for: context.request, user: user)
            return try signIn(user, context: context, to: "/campaigns",
                              welcome: localizer("setup.welcome", ["name": Localizer.isolated(user.name)]))
        } catch let problems as InputProblems {
            return try renderSetup(context, form: form, errors: problems, status: 422)
        }
    }

    private func renderSetup(_ context: RequestContext, form: FormData, errors: InputProblems, status: Int = 200) throws -> Response {
        let localizer = context.localizer
        let errors = errors.localized(by: localizer)
        let model = FieldsForm(
            fields: [
                FieldView("name", label: localizer("accounts.setup.name"), value: form["name"] ?? "", autocomplete: "name", errors: errors),
                FieldView("email", label: localizer("accounts.email"), type: "email", value: form["email"] ?? "", autocomplete: "email",
                          errors: errors),
                FieldView("password", label: localizer("accounts.password"), type: "password", autocomplete: "new-password",
                          hint: localizer("accounts.password_hint", ["count": localizer.number(InputRules.minimumPasswordLength)]),
                          errors: errors),
                FieldView("password_confirmation", label: localizer("accounts.setup.password_again"), type: "password",
                          autocomplete: "new-password", errors: errors),
            ],
            errors: errors.summary)
        return try services.page(.setup, title: localizer("accounts.setup.title"), model: model, context: context, status: status)
    }

    struct LoginForm: Sendable {
        let fields: [FieldView]
        let next: String
        let error: String?
        let notice: String?
    }

    func loginForm(_ context: RequestContext) throws -> Response {
        if context.user != nil { return .redirect(to: safeNext(context.request.query["next"])) }
        return try renderLogin(
            context, email: "", next: context.request.query["next"] ?? "", error: nil,
            notice: VisitorNotice.named(in: context.request.query).map { context.localizer($0.messageKey) })
    }

    func login(_ context: RequestContext) throws -> Response {
        let email = (context.form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let password = context.form["password"] ?? ""
        let next = context.form["next"] ?? ""
        let configuration = services.configuration
        let throttle = LoginThrottle(store: services.database.loginThrottles, policy: configuration.loginThrottle)
        // No account's email holds a control character (`InputRules.emailProblem`): such an email is not
        // looked up nor counted as an account, as PostgreSQL cannot even compare one holding NUL.
        let possibleAccount = InputRules.controlCharacterProblem(email) == nil
        let user = possibleAccount ? try services.database.users.find(email: email) : nil

        // From a browser where this account signed in before, only that browser's failures count; from
        // anywhere else, the account's and the address's.
        let keys: [LoginThrottleKey]
        if let user, let browser = services.knownBrowsers.browser(fromCookie: context.request.cookies[KnownBrowsers.cookie], now: context.now),
           browser.userID == user.id {
            keys = [LoginThrottleKey(.browser, browser.id)]
        } else {
            let address = context.request.clientAddress(trustedProxies: configuration.trustedProxies)
            let addressKey = LoginThrottleKey(.address, address?.throttleSubject ?? "unknown")
            keys = possibleAccount ? [LoginThrottleKey(.account, email.lowercased()), addressKey] : [addressKey]
        }
        if let wait = try throttle.reserve(keys, now: context.now) {
            var response = try renderLogin(
                context, email: email, next: next, error: LoginThrottle.message(waiting: wait, context.localizer), status: 429)
            response.headers.set("Retry-After", LoginThrottle.retryAfter(wait))
            return response
        }
        guard let signedIn = services.accounts.authenticate(user, password: password) else {
            return try renderLogin(
                context, email: email, next: next,
                error: context.localizer("accounts.login.failed"), status: 401)
        }
        try throttle.succeeded(keys, now: context.now)
        guard signedIn.timeZone == nil else { return try signIn(signedIn, context: context, to: safeNext(next), welcome: nil) }
        let (stored, welcome) = try storeBrowserTimeZone(of: signedIn, context: context)
        return try signIn(stored, context: context, to: safeNext(next), welcome: welcome)
    }

    func logout(_ context: RequestContext) throws -> Response {
        if let session = context.session { try services.database.sessions.delete(tokenHash: session.tokenHash) }
        var response = Response.redirect(to: VisitorNotice.signedOut.loginPage)
        response.setCookie(.expired(Services.sessionCookie, secure: services.configuration.secureCookies))
        return response
    }

    /// Makes a new session with a new token (a session is only ever made here, so a session id planted
    /// in the browser beforehand is worthless), and ends the one the browser had, if any.
    private func signIn(_ user: User, context: RequestContext, to location: String, welcome: String?) throws -> Response {
        // A stored user always has an id.
        guard let userID = user.id else { throw HTTPError.notFound }
        let sessions = services.database.sessions
        if let old = context.session { try sessions.delete(tokenHash: old.tokenHash) }
        var created = try sessions.create(userID: userID, now: context.now, lifetime: services.configuration.sessionLifetime)
        if let welcome {
            created.session.flashKind = FlashKind.success.rawValue
            created.session.flashMessage = welcome
            try sessions.save(created.session)
        }
        var response = Response.redirect(to: location)
        let secure = services.configuration.secureCookies
        response.setCookie(SetCookie(name: Services.sessionCookie, value: created.token, secure: secure))
        response.setCookie(services.knownBrowsers.cookie(for: userID, now: context.now, secure: secure))
        return response
    }

    private func renderLogin(
        _ context: RequestContext, email: String, next: String, error: String?, notice: String? = nil, status: Int = 200
    ) throws -> Response {
        let localizer = context.localizer
        let model = LoginForm(
            fields: [
                FieldView("email", label: localizer("accounts.email"), type: "email", value: email, autocomplete: "username"),
                FieldView("password", label: localizer("accounts.password"), type: "password", autocomplete: "current-password"),
            ],
            next: next, error: error, notice: notice)
        return try services.page(.login, title: localizer("accounts.login.title"), model: model, context: context, status: status)
    }

    /// At a user's first sign-in, keeps the time zone the browser reported (UTC when it sent none) and
    /// says so, with where to change it.
    private func storeBrowserTimeZone(of user: User, context: RequestContext) throws -> (User, String) {
        var user = user
        user.timeZone = Self.browserTimeZone(context)
        user.updatedAt = context.now
        try services.database.users.update(
            user, ending: .none, line: .userZoneFromBrowser(email: user.email, timeZone: user.timeZone ?? "UTC"),
            actor: .user(id: user.id ?? 0, email: user.email), now: context.now)
        let localizer = services.localization.localizer(for: context.request, user: user)
        return (user, localizer("settings.time_zone_stored", ["zone": user.timeZone ?? "UTC"]))
    }

    /// The time zone the sign-in or setup form reported from the browser, or UTC.
    private static func browserTimeZone(_ context: RequestContext) -> String {
        SettingsPages.timeZoneName(context.form["time_zone"] ?? "") ?? "UTC"
    }

    /// Only local paths: an absolute or protocol-relative URL would send people off-site after login.
    /// Control characters are refused too: browsers drop tabs and newlines from a `Location`, so
    /// `/<tab>/evil.example` would become `//evil.example` (and a newline would break the header).
    private func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.hasPrefix("/\\"),
              !next.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return "/campaigns" }
        return next
    }
}

/// A message for a visitor, who has no stored session to keep a flash in: the redirect to the login page
/// names it in the query, and the page shows its fixed text (never text from the address).
enum VisitorNotice: String, CaseIterable {
    case signedOut = "signed_out"
    case alreadySetUp = "already_set_up"

    /// The notice's text in the catalogs (`notices.signed_out`).
    var messageKey: String { "notices." + rawValue }

    var loginPage: String { "/login?\(rawValue)=1" }

    static func named(in query: FormData) -> VisitorNotice? {
        allCases.first { query[$0.rawValue] != nil }
    }
}
