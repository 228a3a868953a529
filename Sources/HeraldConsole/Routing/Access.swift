import HeraldDomain

/// Who may reach a route that takes no API key. Every route declares one, in `Routes.swift`.
public enum Access: Sendable, Equatable {
    /// No session, no checks: health probes, static files and the API's CORS preflights.
    case anyone
    /// A browser page open to signed-out visitors (setup, login); forms carry CSRF tokens.
    case visitor
    /// A signed-in user with at least this role.
    case signedIn(Role)

    /// How the route table shows it.
    public var description: String {
        switch self {
        case .anyone: "anyone"
        case .visitor: "visitor"
        case .signedIn(let role): role.rawValue
        }
    }
}

/// The API key a route requires, declared in `Routes.swift` as `.apiKey(.feedRead)`: the router
/// authenticates it and checks its scope before the handler runs, and hands the handler the key.
public struct KeyRequirement: Sendable, Equatable {
    /// The scope the key needs; nil accepts any live key.
    public let scope: APIScope?

    public static func apiKey(_ scope: APIScope?) -> KeyRequirement { KeyRequirement(scope: scope) }

    /// How the route table shows it.
    public var description: String { scope.map { "key \($0.rawValue)" } ?? "any key" }
}
