import Metrics

/// The console's and API's metrics, recorded through swift-metrics: `herald serve --metrics-port`
/// exports them in Prometheus's format; anywhere else (tests, other commands) nothing is bootstrapped
/// and they cost a no-op call.
enum RequestMetrics {
    /// The route label of a request no route took (404, 405, an address that is not UTF-8).
    static let unmatchedRoute = "unmatched"

    /// The methods the routes use; any other is counted as `other`, so that a client cannot make new series.
    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// One answered request: a count and its time, by method, route pattern and status code.
    static func record(method: String, route: String, status: Int, duration: Duration) {
        let dimensions = [
            ("method", knownMethods.contains(method) ? method : "other"),
            ("route", route),
            ("status", String(status)),
        ]
        Counter(label: "herald_http_requests_total", dimensions: dimensions).increment()
        Timer(label: "herald_http_request_duration_seconds", dimensions: [("route", route)]).record(duration: duration)
    }

    /// A feed answer: 200 with the body, or 304 when the client's copy is current.
    static func recordFeed(status: Int) {
        Counter(label: "herald_feed_answers_total", dimensions: [("status", String(status))]).increment()
    }

    /// The outcome of one event batch, by event.
    static func recordEvents(accepted: Int, duplicates: Int, rejected: Int) {
        for (outcome, count) in [("accepted", accepted), ("duplicate", duplicates), ("rejected", rejected)] where count > 0 {
            Counter(label: "herald_events_total", dimensions: [("outcome", outcome)]).increment(by: count)
        }
    }
}
