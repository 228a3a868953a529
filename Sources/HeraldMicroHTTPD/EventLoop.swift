import CMicroHTTPD
import Foundation

/// One libmicrohttpd daemon and the thread that runs it; the server runs one per request thread, all
/// accepting from the same listening socket.
///
/// libmicrohttpd 0.9.75 runs its own threads (internal or pool) with a loop that, when one epoll_wait
/// returns its maximum of 128 events, waits again with the full timeout before handling any of them.
/// When a thread's connections close at once in a multiple of 128 (1,000 keep-alive clients leaving
/// together), it sleeps with the closes in hand until the idle timeout, and at its connection limit it
/// accepts nobody meanwhile. MHD_run never waits, so MHD's waits are all zero here and this loop does
/// the waiting, on MHD's epoll descriptor, with MHD's timeout.
final class EventLoop: Sendable {
    private let daemon: DaemonHandle
    private let index: Int
    /// Commands from other threads; the loop reads them between runs of the daemon, so the daemon is
    /// only ever touched by one thread at a time.
    private let commands: (read: Int32, write: Int32)
    private let done = DispatchSemaphore(value: 0)

    private enum Command: UInt8 {
        case quiesce = 1
        case stop = 2
    }

    /// Starts a daemon on `listeningSocket`, which it owns from then on; nil when MHD refuses.
    init?(listeningSocket: Int32, index: Int, server: ServerContext) {
        let configuration = server.configuration
        let serverPointer = Unmanaged.passUnretained(server).toOpaque()
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            close(listeningSocket)
            return nil
        }
        // Each loop takes its share of the connections, as MHD's thread pool did.
        guard let started = herald_mhd_start(
            listeningSocket, UInt32(configuration.connectionLimit / max(1, configuration.threads) + 1),
            UInt32(configuration.connectionTimeoutSeconds), configuration.connectionMemoryLimit,
            accessHandler, serverPointer,
            requestCompleted, serverPointer,
            requestStarted, serverPointer)
        else {
            close(pipe[0])
            close(pipe[1])
            return nil
        }
        daemon = DaemonHandle(pointer: started)
        self.index = index
        commands = (pipe[0], pipe[1])
    }

    func run() {
        let thread = Thread { [self] in loop() }
        thread.name = "herald-http-\(index)"
        thread.start()
    }

    /// Stops accepting and closes this loop's listening descriptor; connections go on.
    func quiesce() {
        send(.quiesce)
    }

    /// Ends the loop, then closes every connection and the daemon. Call `quiesce()` first.
    func stop() {
        send(.stop)
        MHD_stop_daemon(daemon.pointer)
        close(commands.read)
        close(commands.write)
    }

    /// Stops a daemon whose loop never ran (a later one failed to start).
    func discard() {
        let listening = MHD_quiesce_daemon(daemon.pointer)
        if listening >= 0 { close(listening) }
        MHD_stop_daemon(daemon.pointer)
        close(commands.read)
        close(commands.write)
    }

    private func send(_ command: Command) {
        var byte = command.rawValue
        while Glibc.write(commands.write, &byte, 1) < 0 && errno == EINTR {}
        done.wait()
    }

    private func loop() {
        let epoll = herald_mhd_epoll_fd(daemon.pointer)
        var descriptors = [pollfd(fd: epoll, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: commands.read, events: Int16(POLLIN), revents: 0)]
        while true {
            var timeout: UInt64 = 0
            let wait = MHD_get_timeout(daemon.pointer, &timeout) == .YES ? Int32(clamping: timeout) : -1
            if poll(&descriptors, 2, wait) < 0 { continue }  // interrupted by a signal
            if descriptors[1].revents != 0 {
                var byte: UInt8 = 0
                guard Glibc.read(commands.read, &byte, 1) == 1 else { continue }
                switch Command(rawValue: byte) {
                case .quiesce:
                    let listening = MHD_quiesce_daemon(daemon.pointer)
                    if listening >= 0 { close(listening) }
                    done.signal()
                case .stop:
                    done.signal()
                    return
                case nil:
                    continue
                }
            }
            MHD_run(daemon.pointer)
        }
    }
}

/// A daemon pointer; the event loop owning it is the only thread that runs it.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
