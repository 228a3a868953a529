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
        let key = RequestSeries.Key(method: knownMethods.contains(method) ? method : "other", route: route, status: status)
        let series = RequestSeries.made.read({ $0[key] }) ?? RequestSeries.make(key)
        series.count.increment()
        series.duration.record(duration: duration)
    }

    /// A feed answer: 200 with the body, or 304 when the client's copy is current.
    static func recordFeed(notModified: Bool) {
        (notModified ? FeedSeries.notModified : FeedSeries.ok).counter.increment()
    }

    /// The outcome of one event batch, by event.
    static func recordEvents(accepted: Int, duplicates: Int, rejected: Int) {
        for (outcome, count) in [("accepted", accepted), ("duplicate", duplicates), ("rejected", rejected)] where count > 0 {
            Counter(label: "herald_events_total", dimensions: [("outcome", outcome)]).increment(by: count)
        }
    }
}

/// A request series' counter and timer, made once per method, route and status: made per request, they
/// cost a class each and the metrics factory's lock on the feed's path. swift-metrics' `Counter` and `Timer`
/// hold only their label, dimensions and a `Sendable` handler, never changed, so threads may share them.
private struct RequestSeries: @unchecked Sendable {
    struct Key: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    /// Far more than the routes, methods and statuses the console answers with; past it they are made again.
    static let maxKept = 4096
    static let made = ReadMostly<[Key: RequestSeries]>([:])

    let count: Counter
    let duration: Timer

    static func make(_ key: Key) -> RequestSeries {
        let series = RequestSeries(
            count: Counter(label: "herald_http_requests_total",
                           dimensions: [("method", key.method), ("route", key.route), ("status", String(key.status))]),
            duration: Timer(label: "herald_http_request_duration_seconds", dimensions: [("route", key.route)]))
        made.write { kept in
            if kept.count >= maxKept { kept.removeAll(keepingCapacity: true) }
            kept[key] = series
        }
        return series
    }
}

/// The feed's two answer counters, made at their first use (after `herald serve` bootstrapped the metrics).
private struct FeedSeries: @unchecked Sendable {
    let counter: Counter

    static let ok = FeedSeries(counter: Counter(label: "herald_feed_answers_total", dimensions: [("status", "200")]))
    static let notModified = FeedSeries(counter: Counter(label: "herald_feed_answers_total", dimensions: [("status", "304")]))
}
