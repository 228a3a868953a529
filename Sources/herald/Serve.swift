import ArgumentParser
import Foundation
import HeraldConsole
import HeraldMicroHTTPD
import HeraldStorage
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the console and API (the default command).")

    @OptionGroup var storage: StorageOptions

    @Option(help: "The address to listen on, an IP literal (env HERALD_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on; 0 picks a free one (env HERALD_PORT; default 8080).")
    var port: UInt16?

    @Option(help: "Seconds an answer may go without progress (a client that stopped reading) before its connection is closed (env HERALD_CONNECTION_TIMEOUT; default 30).")
    var connectionTimeout: Int?

    @Option(help: "Seconds a connection has to send a whole request head after it opens or after its previous answer (env HERALD_HEAD_TIMEOUT; default 10).")
    var headTimeout: Int?

    @Option(help: "Seconds a request body may take, plus one more for every --min-body-rate bytes received (env HERALD_BODY_GRACE; default 10).")
    var bodyGrace: Int?

    @Option(help: "Bytes per second a request body must keep up after its grace (env HERALD_MIN_BODY_RATE; default 1024).")
    var minBodyRate: Int?

    @Option(help: "Most connections open at once, lowered to what the open-file limit allows (env HERALD_MAX_CONNECTIONS; default 16384).")
    var maxConnections: Int?

    @Option(help: "Most connections from one IPv4 address or IPv6 /64; 0 for none, behind a reverse proxy that limits clients itself (env HERALD_MAX_CONNECTIONS_PER_ADDRESS; default 256).")
    var maxConnectionsPerAddress: Int?

    @Flag(help: "Mark cookies Secure; use when Herald is served over https (env HERALD_SECURE_COOKIES=1).")
    var secureCookies = false

    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp(
        "A reverse proxy in front of Herald, as an address or a CIDR range; repeat for several (env HERALD_TRUSTED_PROXIES, comma-separated).",
        discussion: "Only requests from these proxies take the client's address from X-Forwarded-For (its right-most address that is not a trusted proxy), and the scheme and host browsers reached from X-Forwarded-Proto and X-Forwarded-Host (for telling Herald's own pages from other origins); login throttling counts failures per client address."))
    var trustedProxies: [String] = []

    @Option(help: "The folder holding the web client's source, herald.js, served at /sdk/v1/ (env HERALD_WEB_CLIENT; default Clients/web/ in the resources folder). Without it the server runs and those scripts answer 404.")
    var webClient: String?

    @Option(help: "Request threads (env HERALD_THREADS; default 2 per core, at least 4): a request waiting on the database holds its thread.")
    var threads: Int?

    @Option(help: "Extra certificates (PEM) trusted for connections to APNs and FCM, besides the system's: a test server's or a proxy's (env HERALD_PUSH_TRUST_ROOTS).")
    var pushTrustRoots: String?

    @Option(help: "Notifications handed to APNs and FCM and not yet answered, across apps (env HERALD_PUSH_CONCURRENCY; default 64).")
    var pushConcurrency: Int?

    @Option(help: "Notifications a second per app and provider; 0 for no limit (env HERALD_PUSH_RATE; default 2000).")
    var pushRate: Int?

    @Option(help: "trace, debug, info (one line per request), notice, warning, error or critical (env HERALD_LOG_LEVEL; default info).")
    var logLevel: String?

    func run() async throws {
        TerminationSignal.install()
        let environment = ProcessInfo.processInfo.environment
        let levelName = logLevel ?? environment["HERALD_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("Unknown log level \(levelName): use trace, debug, info, notice, warning, error or critical.")
        }
        let proxies = try Self.trustedProxies(trustedProxies, environment: environment["HERALD_TRUSTED_PROXIES"])
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "herald")
        logger.logLevel = level

        let database = try storage.openDatabase()
        // Past a file-size limit (`ulimit -f`) the kernel would kill the server with SIGXFSZ; ignored, the
        // write fails like one on a full disk: that request gets a 503 and everything else goes on.
        signal(SIGXFSZ, SIG_IGN)
        if database.openedReadOnly {
            logger.error("the database \(storage.databasePath) is read-only: pages and the feed work, every change fails with 503 until Herald is restarted on a writable file")
        }
        var configuration = ConsoleConfiguration(resources: try storage.resourcesFolder())
        configuration.secretBox = storage.secretBox()
        configuration.push.trustRootsFile = pushTrustRoots ?? environment["HERALD_PUSH_TRUST_ROOTS"]
        if let count = try Self.number(pushConcurrency, environment: "HERALD_PUSH_CONCURRENCY", in: 1...1000, "The number of notifications in flight") {
            configuration.push.concurrency = count
        }
        if let rate = try Self.number(pushRate, environment: "HERALD_PUSH_RATE", in: 0...1_000_000, "The push rate per app and provider") {
            configuration.push.ratePerSecond = rate == 0 ? nil : rate
        }
        configuration.secureCookies = secureCookies || environment["HERALD_SECURE_COOKIES"] == "1"
        configuration.trustedProxies = proxies
        if let folder = webClient ?? environment["HERALD_WEB_CLIENT"] {
            configuration.webClientFolder = URL(fileURLWithPath: folder)
        }
        if !proxies.isEmpty {
            logger.info("client addresses come from X-Forwarded-For on connections from \(proxies.map(\.description).joined(separator: ", "))")
        }
        let application = try await HeraldApplication(configuration: configuration, database: database, logger: logger)

        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = host ?? environment["HERALD_HOST"] ?? "127.0.0.1"
        serverConfiguration.port = try port ?? environment["HERALD_PORT"].map { value in
            guard let port = UInt16(value) else { throw ValidationError("HERALD_PORT must be a port number, not \(value).") }
            return port
        } ?? 8080
        if let count = try Self.number(threads, environment: "HERALD_THREADS", in: 1...256, "The number of threads") {
            serverConfiguration.threads = count
        }
        // 0 would let a silent client hold a connection forever.
        if let seconds = try Self.number(connectionTimeout, environment: "HERALD_CONNECTION_TIMEOUT", in: 1...3600, "The connection timeout in seconds") {
            serverConfiguration.connectionTimeoutSeconds = seconds
        }
        // A head a person's browser sends in one packet; past 10 minutes a deadline protects nothing.
        if let seconds = try Self.number(headTimeout, environment: "HERALD_HEAD_TIMEOUT", in: 1...600, "The request head timeout in seconds") {
            serverConfiguration.requestHeadTimeout = .seconds(seconds)
        }
        if let seconds = try Self.number(bodyGrace, environment: "HERALD_BODY_GRACE", in: 1...600, "The request body grace in seconds") {
            serverConfiguration.requestBodyGrace = .seconds(seconds)
        }
        // Below 100 bytes a second a 1 MiB body could take three hours; above 10 MiB a second real
        // uploads over a mobile link would be cut off.
        if let rate = try Self.number(minBodyRate, environment: "HERALD_MIN_BODY_RATE", in: 100...10_485_760, "The minimum body rate in bytes per second") {
            serverConfiguration.minimumBodyRate = rate
        }
        if let count = try Self.number(maxConnections, environment: "HERALD_MAX_CONNECTIONS", in: 16...1_048_576, "The connection limit") {
            serverConfiguration.connectionLimit = count
        }
        if let count = try Self.number(maxConnectionsPerAddress, environment: "HERALD_MAX_CONNECTIONS_PER_ADDRESS", in: 0...1_048_576, "The connection limit per address") {
            serverConfiguration.connectionsPerAddress = count
        }
        let server = HTTPServer(configuration: serverConfiguration, logger: logger, handler: application.respond(to:))
        try server.start()
        try application.startPushing()
        if server.connectionLimit < serverConfiguration.connectionLimit, maxConnections != nil || environment["HERALD_MAX_CONNECTIONS"] != nil {
            logger.warning("the limit on open files leaves room for \(server.connectionLimit) connections, not \(serverConfiguration.connectionLimit): raise it (ulimit -Hn) to serve more")
        }
        let perAddress = serverConfiguration.connectionsPerAddress == 0 ? "no limit per address" : "\(serverConfiguration.connectionsPerAddress) per address"
        logger.info("accepting up to \(server.connectionLimit) connections, \(perAddress); request heads within \(serverConfiguration.requestHeadTimeout.components.seconds) s, bodies within \(serverConfiguration.requestBodyGrace.components.seconds) s plus 1 s per \(serverConfiguration.minimumBodyRate) bytes")

        let shownHost = serverConfiguration.host.contains(":") ? "[\(serverConfiguration.host)]" : serverConfiguration.host
        // Written straight to the file descriptor so that a pipe reader (a test, a script) sees it at once.
        FileHandle.standardOutput.write(Data(
            "Herald is running at http://\(shownHost):\(server.port)/ (database \(storage.databasePath)). Press Ctrl-C to stop.\n".utf8))

        let signal = await TerminationSignal.wait()
        logger.info("received \(signal), finishing requests in flight")
        server.shutdown(gracePeriod: .seconds(8))
        await application.shutdown()
        try database.close()
        logger.info("stopped")
    }

    /// The `--trusted-proxy` options, else the comma-separated `HERALD_TRUSTED_PROXIES`, each read as an address or range.
    static func trustedProxies(_ options: [String], environment: String?) throws -> [AddressRange] {
        let texts = options.isEmpty ? (environment ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } : options
        return try texts.map { text in
            guard let range = AddressRange(text) else {
                throw ValidationError("A trusted proxy is an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8, not \(text). Check --trusted-proxy and HERALD_TRUSTED_PROXIES.")
            }
            return range
        }
    }

    /// A whole-number option, else its environment variable, within `range`; nil when neither is set.
    private static func number(_ option: Int?, environment name: String, in range: ClosedRange<Int>, _ what: String) throws -> Int? {
        guard let value = try option ?? ProcessInfo.processInfo.environment[name].map({ text in
            guard let value = Int(text) else { throw ValidationError("\(name) must be a whole number, not \(text).") }
            return value
        }) else { return nil }
        guard range.contains(value) else {
            throw ValidationError("\(what) must be from \(range.lowerBound) to \(range.upperBound), not \(value).")
        }
        return value
    }
}

/// SIGINT and SIGTERM, caught from the moment `install()` returns: a signal that arrives while the
/// server is still starting is kept and answered once it runs (a dispatch source, armed
/// asynchronously after `SIG_IGN`, lost such signals). The handler only writes the signal's number
/// to a pipe, which is safe in a signal handler; `wait()` reads it on a thread of its own.
enum TerminationSignal {
    private static let pipe: (read: Int32, write: Int32) = {
        var descriptors: [Int32] = [-1, -1]
        guard Glibc.pipe(&descriptors) == 0 else { fatalError("cannot create the signal pipe: errno \(errno)") }
        return (descriptors[0], descriptors[1])
    }()

    static func install() {
        _ = pipe  // created now, never inside the handler
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = Glibc.write(TerminationSignal.pipe.write, &byte, 1)
            }
        }
    }

    /// The name of the first signal caught since `install()`.
    static func wait() async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var byte: UInt8 = 0
                while Glibc.read(pipe.read, &byte, 1) != 1 {}
                continuation.resume(returning: Int32(byte) == SIGINT ? "SIGINT" : "SIGTERM")
            }
        }
    }
}
