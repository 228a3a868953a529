import Foundation
import HeraldHTTP
import HeraldMicroHTTPD
import Logging
import Metrics
import Prometheus

/// `/metrics` in Prometheus's text format, on a listener of its own (`--metrics-port`): its own
/// threads and connection limit, so that load on the console cannot keep a scrape out, and a port
/// that can stay on the loopback or a private network while the console faces users.
struct MetricsListener {
    let registry: PrometheusCollectorRegistry
    private let residentMemory: Prometheus.Gauge

    /// Makes the registry and points swift-metrics at it: done once, by `herald serve` only.
    static func bootstrap() -> MetricsListener {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // SQLite times a statement with its own clock, to the millisecond: most land in the first bucket,
        // and the ones above it are those worth seeing (the default buckets start at 5 ms).
        factory.durationHistogramBuckets["herald_database_statement_duration_seconds"] = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(2),
        ]
        factory.durationHistogramBuckets["herald_group_commit_wait_seconds"] = [
            .microseconds(250), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        factory.valueHistogramBuckets["herald_group_commit_size"] = [1, 2, 4, 8, 16, 32, 64, 128, 256]
        MetricsSystem.bootstrap(factory)
        registry.makeGauge(descriptor: MetricNameDescriptor(
            namespace: "herald_process", metricName: "start_time", unitName: "seconds",
            helpText: "When the process started, in seconds since 1970."))
            .set(to: Date().timeIntervalSince1970)
        let residentMemory = registry.makeGauge(descriptor: MetricNameDescriptor(
            namespace: "herald_process", metricName: "resident_memory", unitName: "bytes",
            helpText: "Resident memory, read from /proc/self/statm at each scrape."))
        return MetricsListener(registry: registry, residentMemory: residentMemory)
    }

    /// The listener's limits: a few scrapers, never the console's thousands of connections. A scraper
    /// always gets in: connections that sent no request (24 idle ones from three loopback addresses used
    /// to fill the 16 places and keep Prometheus out) give their place to a new one, and are closed after
    /// 5 s without a whole request; an answer that makes no progress for 10 s is given up.
    static func serverConfiguration(host: String, port: UInt16) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.name = "metrics"
        configuration.host = host
        configuration.port = port
        configuration.threads = 1
        configuration.connectionLimit = 16
        configuration.connectionsPerAddress = 8
        configuration.idleConnectionsGiveWay = true
        configuration.requestHeadTimeout = .seconds(5)
        configuration.connectionTimeoutSeconds = 10
        configuration.maxBodyBytes = 1024
        return configuration
    }

    func respond(to request: Request) -> Response {
        guard request.rawPath == "/metrics" else {
            return Response(status: 404, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]), body: Array("Not found: this listener serves /metrics only.\n".utf8))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return Response(status: 405, headers: HTTPHeaders([("Allow", "GET, HEAD")]))
        }
        if let bytes = Self.residentBytes() { residentMemory.set(to: Double(bytes)) }
        var body: [UInt8] = []
        registry.emit(into: &body)
        return Response(status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8")]), body: body)
    }

    /// The second field of /proc/self/statm (resident pages) in bytes; nil where there is no /proc.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]), pages >= 0 else { return nil }
        let (bytes, overflow) = pages.multipliedReportingOverflow(by: sysconf(Int32(_SC_PAGESIZE)))
        return overflow ? nil : bytes
    }
}
