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

    @Option(help: "Seconds a connection may stay silent before it is closed, so slow or stalled clients free their slot (env HERALD_CONNECTION_TIMEOUT; default 30).")
    var connectionTimeout: Int?

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

        let database = try storage.openDatabase()
        var configuration = ConsoleConfiguration(resources: try storage.resourcesFolder())
        configuration.secureCookies = secureCookies || environment["HERALD_SECURE_COOKIES"] == "1"
        let application = try await HeraldApplication(configuration: configuration, database: database, logger: logger)

        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = host ?? environment["HERALD_HOST"] ?? "127.0.0.1"
        serverConfiguration.port = try port ?? environment["HERALD_PORT"].map { value in
            guard let port = UInt16(value) else { throw ValidationError("HERALD_PORT must be a port number, not \(value).") }
            return port
        } ?? 8080
        serverConfiguration.connectionTimeoutSeconds = try connectionTimeout ?? environment["HERALD_CONNECTION_TIMEOUT"].map { value in
            guard let seconds = Int(value) else { throw ValidationError("HERALD_CONNECTION_TIMEOUT must be a whole number of seconds, not \(value).") }
            return seconds
        } ?? serverConfiguration.connectionTimeoutSeconds
        guard (1...3600).contains(serverConfiguration.connectionTimeoutSeconds) else {
            throw ValidationError("The connection timeout must be from 1 to 3600 seconds; 0 would let a silent client hold a connection forever.")
        }
        let server = HTTPServer(configuration: serverConfiguration, logger: logger, handler: application.respond(to:))
        try server.start()

        let shownHost = serverConfiguration.host.contains(":") ? "[\(serverConfiguration.host)]" : serverConfiguration.host
        // Written straight to the file descriptor so that a pipe reader (a test, a script) sees it at once.
        FileHandle.standardOutput.write(Data(
            "Herald is running at http://\(shownHost):\(server.port)/ (database \(storage.databasePath)). Press Ctrl-C to stop.\n".utf8))

        let signal = await TerminationSignal.wait()
        logger.info("received \(signal), finishing requests in flight")
        server.shutdown(gracePeriod: .seconds(8))
        try database.close()
        logger.info("stopped")
    }
}

/// Waits for SIGINT or SIGTERM.
enum TerminationSignal {
    static func wait() async -> String {
        await withCheckedContinuation { continuation in
            let resumed = Mutex(false)
            var sources: [DispatchSourceSignal] = []
            for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    let first = resumed.withLock { done in
                        defer { done = true }
                        return !done
                    }
                    if first { continuation.resume(returning: name) }
                }
                source.resume()
                sources.append(source)
            }
            // The sources must outlive this call; they live until the process exits.
            KeepAlive.signalSources = sources
        }
    }
}

private enum KeepAlive {
    nonisolated(unsafe) static var signalSources: [DispatchSourceSignal] = []
}
