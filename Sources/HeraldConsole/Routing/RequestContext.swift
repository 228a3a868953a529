import Foundation
import HeraldHTTP
import HeraldStorage

/// A request with what the middleware learned about it: path parameters, session, user, key, form.
public struct RequestContext: Sendable {
    public let request: Request
    public internal(set) var parameters: [String: String] = [:]
    public internal(set) var session: Session?
    public internal(set) var user: User?
    public internal(set) var apiKey: APIKey?
    /// The token this browser's forms carry: its session's, or for a visitor one signed for their cookie.
    public internal(set) var csrfToken = ""
    /// The decoded fields of a form POST (empty for other requests).
    public internal(set) var form = FormData()
    /// The request's time, from the application's clock.
    public let now: Date
    /// The console's language and time zone for this request: the user's, else the browser's.
    public internal(set) var localizer = Localizer.untranslated

    /// The path parameter `name` as a database id; a missing or malformed one is a 404.
    public func id(_ name: String) throws -> Int64 {
        guard let value = parameters[name].flatMap(Int64.init) else { throw HTTPError.notFound }
        return value
    }

    /// Who is acting, for the audit log.
    public var actor: AuditActor {
        if let user, let id = user.id { return .user(id: id, email: user.email) }
        if let apiKey { return .key(id: apiKey.id, name: apiKey.name) }
        return .visitor
    }
}
