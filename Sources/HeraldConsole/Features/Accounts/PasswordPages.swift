import HeraldHTTP
import HeraldStorage

/// `/account/password`: every signed-in user changes their own password.
struct PasswordPages: Sendable {
    let services: Services

    func form(_ context: RequestContext) throws -> Response {
        try render(context, errors: InputProblems())
    }

    func change(_ context: RequestContext) throws -> Response {
        // The route is for signed-in users only, so both are there.
        guard let user = context.user, let session = context.session else { throw HTTPError.forbidden }
        let form = context.form
        // Guesses at the current password from a stolen session are throttled like sign-ins.
        let throttle = LoginThrottle(store: services.database.loginThrottles, policy: services.configuration.loginThrottle)
        let keys = [LoginThrottleKey(.session, session.tokenHash)]
        if let wait = try throttle.reserve(keys, now: context.now) {
            var response = try render(context, errors: InputProblems("current_password", LoginThrottle.message(waiting: wait, context.localizer)), status: 429)
            response.headers.set("Retry-After", LoginThrottle.retryAfter(wait))
            return response
        }
        do {
            try services.accounts.changeOwnPassword(
                of: user, current: form["current_password"] ?? "", new: form["password"] ?? "",
                confirmation: form["password_confirmation"] ?? "", keeping: session, now: context.now)
        } catch let problems as InputProblems {
            if problems.message(for: "current_password") == nil { try throttle.succeeded(keys, now: context.now) }
            return try render(context, errors: problems, status: 422)
        }
        try throttle.succeeded(keys, now: context.now)
        try services.flash(context, .success, context.localizer("accounts.password_page.changed"))
        return .redirect(to: "/account/password")
    }

    /// Typed passwords are never sent back in the page.
    private func render(_ context: RequestContext, errors: InputProblems, status: Int = 200) throws -> Response {
        let localizer = context.localizer
        let errors = errors.localized(by: localizer)
        let model = FieldsForm(
            fields: [
                FieldView("current_password", label: localizer("accounts.password_page.current"), type: "password",
                          autocomplete: "current-password", errors: errors),
                FieldView("password", label: localizer("accounts.password_page.new"), type: "password", autocomplete: "new-password",
                          hint: localizer("accounts.password_hint", ["count": localizer.number(InputRules.minimumPasswordLength)]),
                          errors: errors),
                FieldView("password_confirmation", label: localizer("accounts.password_page.new_again"), type: "password",
                          autocomplete: "new-password", errors: errors),
            ],
            errors: errors.summary)
        return try services.page(.changePassword, title: localizer("accounts.password_page.title"), model: model, context: context, status: status)
    }
}
