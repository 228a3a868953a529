import CMicroHTTPD
import Foundation
import HeraldHTTP
import Logging
import Synchronization

/// Limits and addresses of the HTTP server.
public struct HTTPServerConfiguration: Sendable {
    /// An IPv4 or IPv6 literal; `localhost` means 127.0.0.1.
    public var host: String = "127.0.0.1"
    /// 0 binds any free port; read it back from `HTTPServer.port`.
    public var port: UInt16 = 8080
    /// Handlers block on the database (a write waits for the lock and the fsync, a report reads for
    /// tens of milliseconds), and each thread serves its own connections: twice as many threads as
    /// cores keep one slow request from holding up the others on its thread and let concurrent event
    /// batches share a commit. More costs latency: on 2 cores, 8 threads put the feed's p99 at 35 ms
    /// (the scheduler's time slices), 4 threads at 3 ms.
    public var threads: Int = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    public var connectionLimit: Int = 1024
    /// Idle seconds before a connection is closed, so slow or silent clients free their slot.
    public var connectionTimeoutSeconds: Int = 30
    /// MHD's pool per connection (request line, headers, read and write buffers); it is cleared after
    /// every request, so its size is paid per request: 64 KiB cost the feed about 1 µs of 20.
    public var connectionMemoryLimit: Int = 32 * 1024
    public var maxBodyBytes: Int = 1024 * 1024

    public init() {}
}

public enum HTTPServerError: Error, CustomStringConvertible {
    case cannotStart(host: String, port: UInt16)

    public var description: String {
        switch self {
        case .cannotStart(let host, let port):
            "cannot listen on \(host):\(port): the address is not a literal IP address, or the port is in use"
        }
    }
}

/// Serves HTTP with libmicrohttpd's thread pool; each request is handed to `handler` on a pool thread.
public final class HTTPServer: Sendable {
    private let context: ServerContext
    private let daemon = Mutex<DaemonHandle?>(nil)

    public init(configuration: HTTPServerConfiguration, logger: Logger, handler: @escaping @Sendable (Request) -> Response) {
        context = ServerContext(configuration: configuration, logger: logger, handler: handler)
    }

    /// The port the server listens on (the chosen one when started on port 0).
    public var port: UInt16 {
        daemon.withLock { $0.map { herald_mhd_bound_port($0.pointer) } ?? 0 }
    }

    public func start() throws {
        let configuration = context.configuration
        let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_USE_ITC.rawValue
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        let started = herald_mhd_start(
            flags, host, configuration.port,
            UInt32(configuration.threads), UInt32(configuration.connectionLimit),
            UInt32(configuration.connectionTimeoutSeconds), configuration.connectionMemoryLimit,
            accessHandler, contextPointer,
            requestCompleted, contextPointer,
            requestStarted, contextPointer)
        guard let started else { throw HTTPServerError.cannotStart(host: host, port: configuration.port) }
        daemon.withLock { $0 = DaemonHandle(pointer: started) }
    }

    /// Stops accepting connections, lets requests in flight finish (up to `gracePeriod`), then stops.
    public func shutdown(gracePeriod: Duration = .seconds(10)) {
        guard let running = daemon.withLock({ current -> DaemonHandle? in
            defer { current = nil }
            return current
        })?.pointer else { return }
        let listeningSocket = MHD_quiesce_daemon(running)
        let deadline = ContinuousClock.now + gracePeriod
        while context.requestsInFlight.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        MHD_stop_daemon(running)
        if listeningSocket >= 0 { close(listeningSocket) }
    }

    deinit {
        shutdown(gracePeriod: .zero)
    }
}

/// The daemon pointer; MHD's daemon calls are thread-safe, and the mutex guards start and stop.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// What the C callbacks reach through their `cls` pointer.
final class ServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let logger: Logger
    let handler: @Sendable (Request) -> Response
    let requestsInFlight = Atomic<Int>(0)

    init(configuration: HTTPServerConfiguration, logger: Logger, handler: @escaping @Sendable (Request) -> Response) {
        self.configuration = configuration
        self.logger = logger
        self.handler = handler
    }
}

/// State of one request across the access handler's calls; lives in MHD's `req_cls`.
final class RequestState {
    let target: String
    var headersSeen = false
    var body: [UInt8] = []
    var bodyTooLarge = false

    init(target: String) {
        self.target = target
    }
}
