import CMicroHTTPD
import Foundation
import HeraldHTTP
import Logging
import Synchronization

public enum HTTPServerError: Error, CustomStringConvertible {
    case cannotStart(host: String, port: UInt16)

    public var description: String {
        switch self {
        case .cannotStart(let host, let port):
            "cannot listen on \(host):\(port): the address is not a literal IP address, or the port is in use"
        }
    }
}

/// Serves HTTP with libmicrohttpd: one event loop per request thread, all accepting from one
/// listening socket; each request is handed to `handler` on its loop's thread.
public final class HTTPServer: Sendable {
    private let context: ServerContext
    private let running = Mutex<Running?>(nil)

    private struct Running {
        let loops: [EventLoop]
        let reaper: DeadlineReaper
        let port: UInt16
    }

    /// Sizes the connection limit from the descriptor limit, which it raises (see `DescriptorBudget`).
    public init(configuration: HTTPServerConfiguration, logger: Logger, handler: @escaping @Sendable (Request) -> Response) {
        let capacity = DescriptorBudget.connectionCapacity(
            descriptors: DescriptorBudget.raiseSoftLimit(), threads: max(1, configuration.threads))
        let limit = max(1, min(configuration.connectionLimit, capacity))
        context = ServerContext(configuration: configuration, connectionLimit: limit, logger: logger, handler: handler)
    }

    /// The port the server listens on (the chosen one when started on port 0).
    public var port: UInt16 {
        running.withLock { $0?.port ?? 0 }
    }

    /// The most connections the server keeps open at once: the configured limit, or less when the
    /// descriptor limit does not leave room for it.
    public var connectionLimit: Int {
        context.connections.limit
    }

    public func start() throws {
        let configuration = context.configuration
        let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
        let listening = herald_listen(host, configuration.port, SOMAXCONN)
        guard listening >= 0 else { throw HTTPServerError.cannotStart(host: host, port: configuration.port) }
        defer { close(listening) }  // each loop listens on its own copy
        var loops: [EventLoop] = []
        for index in 0..<max(1, configuration.threads) {
            let copy = dup(listening)
            guard copy >= 0, let loop = EventLoop(listeningSocket: copy, context: EventLoop.Context(index: index, server: context)) else {
                loops.forEach { $0.discard() }
                throw HTTPServerError.cannotStart(host: host, port: configuration.port)
            }
            loops.append(loop)
        }
        loops.forEach { $0.run() }
        let reaper = DeadlineReaper(connections: context.connections, listener: configuration.name, logger: context.logger)
        running.withLock { $0 = Running(loops: loops, reaper: reaper, port: herald_socket_port(listening)) }
    }

    /// Stops accepting connections, lets requests in flight finish (up to `gracePeriod`), then stops.
    public func shutdown(gracePeriod: Duration = .seconds(10)) {
        guard let stopping = running.withLock({ current -> Running? in
            defer { current = nil }
            return current
        }) else { return }
        EventLoop.quiesce(stopping.loops)
        let deadline = ContinuousClock.now + gracePeriod
        while context.requestsInFlight.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        stopping.loops.forEach { $0.stop() }
        stopping.reaper.stop()
    }

    deinit {
        shutdown(gracePeriod: .zero)
    }
}

/// What the C callbacks reach through their `cls` pointer.
final class ServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let logger: Logger
    let handler: @Sendable (Request) -> Response
    let connections: ConnectionRegistry
    let requestsInFlight = Atomic<Int>(0)

    init(configuration: HTTPServerConfiguration, connectionLimit: Int, logger: Logger, handler: @escaping @Sendable (Request) -> Response) {
        self.configuration = configuration
        self.logger = logger
        self.handler = handler
        connections = ConnectionRegistry(
            limit: connectionLimit, perAddressLimit: configuration.connectionsPerAddress,
            deadlines: RequestDeadlines(configuration), idleGiveWay: configuration.idleConnectionsGiveWay)
    }
}

/// State of one request across the access handler's calls; lives in MHD's `req_cls`.
final class RequestState {
    let target: String
    /// The address of the byte after the target in libmicrohttpd's read buffer when the request line
    /// arrived: a NUL there that came before the version means the client's NUL cut the target short.
    let targetEnd: UInt
    /// The connection's deadlines; nil only for a connection the registry never saw start.
    let connection: ConnectionRecord?
    var headersSeen = false
    var headers = HTTPHeaders()
    var bodyStarted: UInt64 = 0
    var bodyBytesReceived = 0
    var body: [UInt8] = []
    var bodyTooLarge = false

    init(target: String, targetEnd: UInt, connection: ConnectionRecord?) {
        self.target = target
        self.targetEnd = targetEnd
        self.connection = connection
    }
}
