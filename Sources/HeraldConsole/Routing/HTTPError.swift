import HeraldDomain

/// An error a handler throws to answer with a status and a message meant for the person who sent the request.
public struct HTTPError: Error, Sendable, Equatable {
    public var status: Int
    public var message: String
    /// For invalid input: each problem with the JSON path it concerns.
    public var fields: [FieldProblem]

    public init(_ status: Int, _ message: String, fields: [FieldProblem] = []) {
        self.status = status
        self.message = message
        self.fields = fields
    }

    public static let notFound = HTTPError(404, "There is nothing at this address. Check the link, or go back to the campaigns.")
    public static let forbidden = HTTPError(403, "Your role does not allow this. Ask an admin if you need access.")
    public static let csrf = HTTPError(403, "This form expired or came from another site. Reload the page and submit it again.")
}
