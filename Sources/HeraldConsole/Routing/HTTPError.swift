import HeraldDomain
import HeraldStorage

/// An error a handler throws to answer with a status and a message meant for the person who sent the request.
/// `message` is English, as the JSON API answers; `phrase`, when there is one, is what a browser's error
/// page says instead, in the reader's language.
public struct HTTPError: Error, Sendable, Equatable {
    public var status: Int
    public var message: String
    /// For invalid input: each problem with the JSON path it concerns.
    public var fields: [FieldProblem]
    /// For a condition that passes (503): when to try again, sent as `Retry-After`.
    public var retryAfterSeconds: Int?
    /// The catalog key and arguments of `message`, used only when the error is rendered as a page.
    public var phrase: Phrase?

    public init(_ status: Int, _ message: String, fields: [FieldProblem] = [], retryAfterSeconds: Int? = nil) {
        self.status = status
        self.message = message
        self.fields = fields
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// An error whose page is translated: the API answers `phrase.english`.
    public init(_ status: Int, _ phrase: Phrase, fields: [FieldProblem] = [], retryAfterSeconds: Int? = nil) {
        self.init(status, phrase.english, fields: fields, retryAfterSeconds: retryAfterSeconds)
        self.phrase = phrase
    }

    /// 503: the database cannot take the request now. `saving` for requests that change something.
    public static func unavailable(_ cause: StorageUnavailable, saving: Bool) -> HTTPError {
        let key = "errors.unavailable." + (saving ? "saving_" : "answering_") + Self.causeKey(cause)
        return HTTPError(503, Phrase(key), retryAfterSeconds: cause.retryAfterSeconds)
    }

    private static func causeKey(_ cause: StorageUnavailable) -> String {
        switch cause {
        case .diskFull: "disk_full"
        case .readOnly: "read_only"
        case .diskError: "disk_error"
        case .cannotOpen: "cannot_open"
        case .busy: "busy"
        case .unreachable: "unreachable"
        }
    }

    public static let notFound = HTTPError(404, Phrase("errors.not_found"))
    public static let forbidden = HTTPError(403, Phrase("errors.forbidden"))
    public static let csrf = HTTPError(403, Phrase("errors.csrf"))
    public static let internalError = HTTPError(500, Phrase("errors.internal"))

    /// 422 for a JSON document that breaks rules: the message names every field and what is wrong with it.
    public static func invalid(_ problems: [FieldProblem]) -> HTTPError {
        let summary = problems.count == 1 ? "1 field is invalid" : "\(problems.count) fields are invalid"
        let details = problems.map { "\($0.path): \($0.message.hasSuffix(".") ? String($0.message.dropLast()) : $0.message)" }
        return HTTPError(422, "\(summary): \(details.joined(separator: "; ")).", fields: problems)
    }

    /// 405 for a method the address does not take.
    public static func methodNotAllowed(_ method: String) -> HTTPError {
        HTTPError(405, Phrase("errors.method_not_allowed", ["method": .text(method)]))
    }
}
