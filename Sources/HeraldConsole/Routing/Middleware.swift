import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

extension HeraldApplication {
    /// Matches the route, then runs the checks its access asks for, then the handler. Also returns the
    /// route's pattern (`/campaigns/{id}`), or `unmatched`, as the metrics' label: the raw path would
    /// give every campaign and every scanner's guess a series of its own.
    func dispatch(_ request: Request) -> (response: Response, route: String) {
        guard let path = request.path else {
            return (errorResponse(
                HTTPError(400, Phrase("errors.address_not_utf8")), api: false,
                context: RequestContext(request: request, now: services.configuration.clock())), RequestMetrics.unmatchedRoute)
        }
        let api = path.hasPrefix("/api/")
        switch router.match(method: request.method, target: request.target) {
        case .notFound:
            return (errorResponse(.notFound, api: api, context: RequestContext(request: request, now: services.configuration.clock())),
                    RequestMetrics.unmatchedRoute)
        case .methodNotAllowed(let allowed):
            var response = errorResponse(
                .methodNotAllowed(request.method), api: api, context: RequestContext(request: request, now: services.configuration.clock()))
            response.headers.set("Allow", allowed.joined(separator: ", "))
            return (response, RequestMetrics.unmatchedRoute)
        case .found(let route, let parameters):
            var context = RequestContext(request: request, now: services.configuration.clock())
            context.parameters = parameters
            var response = answer(context, route: route, path: path, api: api)
            if route.answersWebOrigins { services.crossOrigin.decorate(&response, for: request, now: context.now) }
            return (response, route.pattern)
        }
    }

    /// Runs the checks `route`'s access asks for, then its handler; errors become error answers.
    private func answer(_ context: RequestContext, route: Route, path: String, api: Bool) -> Response {
        let request = context.request
        do {
            switch route.endpoint {
            case .open(.anyone, let handler):
                return try handler(context)
            case .open(let access, let handler):
                guard consoleHosts.admit(request) else { throw Self.misdirected(request) }
                return try browserPage(context, access: access, handler: handler)
            case .keyed(let requirement, let handler):
                return try authenticateKey(context, requirement: requirement, route: route, handler: handler)
            }
        } catch {
            if let mapped = HTTPError(domain: error) {
                return errorResponse(mapped, api: api, context: context)
            }
            services.logger.error("\(request.method) \(path) failed: \(error)", metadata: ["request_id": .string(request.id)])
            if let unavailable = StorageUnavailable(error) {
                services.database.unavailability.record(unavailable, at: context.now)
                let saving = request.method != "GET" && request.method != "HEAD"
                return errorResponse(.unavailable(unavailable, saving: saving), api: api, context: context)
            }
            return errorResponse(.internalError, api: api, context: context)
        }
    }

    /// The 421 for a console page asked for under a host it does not answer at (`ConsoleHosts`).
    private static func misdirected(_ request: Request) -> HTTPError {
        let variable = "HERALD_CONSOLE_HOSTS"
        return HTTPError(421, Phrase(
            "errors.misdirected", ["variable": .text(variable)]))
    }

    /// The one place an API key is read and checked: its 401s and 403s are answered here, before any handler.
    private func authenticateKey(_ context: RequestContext, requirement: KeyRequirement, route: Route, handler: KeyHandler) throws -> Response {
        var context = context
        let secret: String
        if let header = context.request.headers["Authorization"] {
            guard header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else {
                throw HTTPError(401, "Send an API key as `Authorization: Bearer <key>`.")
            }
            secret = header.dropFirst(7).trimmingSpaces
        } else if route.takesKeyFromQuery, let query = context.request.query["key"], !query.isEmpty {
            secret = query
        } else {
            throw HTTPError(401, route.takesKeyFromQuery
                ? "Send an API key as `Authorization: Bearer <key>`, or, from `navigator.sendBeacon`, as the `key` query parameter."
                : "Send an API key as `Authorization: Bearer <key>`.")
        }
        guard let key = try services.keys.authenticate(secret: secret, now: context.now) else {
            throw HTTPError(401, "This API key is unknown or has been revoked.")
        }
        if let scope = requirement.scope, !key.scopes.contains(scope) {
            throw HTTPError(403, "This API key lacks the `\(scope.rawValue)` scope.")
        }
        if route.answersWebOrigins { try services.crossOrigin.check(context.request, appID: key.appID, now: context.now) }
        context.apiKey = key
        return try handler(context, key)
    }

