import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// The API's keys are checked by the router, from what each route declares, so no handler can forget them.
@Suite("API routes declare their key")
struct RouteAccessTests {
    /// The only API routes a request without a key reaches: browsers' CORS preflights, which carry no credentials.
    static func isPublic(_ route: Route) -> Bool { route.method == "OPTIONS" }

    static func apiRoutes(_ app: TestApp) -> [Route] {
        HeraldApplication.routes(services: app.application.services, staticFiles: app.application.staticFiles)
            .filter { $0.pattern.hasPrefix("/api/") }
    }

    /// The route's pattern with each parameter filled, so the router finds that route.
    static func target(_ route: Route) -> String {
        Router.segments(route.pattern).map { $0.hasPrefix("{") ? "1" : String($0) }.reduce("") { $0 + "/" + $1 }
    }

    @Test("Every API route but the preflights declares a key")
    func everyRouteDeclaresAKey() async throws {
        let app = try await TestApp()
        let routes = Self.apiRoutes(app)
        #expect(routes.count > 15)
        for route in routes where !Self.isPublic(route) {
            #expect(route.requiredKey != nil, "\(route.method) \(route.pattern) takes no key")
        }
        // Only `GET /api/v1/key`, which tells a key what it may do, takes a key of any scope.
        #expect(routes.filter { $0.requiredKey != nil && $0.requiredKey?.scope == nil }.map(\.pattern) == ["/api/v1/key"])
    }

    @Test("The router refuses every keyed API route without a key (401) and with a key lacking its scope (403)")
    func refusedBeforeTheHandler() async throws {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        // A live key without any of the scopes a route can ask for.
        let bare = try app.database.apiKeys.create(appID: shop.id, name: "bare", scopes: [], actor: .commandLine, now: app.clock.now)
        for route in Self.apiRoutes(app) {
            guard let requirement = route.requiredKey else { continue }
            let target = Self.target(route)
            let anonymous = app.respond(Request(method: route.method, target: target))
            #expect(anonymous.status == 401, "\(route.method) \(target)")
            let body = try JSONSerialization.jsonObject(with: Data(anonymous.body)) as? [String: [String: Any]]
            #expect(body?["error"]?["code"] as? String == "unauthorized", "\(route.method) \(target)")

            let unscoped = app.respond(Request(method: route.method, target: target, headers: HTTPHeaders([("Authorization", "Bearer \(bare.secret)")])))
            if let scope = requirement.scope {
                #expect(unscoped.status == 403, "\(route.method) \(target)")
                #expect(String(decoding: unscoped.body, as: UTF8.self).contains("lacks the `\(scope.rawValue)` scope"))
            } else {
                #expect(unscoped.status == 200, "\(route.method) \(target)")
            }
        }
    }
}
