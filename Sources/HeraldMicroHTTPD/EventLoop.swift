import CMicroHTTPD
import Foundation
import Synchronization

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
    /// What the accept-policy and connection callbacks of this loop's daemon reach through `cls`.
    final class Context: Sendable {
        let index: Int
        let server: ServerContext
        /// Connections of this loop closed during the current run of its daemon.
        let closedDuringRun = Atomic<Int>(0)

        init(index: Int, server: ServerContext) {
            self.index = index
            self.server = server
        }
    }

    private let daemon: DaemonHandle
    private let context: Context
    /// Commands from other threads; the loop reads them between runs of the daemon, so the daemon is
    /// only ever touched by one thread at a time.
    private let commands: (read: Int32, write: Int32)
    private let done = DispatchSemaphore(value: 0)

    private enum Command: UInt8 {
        case quiesce = 1
        case stop = 2
    }

    /// Starts a daemon on `listeningSocket`, which it owns from then on; nil when MHD refuses.
    init?(listeningSocket: Int32, context: Context) {
        let server = context.server
        let configuration = server.configuration
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        let serverPointer = Unmanaged.passUnretained(server).toOpaque()
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            close(listeningSocket)
            return nil
        }
        // The registry admits connections against the limit shared by all loops; any one loop may hold them all,
        // and, where idle connections give way, as many again closed to make room whose close MHD has yet to see
        // (MHD refuses connections past its own limit before the registry is asked).
        let connections = server.connections
        guard let started = herald_mhd_start(
            listeningSocket, UInt32(connections.idleGiveWay ? 2 * connections.limit : connections.limit),
            UInt32(configuration.connectionTimeoutSeconds), configuration.connectionMemoryLimit,
            admitConnection, contextPointer,
            accessHandler, serverPointer,
            requestCompleted, serverPointer,
            requestStarted, serverPointer,
            connectionChanged, contextPointer)
        else {
            close(pipe[0])
            close(pipe[1])
            return nil
        }
        daemon = DaemonHandle(pointer: started)
        self.context = context
        commands = (pipe[0], pipe[1])
    }

    func run() {
        let thread = Thread { [self] in loop() }
        thread.name = "herald-http-\(context.index)"
        thread.start()
    }

    /// Makes `loops` stop accepting and close their listening descriptors; connections go on. All are
    /// asked first, so that a loop busy in a slow handler does not keep the others accepting.
    static func quiesce(_ loops: [EventLoop]) {
        loops.forEach { $0.post(.quiesce) }
        loops.forEach { $0.done.wait() }
    }

    /// Ends the loop, then closes every connection and the daemon. Quiesce it first.
    func stop() {
        post(.stop)
        done.wait()
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

    private func post(_ command: Command) {
        var byte = command.rawValue
        while Glibc.write(commands.write, &byte, 1) < 0 && errno == EINTR {}
    }

    private func loop() {
        herald_block_sigpipe()  // before MHD runs here: its daemon was told SIGPIPE is handled
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
            // MHD takes its listening socket out of its epoll set at its connection limit (or when out
            // of descriptors) and puts it back only at the start of a run: after a run that closed
            // connections, run again, or clients would wait in the backlog until something else woke us.
            repeat {
                context.closedDuringRun.store(0, ordering: .relaxed)
                MHD_run(daemon.pointer)
            } while context.closedDuringRun.load(ordering: .relaxed) > 0
        }
    }
}

/// A daemon pointer; the event loop owning it is the only thread that runs it.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
