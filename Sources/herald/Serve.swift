import ArgumentParser
import Dispatch
import Foundation
import HeraldConsole
import HeraldMicroHTTPD
import HeraldStorage
import Logging
import Synchronization

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the console and API (the default command).")

    @OptionGroup var storage: StorageOptions

    @Option(help: "The address to listen on, an IP literal (env HERALD_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on; 0 picks a free one (env HERALD_PORT; default 8080).")
    var port: UInt16?

    @Flag(help: "Mark cookies Secure; use when Herald is served over https (env HERALD_SECURE_COOKIES=1).")
    var secureCookies = false

    @Option(help: "trace, debug, info (one line per request), notice, warning, error or critical (env HERALD_LOG_LEVEL; default info).")
    var logLevel: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let levelName = logLevel ?? environment["HERALD_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("Unknown log level \(levelName): use trace, debug, info, notice, warning, error or critical.")
        }
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "herald")
        logger.logLevel = level

        // Past a file-size limit (`ulimit -f`) the kernel would kill the server with SIGXFSZ; ignored, the
        // write fails like one on a full disk: that request gets a 503 and everything else goes on.
        signal(SIGXFSZ, SIG_IGN)
        let database = try storage.openDatabase()
        if database.openedReadOnly {
            logger.error("the database \(storage.databasePath) is read-only: pages and the feed work, every change fails with 503 until Herald is restarted on a writable file")
        }
        var configuration = ConsoleConfiguration(resources: try storage.resourcesFolder())
        configuration.secureCookies = secureCookies || environment["HERALD_SECURE_COOKIES"] == "1"
        let application = try await HeraldApplication(configuration: configuration, database: database, logger: logger)

        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = host ?? environment["HERALD_HOST"] ?? "127.0.0.1"
        serverConfiguration.port = try port ?? environment["HERALD_PORT"].map { value in
            guard let port = UInt16(value) else { throw ValidationError("HERALD_PORT must be a port number, not \(value).") }
            return port
        } ?? 8080
        // Catch SIGINT and SIGTERM before anyone can know the server is up: a stop asked right after start is not lost.
        let termination = TerminationSignal()
        let server = HTTPServer(configuration: serverConfiguration, logger: logger, handler: application.respond(to:))
        try server.start()

        let shownHost = serverConfiguration.host.contains(":") ? "[\(serverConfiguration.host)]" : serverConfiguration.host
        // Written straight to the file descriptor so that a pipe reader (a test, a script) sees it at once.
        FileHandle.standardOutput.write(Data(
            "Herald is running at http://\(shownHost):\(server.port)/ (database \(storage.databasePath)). Press Ctrl-C to stop.\n".utf8))

        let signal = await termination.received()
        logger.info("received \(signal), finishing requests in flight")
        server.shutdown(gracePeriod: .seconds(8))
        try database.close()
        logger.info("stopped")
    }
}

/// Catches SIGINT and SIGTERM from its creation on, and tells which came first.
final class TerminationSignal: Sendable {
    private let first = FirstSignal()
    /// Kept so the handlers live as long as the process; set once in `init`, never touched after.
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    /// Returns once both handlers are in place: libdispatch installs them asynchronously, and a signal
    /// that arrived after `SIG_IGN` but before that would be dropped.
    init() {
        let first = first
        sources = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")].map { number, name in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let registered = DispatchSemaphore(value: 0)
            source.setRegistrationHandler { registered.signal() }
            source.setEventHandler { first.deliver(name) }
            source.resume()
            registered.wait()
            return source
        }
    }

    /// The first signal received, waiting for one if none came yet.
    func received() async -> String {
        await first.value()
    }
}

/// The name of the first signal, handed to whoever waits for it, whichever comes first.
private final class FirstSignal: Sendable {
    private struct State {
        var name: String?
        var waiting: CheckedContinuation<String, Never>?
    }

    private let state = Mutex(State())

    func deliver(_ name: String) {
        let waiting = state.withLock { state -> CheckedContinuation<String, Never>? in
            guard state.name == nil else { return nil }
            state.name = name
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(returning: name)
    }

    func value() async -> String {
        await withCheckedContinuation { continuation in
            let already = state.withLock { state -> String? in
                if state.name == nil { state.waiting = continuation }
                return state.name
            }
            if let already { continuation.resume(returning: already) }
        }
    }
}
