import HeraldHTTP
import HeraldStorage

/// A handler gets the request's context and answers; it may throw `HTTPError` or a domain error.
public typealias Handler = @Sendable (RequestContext) throws -> Response

/// An API route's handler: it gets the key the router authenticated and found to carry the route's scope,
/// so it cannot answer without one.
public typealias KeyHandler = @Sendable (RequestContext, APIKey) throws -> Response

/// One route: a method, a path pattern (`/apps/{id}`, or a trailing `*` for a prefix) and who may reach it.
public struct Route: Sendable {
    /// What the router checks before the handler runs, with the handler that fits it.
    enum Endpoint: Sendable {
        case open(Access, Handler)
        case keyed(KeyRequirement, KeyHandler)
    }

    public let method: String
    public let pattern: String
    let endpoint: Endpoint
    /// Answers pages on the web origins the key's app allows (CORS), and refuses pages on others.
    public private(set) var answersWebOrigins = false
    /// Also takes the API key from the `key` query parameter, for `navigator.sendBeacon`, which cannot set
    /// headers; `Authorization` wins when both are sent.
    public private(set) var takesKeyFromQuery = false

    public init(_ method: String, _ pattern: String, _ access: Access, _ handler: @escaping Handler) {
        self.method = method
        self.pattern = pattern
        self.endpoint = .open(access, handler)
    }

    public init(_ method: String, _ pattern: String, _ key: KeyRequirement, _ handler: @escaping KeyHandler) {
        self.method = method
        self.pattern = pattern
        self.endpoint = .keyed(key, handler)
    }

    /// The key the route requires, or nil for a route open to `Access`.
    public var requiredKey: KeyRequirement? {
        if case .keyed(let requirement, _) = endpoint { requirement } else { nil }
    }

    func answeringWebOrigins() -> Route {
        var route = self
        route.answersWebOrigins = true
        return route
    }

    func takingKeyFromQuery() -> Route {
        var route = self
        route.takesKeyFromQuery = true
        return route
    }

    /// The access and the ways in, as the route table shows them.
    var accessDescription: String {
        let access = switch endpoint {
        case .open(let access, _): access.description
        case .keyed(let requirement, _): requirement.description
        }
        return access + (answersWebOrigins ? ", web origins" : "") + (takesKeyFromQuery ? ", key in query" : "")
    }

    fileprivate var segments: [Substring] { Router.segments(pattern) }
}

/// Finds the route for a method and path.
struct Router: Sendable {
    enum Match {
        case found(Route, parameters: [String: String])
        /// The path exists with other methods.
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    private let routes: [(route: Route, segments: [Substring])]
    /// Routes without parameters by method and path: most requests (the feed, events, pages) are
    /// found with one lookup instead of a scan of the table.
    private let exact: [String: [String: Route]]

    init(_ routes: [Route]) {
        self.routes = routes.map { ($0, $0.segments) }
        var exact: [String: [String: Route]] = [:]
        for route in routes where !route.pattern.contains("{") && !route.pattern.hasSuffix("*") {
            let path = "/" + route.segments.joined(separator: "/")
            // The first route in the table wins, as in the scan.
            if exact[path]?[route.method] == nil { exact[path, default: [:]][route.method] = route }
        }
        self.exact = exact
    }

    /// The route for `method` and `target`'s path. Segments are split before they are percent-decoded,
    /// so a parameter may hold an encoded `/` (an installation id such as `a%2Fb` is one segment).
    func match(method: String, target: String) -> Match {
        // HEAD is answered by the GET route; the adapter leaves the body out.
        let lookupMethod = method == "HEAD" ? "GET" : method
        // `%` is looked for by byte: Foundation's `contains` cost more than the rest of the route.
        let rawPath = String(Request.rawPath(of: target))
        if !rawPath.utf8.contains(UInt8(ascii: "%")), let route = exact[rawPath]?[lookupMethod] { return .found(route, parameters: [:]) }
        var requested: [Substring] = []
        for segment in Self.segments(rawPath) {
            guard let decoded = PercentEncoding.decode(segment, plusAsSpace: false) else { return .notFound }
            requested.append(Substring(decoded))
        }
        var allowed: [String] = []
        for (route, segments) in routes {
            guard let parameters = Self.bind(segments, to: requested) else { continue }
            if route.method == lookupMethod { return .found(route, parameters: parameters) }
            allowed.append(route.method)
        }
        if allowed.isEmpty { return .notFound }
        if allowed.contains("GET") { allowed.append("HEAD") }
        return .methodNotAllowed(allowed: allowed)
    }

    /// The non-empty parts of a path between `/`s, split by scalar: split by Character, a `/` followed by a
    /// combining mark (`/\u{301}abc`, a tag character) is one Character that is not `/`, and the segments
    /// around it run together.
    static func segments(_ path: String) -> [Substring] {
        path.unicodeScalars.split(separator: "/").map(Substring.init)
    }

    private static func bind(_ pattern: [Substring], to path: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in pattern.enumerated() {
            if segment == "*" {
                parameters["*"] = path[index...].joined(separator: "/")
                return parameters
            }
            guard index < path.count else { return nil }
            if segment.hasPrefix("{") && segment.hasSuffix("}") {
                parameters[String(segment.dropFirst().dropLast())] = String(path[index])
            } else if segment != path[index] {
                return nil
            }
        }
        return pattern.count == path.count ? parameters : nil
    }
}
