import HeraldDomain
import HeraldStorage

/// An error a handler throws to answer with a status and a message meant for the person who sent the request.
public struct HTTPError: Error, Sendable, Equatable {
    public var status: Int
    public var message: String
    /// For invalid input: each problem with the JSON path it concerns.
    public var fields: [FieldProblem]
    /// For a condition that passes (503): when to try again, sent as `Retry-After`.
    public var retryAfterSeconds: Int?

    public init(_ status: Int, _ message: String, fields: [FieldProblem] = [], retryAfterSeconds: Int? = nil) {
        self.status = status
        self.message = message
        self.fields = fields
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// 503: the database cannot take the request now. `saving` for requests that change something.
    public static func unavailable(_ cause: StorageUnavailable, saving: Bool) -> HTTPError {
        let message = saving
            ? "Herald cannot save right now: \(cause.reason). Nothing was saved. Try again later; if it keeps happening, tell your admin."
            : "Herald cannot answer right now: \(cause.reason). Try again later; if it keeps happening, tell your admin."
        return HTTPError(503, message, retryAfterSeconds: cause.retryAfterSeconds)
    }

    public static let notFound = HTTPError(404, "There is nothing at this address. Check the link, or go back to the campaigns.")
    public static let forbidden = HTTPError(403, "Your role does not allow this. Ask an admin if you need access.")
    public static let csrf = HTTPError(403, "This form expired or came from another site. Reload the page and submit it again.")
}
