import Foundation

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
    /// The most connections open at once; the server lowers it to what its descriptor limit allows
    /// (see `DescriptorBudget`). Slow clients are cut off by the deadlines below, but while they last
    /// each holds a connection: 1,000 of them must leave room for everyone else, so the ceiling is far
    /// above that. An idle connection costs the kernel a few KiB and libmicrohttpd its memory pool,
    /// touched only as far as the request reaches.
    public var connectionLimit: Int = 16_384
    /// The most connections one client address (an IPv4 address or an IPv6 /64) may hold; 0 for no
    /// limit. Behind a reverse proxy every connection comes from the proxy: turn it off there (0) and
    /// limit clients at the proxy. 256 leaves room for an office or a carrier's NAT full of browsers
    /// and apps, while one address alone cannot take more than a sliver of the connections.
    public var connectionsPerAddress: Int = 256
    /// Whether a connection over either limit takes the place of the connection (of its address, for the
    /// per-address limit) that has waited longest for a request, instead of being refused. Connections
    /// sending a request or waiting for its answer are never closed for it. For a listener a few known
    /// clients must always reach, such as the metrics listener: idle connections cannot keep them out.
    public var idleConnectionsGiveWay = false
    /// Seconds a connection may make no progress while its answer is sent before it is closed, so a
    /// client that stops reading frees its slot. (Receiving is bounded by the deadlines below.)
    public var connectionTimeoutSeconds: Int = 30
    /// How long a connection has to deliver a whole request head (request line and headers) after it
    /// opens or after its previous answer. A person's browser sends its head in one packet; 10 s is
    /// ample for a bad mobile link, and a client that trickles a header line every few seconds is cut
    /// off instead of holding its connection for as long as it likes.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// How long a body may take: this grace, plus one second for every `minimumBodyRate` bytes received
    /// (Apache's mod_reqtimeout rule). An event batch or a form arrives in well under a second; the grace
    /// covers a slow start, and the rate lets a large import go on as long as it keeps coming.
    public var requestBodyGrace: Duration = .seconds(10)
    /// Bytes per second a body must keep up on average after the grace. 1 KiB/s is far below any real
    /// link (a 1 MiB body may take 17 minutes) yet makes a client that sends a byte now and then pay for
    /// its connection with bandwidth.
    public var minimumBodyRate: Int = 1024
    /// MHD's pool per connection (request line, headers, read and write buffers); it is cleared after
    /// every request, so its size is paid per request: 64 KiB cost the feed about 1 µs of 20.
    public var connectionMemoryLimit: Int = 32 * 1024
    public var maxBodyBytes: Int = 1024 * 1024

    /// The listener's name in the metrics (`listener` label): the console and the metrics listener are
    /// counted apart.
    public var name: String = "console"

    public init() {}
}
