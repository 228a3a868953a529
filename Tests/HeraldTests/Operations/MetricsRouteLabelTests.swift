import HeraldHTTP
import Testing
@testable import HeraldConsole

/// The route label of the request metrics: the route's pattern, so that the number of series is the
/// number of routes, whatever paths clients send.
@Suite("Metrics: the route label")
struct MetricsRouteLabelTests {
    @Test("A parameterized route is labelled with its pattern, not the path; the query is not part of it")
    func parameterizedRouteGetsItsPattern() async throws {
        let app = try await TestApp()
        for id in ["42", "7", "99999"] {
            let (_, route) = app.application.dispatch(Request(method: "GET", target: "/campaigns/\(id)?tab=report"))
            #expect(route == "/campaigns/{id}")
        }
        #expect(app.application.dispatch(Request(method: "GET", target: "/api/v1/feed")).route == "/api/v1/feed")
    }

    @Test("Unknown paths, methods no route takes and addresses that are not UTF-8 all share one label")
    func unmatchedRequestsShareOneLabel() async throws {
        let app = try await TestApp()
        let requests = [
            Request(method: "GET", target: "/wp-admin/setup.php"),
            Request(method: "GET", target: "/campaigns/1/no/such/thing"),
            Request(method: "DELETE", target: "/api/v1/feed"),
            Request(method: "GET", target: "/%FF%FE"),
        ]
        for request in requests {
            let (response, route) = app.application.dispatch(request)
            #expect(route == RequestMetrics.unmatchedRoute, "\(request.method) \(request.target) answered \(response.status)")
        }
    }
}