    private func browserPage(_ context: RequestContext, access: Access, handler: Handler) throws -> Response {
        var context = context
        // Only pages have words: the feed, events and the rest of the API never read Accept-Language.
        context.localizer = services.localization.localizer(for: context.request, user: nil)
        let sessions = services.database.sessions
        var visitorCookie: SetCookie?
        let configuration = services.configuration

        if let live = try services.liveSession(of: context.request, now: context.now) {
            if live.user.active {
                context.session = live.session
                context.user = live.user
                context.localizer = services.localization.localizer(for: context.request, user: live.user)
            } else {
                try sessions.delete(tokenHash: live.session.tokenHash)
            }
        }

        if !setupDone.load(ordering: .relaxed) {
            if try services.database.users.count() > 0 {
                setupDone.store(true, ordering: .relaxed)
            } else if context.request.path != "/setup" {
                return .redirect(to: "/setup")
            }
        }

        if case .signedIn(let role) = access {
            guard let user = context.user else {
                let next = context.request.method == "GET" ? "?next=" + PercentEncoding.encode(context.request.target) : ""
                return .redirect(to: "/login" + next)
            }
            guard user.role.includes(role) else { throw HTTPError.forbidden }
        }

        if let session = context.session {
            context.csrfToken = session.csrfToken
        } else {
            // A visitor's token is signed, not stored: page views by anyone write nothing.
            var visitorID = context.request.cookies[VisitorForms.cookie] ?? ""
            if !Secret.isToken(visitorID) {
                visitorID = Secret.random()
                visitorCookie = SetCookie(name: VisitorForms.cookie, value: visitorID, secure: configuration.secureCookies)
            }
            context.csrfToken = services.visitorForms.token(forVisitor: visitorID)
        }

        if context.request.method != "GET" && context.request.method != "HEAD" {
            do {
                context.form = try context.request.formFields()
            } catch .unsupportedMediaType {
                throw HTTPError(415, Phrase("errors.form_media_type"))
            } catch .invalidEncoding {
                throw HTTPError(400, Phrase("errors.form_not_utf8"))
            } catch .tooManyCombiningMarks {
                throw HTTPError(400, Phrase(
                    "errors.form_combining_marks", ["limit": .number(CombiningMarks.longestRun)]))
            } catch .malformedMultipart {
                throw HTTPError(400, Phrase("errors.form_malformed"))
            } catch .tooManyFields {
                throw HTTPError(413, Phrase(
                    "errors.form_too_many_fields",
                    ["count": .number(Request.maxFormFields), "pairs": .number(CampaignLimits.dataPairs), "triggers": .number(CampaignLimits.triggers)]))
            }
            guard let token = context.form["csrf_token"], Secret.constantTimeEquals(token, context.csrfToken) else {
                throw HTTPError.csrf
            }
        }

        if var session = context.session, context.now.timeIntervalSince(session.lastSeenAt) > 60 {
            session.lastSeenAt = context.now
            try services.unlessUnavailable("keep the session alive") { try sessions.save(session) }
            context.session = session
        }

        var response = try handler(context)
        if let visitorCookie { response.setCookie(visitorCookie) }
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// An error as JSON for the API (in English), or as a page for browsers (with the layout when signed
    /// in), in the reader's language.
    func errorResponse(_ error: HTTPError, api: Bool, context: RequestContext?) -> Response {
        var response: Response
        if api {
            response = .json(APIError.body(for: error, requestID: context?.request.id), status: error.status)
        } else {
            // A 503 is drawn without reading the session: the database that could not answer would only
            // make the page wait.
            let page = pageContext(for: context?.request ?? Request(method: "GET", target: "/"), readingSession: error.status != 503)
            let localizer = page.localizer
            let heading = Self.heading(for: error.status, localizer)
            let message = error.phrase.map { localizer($0) } ?? error.message
            let model = ErrorPage(
                status: localizer.number(error.status), heading: heading, message: message, signedIn: page.user != nil,
                requestID: context?.request.id ?? "")
            response = (try? services.page(.error, title: heading, model: model, context: page, status: error.status))
                ?? .text(error.message, status: error.status)
        }
        if let seconds = error.retryAfterSeconds { response.headers.set("Retry-After", String(seconds)) }
        return response
    }
}

extension Services {
    /// The session the request's cookie names with its user, unless it has expired or been idle too long.
    func liveSession(of request: Request, now: Date) throws -> SessionWithUser? {
        guard let token = request.cookies[Services.sessionCookie], let found = try database.sessions.find(token: token),
              found.session.expiresAt > now, now.timeIntervalSince(found.session.lastSeenAt) < configuration.sessionIdleTimeout else {
            return nil
        }
        return found
    }

