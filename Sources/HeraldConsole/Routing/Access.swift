import HeraldDomain

/// Who may reach a route. Every route declares one, in `Routes.swift`.
public enum Access: Sendable, Equatable {
    /// No session, no checks: health probes and static files.
    case anyone
    /// A browser page open to signed-out visitors (setup, login); forms carry CSRF tokens.
    case visitor
    /// A signed-in user with at least this role.
    case signedIn(Role)
    /// An API request with a key; nil accepts any live key, otherwise the key needs this scope.
    case apiKey(APIScope?)

    /// How the route table shows it.
    public var description: String {
        switch self {
        case .anyone: "anyone"
        case .visitor: "visitor"
        case .signedIn(let role): role.rawValue
        case .apiKey(let scope): scope.map { "key \($0.rawValue)" } ?? "any key"
        }
    }
}
