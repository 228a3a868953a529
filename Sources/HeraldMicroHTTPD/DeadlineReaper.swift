import Foundation
import Logging
import Metrics

/// A thread that, a few times a second, cuts off the connections past their deadline and reports them
/// and the connections refused since, in one line each time rather than one per connection. It also
/// records them as metrics, with the connections open: from here, no connection's path takes a lock
/// of its own for metrics.
final class DeadlineReaper: Sendable {
    /// Often enough that a deadline is kept to within a quarter second; a pass over 10,000 connections
    /// takes well under a millisecond.
    static let interval: TimeInterval = 0.25

    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(connections: ConnectionRegistry, listener: String, logger: Logger) {
        let dimensions = [("listener", listener)]
        let open = Gauge(label: "herald_http_open_connections", dimensions: dimensions)
        let slowClients = Counter(label: "herald_http_slow_clients_closed_total", dimensions: dimensions)
        let overTotal = Counter(label: "herald_http_connections_refused_total", dimensions: dimensions + [("reason", "connection_limit")])
        let overAddress = Counter(label: "herald_http_connections_refused_total", dimensions: dimensions + [("reason", "address_limit")])
        let gaveWay = Counter(label: "herald_http_idle_connections_closed_for_room_total", dimensions: dimensions)
        let thread = Thread { [stopped, finished] in
            while stopped.wait(timeout: .now() + Self.interval) == .timedOut {
                let (cutOff, refused) = connections.cutOffOverdue(now: MonotonicClock.now())
                open.record(connections.openConnections)
                slowClients.increment(by: cutOff)
                overTotal.increment(by: refused.overTotal)
                overAddress.increment(by: refused.overAddressLimit)
                gaveWay.increment(by: refused.gaveWay)
                if cutOff > 0 {
                    logger.notice("closed \(cutOff) connections that did not send their request in time")
                }
                if refused.overTotal > 0 {
                    logger.warning("refused \(refused.overTotal) connections: all \(connections.limit) are open")
                }
                if refused.gaveWay > 0 {
                    logger.notice("closed \(refused.gaveWay) idle connections to make room for new ones")
                }
                if refused.overAddressLimit > 0, let address = refused.example {
                    logger.notice("refused \(refused.overAddressLimit) connections over the per-address limit of \(connections.perAddressLimit), the last from \(address)")
                }
            }
            finished.signal()
        }
        thread.name = "herald-deadlines"
        thread.start()
    }

    func stop() {
        stopped.signal()
        finished.wait()
    }
}
