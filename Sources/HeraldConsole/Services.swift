import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Logging

/// What every feature needs: the database, the views, the configuration, the log, the in-memory feeds, keys
/// and allowed web origins, and the web client's scripts.
struct Services: Sendable {
    let database: any HeraldDatabase
    let views: Views
    let localization: Localization
    let configuration: ConsoleConfiguration
    let logger: Logger
    let feeds: FeedService
    let keys: KeyAuthenticator
    let crossOrigin: CrossOrigin
    let webClient: WebClient
    let visitorForms: VisitorForms
    let knownBrowsers: KnownBrowsers
    let registrationLimits: RegistrationLimits
    let push: PushService
    /// Registered installations a targeting reaches (`POST /api/v1/audience`).
    let audience: AudienceEstimator
    /// Deletes raw events past the retention period (run by the application; the System page shows its last run).
    let retention: Retention
    /// When this process started serving (the System page's uptime).
    let startedAt: Date

    static let sessionCookie = "herald_session"

    /// Account changes shared with the command line.
    var accounts: Accounts {
        Accounts(database: database, hasher: configuration.passwordHasher)
    }

    /// Renders `template` with `model` inside the layout, showing (and clearing) the session's flash.
    func page(
        _ template: Template, title: String, model: any Sendable, context: RequestContext, status: Int = 200
    ) throws -> Response {
        let csrf = context.csrfToken
        let localizer = context.localizer
        let strings = localizer.templateStrings
        let body = views.render(template, PageView(page: model, csrf: csrf, t: strings), language: localizer.language)
        let layout = LayoutView(
            title: title, body: body, t: strings, scriptStrings: localizer.scriptStrings, lang: localizer.language.rawValue, dir: localizer.language.direction,
            user: context.user.map { LayoutView.SignedInUser(email: $0.email, name: $0.name, role: localizer("roles." + $0.role.rawValue)) },
            navigation: navigation(for: context),
            flash: try takeFlash(context),
            csrf: csrf)
        return .html(views.render(.layout, layout, language: localizer.language), status: status)
    }

    /// Keeps a message for the next page this session sees (after a redirect). Visitors have no stored
    /// session: their redirects name a `VisitorNotice` in the address instead.
    func flash(_ context: RequestContext, _ kind: FlashKind, _ message: String) throws {
        guard var session = context.session else { return }
        session.flashKind = kind.rawValue
        session.flashMessage = message
        try unlessUnavailable("keep a message for the next page") { try database.sessions.save(session) }
    }

    private func takeFlash(_ context: RequestContext) throws -> LayoutView.Flash? {
        guard var session = context.session, let message = session.flashMessage else { return nil }
        let kind = session.flashKind ?? FlashKind.info.rawValue
        session.flashKind = nil
        session.flashMessage = nil
        try unlessUnavailable("clear a shown message") { try database.sessions.save(session) }
        return LayoutView.Flash(kind: kind, message: message, ariaRole: kind == FlashKind.error.rawValue ? "alert" : "status")
    }

    /// Runs a write that is only bookkeeping (session times, flash messages): when the database cannot
    /// take it (disk full, read-only), the page is still shown and the write is logged as skipped.
    func unlessUnavailable(_ what: String, _ write: () throws -> Void) throws {
        do {
            try write()
        } catch {
            guard let unavailable = StorageUnavailable(error) else { throw error }
            logger.warning("could not \(what): \(unavailable)")
        }
    }

    private func navigation(for context: RequestContext) -> [LayoutView.Navigation] {
        guard let role = context.user?.role else { return [] }
        let items: [(String, String, Role)] = [
            ("/campaigns", "layout.nav.campaigns", .viewer),
            ("/reports", "layout.nav.reports", .viewer),
            ("/apps", "layout.nav.apps", .admin),
            ("/users", "layout.nav.users", .admin),
            ("/audit", "layout.nav.audit", .admin),
            ("/system", "layout.nav.system", .admin),
        ]
        let path = context.request.path ?? ""
        return items.filter { role.includes($0.2) }.map { href, key, _ in
            LayoutView.Navigation(href: href, label: context.localizer(key), current: path == href || path.hasPrefix(href + "/"))
        }
    }
}
