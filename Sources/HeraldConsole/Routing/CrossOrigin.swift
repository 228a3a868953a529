import Foundation
import HeraldHTTP
import HeraldStorage

/// Every app's allowed web origins, kept in memory: each browser request to the feed or events asks
/// which apps allow its `Origin`. Rebuilt when this process commits a change to them (the database's
/// change counter, as the feed cache) or after `maxAge`, for changes another process made
/// (`herald app origin add` against the running server's database).
final class AllowedOrigins: Sendable {
    private struct Snapshot: Sendable {
        let apps: [String: Set<Int64>]
        let generation: Int
        let builtAt: Date
    }

    static let maxAge: TimeInterval = 30

    private let database: any HeraldDatabase
    private let snapshot = ReadMostly<Snapshot?>(nil)

    init(database: any HeraldDatabase) {
        self.database = database
    }

    /// The apps that allow pages on `origin` (normalized, as browsers send it); touches the database only to rebuild.
    func apps(allowing origin: String, now: Date) throws -> Set<Int64> {
        let generation = database.changes.current
        if let cached = snapshot.read({ $0 }), cached.generation == generation, now.timeIntervalSince(cached.builtAt) < Self.maxAge {
            return cached.apps[origin] ?? []
        }
        var apps: [String: Set<Int64>] = [:]
        for allowed in try database.apps.allOrigins() {
            apps[allowed.origin, default: []].insert(allowed.appID)
        }
        snapshot.write { $0 = Snapshot(apps: apps, generation: generation, builtAt: now) }
        return apps[origin] ?? []
    }
}

/// The answers to browsers on other origins (CORS) for the routes that take them (the feed and events):
/// pages on an origin some app allows get the CORS headers; a page whose origin the key's app does not
/// allow is refused, so a page elsewhere cannot spend an app's key through its visitors' browsers.
/// Requests without `Origin` (apps, scripts) and pages Herald serves itself (the demo page) pass.
struct CrossOrigin: Sendable {
    let origins: AllowedOrigins
    let trustedProxies: [AddressRange]

    static let allowedHeaders = "Authorization, Content-Type, If-None-Match, X-Installation-Id"
    static let exposedHeaders = "ETag, Retry-After"
    static let preflightMaxAgeSeconds = 600

    /// `OPTIONS` for a route taking `methods`: a browser's preflight, which carries no key, so an origin
    /// any app allows is answered and the request that follows is checked against its key's app.
    func preflight(methods: String) -> Handler {
        { context in
            let request = context.request
            var headers = HTTPHeaders([("Vary", "Origin")])
            guard let origin = request.headers["Origin"] else {
                headers.add("Allow", methods + ", OPTIONS")
                return Response(status: 204, headers: headers)
            }
            guard try !origins.apps(allowing: origin, now: context.now).isEmpty else {
                let refusal = HTTPError(403, "No app allows pages on \(Self.shown(origin)) to use its keys. Allow the origin on the app's page in the console (Web origins), or with `herald app origin add --app <id> <origin>`.")
                var response = Response.json(APIError.body(for: refusal, requestID: request.id), status: 403)
                response.headers.add("Vary", "Origin")
                return response
            }
            headers.add("Access-Control-Allow-Origin", origin)
            headers.add("Access-Control-Allow-Methods", methods)
            headers.add("Access-Control-Allow-Headers", Self.allowedHeaders)
            headers.add("Access-Control-Max-Age", String(Self.preflightMaxAgeSeconds))
            return Response(status: 204, headers: headers)
        }
    }

    /// Refuses a request sent by a page on another origin that the key's app does not allow.
    func check(_ request: Request, appID: Int64, now: Date) throws {
        guard let origin = request.headers["Origin"], origin != request.ownOrigin(trustedProxies: trustedProxies),
              try !origins.apps(allowing: origin, now: now).contains(appID) else { return }
        throw HTTPError(403, "Pages on \(Self.shown(origin)) may not use this app's keys. Allow the origin on the app's page in the console (Web origins), or with `herald app origin add --app \(appID) <origin>`.")
    }

    /// Adds `Vary: Origin` to every answer, and the CORS headers when another origin some app allows sent
    /// the request. A page on an origin that only other apps allow is refused by `check`; the headers let
    /// its script read that refusal (and the 401 of a revoked key) instead of seeing a network error.
    func decorate(_ response: inout Response, for request: Request, now: Date) {
        response.headers.set("Vary", response.headers["Vary"].map { $0 + ", Origin" } ?? "Origin")
        guard let origin = request.headers["Origin"], origin != request.ownOrigin(trustedProxies: trustedProxies),
              let apps = try? origins.apps(allowing: origin, now: now), !apps.isEmpty else { return }
        response.headers.set("Access-Control-Allow-Origin", origin)
        response.headers.set("Access-Control-Expose-Headers", Self.exposedHeaders)
    }

    /// The origin as an error message names it: only one that reads back as sent, so a refusal never
    /// echoes arbitrary header text.
    private static func shown(_ origin: String) -> String {
        if case .success(let parsed) = WebOrigin.parse(origin), parsed.text == origin { return origin }
        return "this page's origin"
    }
}

extension Request {
    /// The origin the browser sent this request to: `http://` and the `Host` header, or, on a connection
    /// from a trusted proxy, the scheme and host it forwards (`X-Forwarded-Proto`, `X-Forwarded-Host`,
    /// their first entries: the proxy the browser reached). Written as browsers write `Origin` (lower
    /// case, no default port); nil without a host.
    func ownOrigin(trustedProxies: [AddressRange]) -> String? {
        let proxied = isFromTrustedProxy(trustedProxies)
        let scheme = (proxied ? Self.firstEntry(headers["X-Forwarded-Proto"]) : nil)?.lowercased() ?? "http"
        guard var authority = reachedAuthority(trustedProxies: trustedProxies) else { return nil }
        let defaultPort = scheme == "https" ? ":443" : scheme == "http" ? ":80" : nil
        if let defaultPort, authority.hasSuffix(defaultPort) { authority.removeLast(defaultPort.count) }
        return scheme + "://" + authority
    }

    /// The authority (`host[:port]`) the client reached, in lower case: `Host`, or on a connection from a
    /// trusted proxy the first `X-Forwarded-Host` entry; nil without one.
    func reachedAuthority(trustedProxies: [AddressRange]) -> String? {
        let host = (isFromTrustedProxy(trustedProxies) ? Self.firstEntry(headers["X-Forwarded-Host"]) : nil) ?? headers["Host"]
        guard let authority = host?.trimmingSpaces.lowercased(), !authority.isEmpty else { return nil }
        return authority
    }

    private func isFromTrustedProxy(_ trustedProxies: [AddressRange]) -> Bool {
        guard !trustedProxies.isEmpty, let socket = IPAddress(remoteAddress) else { return false }
        return trustedProxies.contains { $0.contains(socket) }
    }

    private static func firstEntry(_ header: String?) -> String? {
        guard let first = header?.split(separator: ",", maxSplits: 1).first?.trimmingSpaces, !first.isEmpty else { return nil }
        return String(first)
    }
}
