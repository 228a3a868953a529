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
    public var connectionLimit: Int = 1024
    /// Idle seconds before a connection is closed, so slow or silent clients free their slot.
    public var connectionTimeoutSeconds: Int = 30
    /// MHD's pool per connection (request line, headers, read and write buffers); it is cleared after
    /// every request, so its size is paid per request: 64 KiB cost the feed about 1 µs of 20.
    public var connectionMemoryLimit: Int = 32 * 1024
    public var maxBodyBytes: Int = 1024 * 1024

    public init() {}
}