    /// `context` as the signed-in user's (their language, time zone, the menu and its CSRF token), else a
    /// visitor's, for a page drawn outside the signed-in pages' checks: the session is only read, never
    /// extended, and a database that cannot answer leaves the page a visitor's.
    func readingSignedInUser(_ context: RequestContext) -> RequestContext {
        var context = context
        var user: User?
        if context.request.path?.hasPrefix("/api/") == false,
           let live = try? liveSession(of: context.request, now: context.now), live.user.active {
            user = live.user
            context.session = live.session
            context.user = live.user
            context.csrfToken = live.session.csrfToken
        }
        context.localizer = localization.localizer(for: context.request, user: user)
        return context
    }
}

extension HeraldApplication {
    /// The context an error page is drawn in: the signed-in user's, else a visitor's. A handler's error
    /// arrives with the context from before the session was read, and a 404 with none.
    func pageContext(for request: Request, readingSession: Bool) -> RequestContext {
        let context = RequestContext(request: request, now: services.configuration.clock())
        guard readingSession else {
            var visitor = context
            visitor.localizer = services.localization.localizer(for: request, user: nil)
            return visitor
        }
        return services.readingSignedInUser(context)
    }

    /// An error page's heading: the status's name in the reader's language (`errors.status.404`).
    static func heading(for status: Int, _ localizer: Localizer) -> String {
        let key = "errors.status.\(status)"
        return localizer.has(key) ? localizer(key) : localizer("errors.status.other", ["status": localizer.number(status)])
    }
}

struct ErrorPage: Sendable {
    let status: String
    let heading: String
    let message: String
    let signedIn: Bool
    /// Quoted to whoever runs Herald, it finds the request's log line.
    let requestID: String
}

/// The JSON error body every API answer uses: `{"error": {"code", "message", "fields", "requestId"}}`.
enum APIError {
    private struct Body: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
            let fields: [Field]?
            let requestId: String?
        }

        struct Field: Encodable {
            let path: String
            let message: String
        }

        let error: Detail
    }

    static func body(for error: HTTPError, requestID: String?) -> [UInt8] {
        let fields = error.fields.isEmpty ? nil : error.fields.map { Body.Field(path: $0.path, message: $0.message) }
        let body = Body(error: .init(
            code: code(for: error.status), message: error.message, fields: fields, requestId: requestID.flatMap { $0.isEmpty ? nil : $0 }))
        return Array((try? CampaignJSON.encoder().encode(body)) ?? Data())
    }

    static func code(for status: Int) -> String {
        switch status {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 409: "conflict"
        case 412: "precondition_failed"
        case 413: "payload_too_large"
        case 415: "unsupported_media_type"
        case 422: "invalid"
        case 429: "too_many_requests"
        case 503: "unavailable"
        default: "internal"
        }
    }
}
