import ArgumentParser
import Foundation
import HeraldConsole
import HeraldMicroHTTPD
import HeraldStorage
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the console and API (the default command).")

    @OptionGroup var storage: StorageOptions
    @OptionGroup var options: ServeOptions

    func run() async throws {
        TerminationSignal.install()
        let setup = try options.resolve(storage: storage, settings: try storage.settings())
        let logWriter = LogWriter()
        LoggingSystem.bootstrap { label in StructuredLogHandler(label: label, format: setup.logFormat, writer: logWriter) }
        defer { logWriter.flush() }
        var logger = Logger(label: "herald")
        logger.logLevel = setup.logLevel
        logger.info("starting", metadata: ["version": .string(HeraldBuild.version), "commit": .string(HeraldBuild.commit)])

        // Bootstrapped before the database opens, so that its connections time their statements.
        let metrics = setup.metrics.map { _ in MetricsListener.bootstrap() }

        try storage.requireSecretKey()
        // Several instances may share a PostgreSQL database; an SQLite file is served by one process.
        if try storage.postgresLocation() == nil { try ServingLock.holdWhileServing(storage.databasePath) }
        let database = try storage.openDatabase()
        // Past a file-size limit (`ulimit -f`) the kernel would kill the server with SIGXFSZ; ignored, the
        // write fails like one on a full disk: that request gets a 503 and everything else goes on.
        signal(SIGXFSZ, SIG_IGN)
        if database.openedReadOnly {
            logger.error("the database \(storage.shownDatabase) is read-only: pages and the feed work, every change fails with 503 until Herald is restarted on a writable file")
        }
        let proxies = setup.console.trustedProxies
        if !proxies.isEmpty {
            logger.info("client addresses come from X-Forwarded-For on connections from \(proxies.map(\.description).joined(separator: ", "))")
        }
        let application = try await HeraldApplication(
            configuration: setup.console, database: database, logger: logger,
            requestLog: RequestLog(logger: logger, writer: logWriter, format: setup.logFormat))
        let serverConfiguration = setup.server
        let server = HTTPServer(configuration: serverConfiguration, logger: logger, handler: application.respond(to:))
        try server.start()
        let metricsServer = try metrics.flatMap { metrics in
            try setup.metrics.map { address in
                let configuration = MetricsListener.serverConfiguration(host: address.host, port: address.port)
                let server = HTTPServer(configuration: configuration, logger: logger, handler: metrics.respond(to:))
                try server.start()
                let shownHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
                logger.info("serving metrics at http://\(shownHost):\(server.port)/metrics")
                return server
            }
        }
        try application.startPushing()
        application.startRetention()
        try database.startBackgroundWork()
        if server.connectionLimit < serverConfiguration.connectionLimit, setup.connectionLimitAsked {
            logger.warning("the limit on open files leaves room for \(server.connectionLimit) connections, not \(serverConfiguration.connectionLimit): raise it (ulimit -Hn) to serve more")
        }
        let perAddress = serverConfiguration.connectionsPerAddress == 0 ? "no limit per address" : "\(serverConfiguration.connectionsPerAddress) per address"
        logger.info("accepting up to \(server.connectionLimit) connections, \(perAddress); request heads within \(serverConfiguration.requestHeadTimeout.components.seconds) s, bodies within \(serverConfiguration.requestBodyGrace.components.seconds) s plus 1 s per \(serverConfiguration.minimumBodyRate) bytes")

        let shownHost = serverConfiguration.host.contains(":") ? "[\(serverConfiguration.host)]" : serverConfiguration.host
        // Written straight to the file descriptor so that a pipe reader (a test, a script) sees it at once.
        FileHandle.standardOutput.write(Data(
            "Herald is running at http://\(shownHost):\(server.port)/ (database \(storage.shownDatabase)). Press Ctrl-C to stop.\n".utf8))

        let signal = await TerminationSignal.wait()
        logger.info("received \(signal), finishing requests in flight")
        server.shutdown(gracePeriod: .seconds(8))
        metricsServer?.shutdown(gracePeriod: .seconds(1))
        await application.shutdown()
        try database.close()
        logger.info("stopped")
    }

}

/// What `herald serve` runs with, read once from flags, environment, configuration file and defaults.
struct ServeSetup {
    var console: ConsoleConfiguration
    var server: HTTPServerConfiguration
    var logLevel: Logger.Level
    var logFormat: LogFormat
    /// Where `/metrics` is served, when it is.
    var metrics: (host: String, port: UInt16)?
    /// Whether the connection limit was asked for, so that a lower one the open-file limit allows is worth a warning.
    var connectionLimitAsked: Bool
}

/// The options of `herald serve`, also taken by `herald config check`, which prints what they resolve to.
struct ServeOptions: ParsableArguments {
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

    @Option(name: .customLong("console-host"), help: ArgumentHelp(
        "A host name the console answers at, such as herald.example.com; repeat for several (env HERALD_CONSOLE_HOSTS, comma-separated).",
        discussion: "Setup, sign-in and every page of the console answer only localhost, IP literals and these names (behind a trusted proxy, the X-Forwarded-Host it sends), so a page elsewhere cannot reach them through its visitors' browsers by pointing its own name at Herald (DNS rebinding). The API, the feed and the web client answer any host."))
    var consoleHosts: [String] = []

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

    @Option(help: "logfmt (key=value) or json, one line per entry on standard error, each request's with its request_id (env HERALD_LOG_FORMAT; default logfmt).")
    var logFormat: String?

    @Option(help: "Seconds a signed-in session lasts after login, whatever happens (env HERALD_SESSION_LIFETIME; default 604800, a week).")
    var sessionLifetime: Int?

    @Option(help: "Seconds an unused session lasts (env HERALD_SESSION_IDLE_TIMEOUT; default 7200).")
    var sessionIdleTimeout: Int?

    @Option(help: "Failed sign-ins an account may have before each further one makes it wait (env HERALD_LOGIN_FREE_FAILURES; default 5).")
    var loginFreeFailures: Int?

    @Option(help: "Seconds the longest wait after failed sign-ins lasts; the first is 30 s, doubling (env HERALD_LOGIN_LONGEST_WAIT; default 900).")
    var loginLongestWait: Int?

    @Option(help: "Failed sign-ins from one client address, against any accounts, before it waits 15 minutes (env HERALD_LOGIN_ADDRESS_FAILURES; default 100).")
    var loginAddressFailures: Int?

    @Option(help: "Installation registrations a minute through one API key, from all its clients (env HERALD_REGISTRATIONS_PER_KEY; default 600).")
    var registrationsPerKey: Int?

    @Option(help: "Installation registrations a minute from one client address, an IPv4 address or IPv6 /64 (env HERALD_REGISTRATIONS_PER_ADDRESS; default 60).")
    var registrationsPerAddress: Int?

    @Option(help: "Largest request body in bytes, event batches and campaign imports included (env HERALD_MAX_BODY_BYTES; default 1048576).")
    var maxBodyBytes: Int?

    @Option(help: "Days raw events are kept, and installations that stop registering; older ones are deleted in the background, reports stay whole (they read daily rollups); 0 keeps them forever (env HERALD_RETENTION_DAYS; default 400).")
    var retentionDays: Int?

    @Option(help: "Serve Prometheus metrics at /metrics on this port, a listener of its own; off unless set (env HERALD_METRICS_PORT).")
    var metricsPort: UInt16?

    @Option(help: "The address the metrics listener listens on, an IP literal (env HERALD_METRICS_HOST; default 127.0.0.1).")
    var metricsHost: String?

    /// Every setting of `serve`, each read through `settings` so that `config check` shows the same.
    func resolve(storage: StorageOptions, settings: SettingsReader) throws -> ServeSetup {
        let levelName = settings.text(logLevel, "HERALD_LOG_LEVEL", default: "info") ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("Unknown log level \(levelName): use trace, debug, info, notice, warning, error or critical.")
        }
        let formatName = settings.text(logFormat, "HERALD_LOG_FORMAT", default: LogFormat.logfmt.rawValue) ?? ""
        guard let format = LogFormat(rawValue: formatName) else {
            throw ValidationError("Unknown log format \(formatName): use logfmt or json.")
        }
        var console = ConsoleConfiguration(resources: try storage.resourcesFolder())
        console.secretBox = storage.secretBox()
        console.push.trustRootsFile = settings.text(pushTrustRoots, "HERALD_PUSH_TRUST_ROOTS")
        console.push.concurrency = try settings.number(pushConcurrency, "HERALD_PUSH_CONCURRENCY", in: 1...1000, "The number of notifications in flight", default: console.push.concurrency)
        let rate = try settings.number(pushRate, "HERALD_PUSH_RATE", in: 0...1_000_000, "The push rate per app and provider", default: console.push.ratePerSecond ?? 0)
        console.push.ratePerSecond = rate == 0 ? nil : rate
        console.secureCookies = try settings.switchedOn(secureCookies, "HERALD_SECURE_COOKIES")
        console.trustedProxies = try Self.trustedProxies(settings.text(trustedProxies.isEmpty ? nil : trustedProxies.joined(separator: ","), "HERALD_TRUSTED_PROXIES", default: ""))
        console.consoleHosts = try Self.consoleHosts(settings.text(consoleHosts.isEmpty ? nil : consoleHosts.joined(separator: ","), "HERALD_CONSOLE_HOSTS", default: ""))
        if let folder = settings.text(webClient, "HERALD_WEB_CLIENT") {
            console.webClientFolder = URL(fileURLWithPath: folder)
        }
        console.retentionDays = try settings.number(retentionDays, "HERALD_RETENTION_DAYS", in: Retention.allowedDays, "The retention period in days", default: console.retentionDays)
        // Under a minute a session would end while its user reads a page; past a year it is a password.
        console.sessionLifetime = TimeInterval(try settings.number(sessionLifetime, "HERALD_SESSION_LIFETIME", in: 60...31_536_000, "The session lifetime in seconds", default: Int(console.sessionLifetime)))
        console.sessionIdleTimeout = TimeInterval(try settings.number(sessionIdleTimeout, "HERALD_SESSION_IDLE_TIMEOUT", in: 60...31_536_000, "The session idle timeout in seconds", default: Int(console.sessionIdleTimeout)))
        console.loginThrottle.freeFailures = try settings.number(loginFreeFailures, "HERALD_LOGIN_FREE_FAILURES", in: 1...1000, "The free sign-in failures", default: console.loginThrottle.freeFailures)
        console.loginThrottle.longestWait = TimeInterval(try settings.number(loginLongestWait, "HERALD_LOGIN_LONGEST_WAIT", in: 30...86_400, "The longest sign-in wait in seconds", default: Int(console.loginThrottle.longestWait)))
        console.registrationLimits.perKey = try settings.number(registrationsPerKey, "HERALD_REGISTRATIONS_PER_KEY", in: RegistrationLimitPolicy.allowedLimits, "The installation registrations a minute per key", default: console.registrationLimits.perKey)
        console.registrationLimits.perAddress = try settings.number(registrationsPerAddress, "HERALD_REGISTRATIONS_PER_ADDRESS", in: RegistrationLimitPolicy.allowedLimits, "The installation registrations a minute per address", default: console.registrationLimits.perAddress)
        console.loginThrottle.addressFailures = try settings.number(loginAddressFailures, "HERALD_LOGIN_ADDRESS_FAILURES", in: 1...1_000_000, "The sign-in failures per address", default: console.loginThrottle.addressFailures)

        var server = HTTPServerConfiguration()
        server.host = settings.text(host, "HERALD_HOST", default: server.host) ?? server.host
        server.port = UInt16(try settings.number(port.map(Int.init), "HERALD_PORT", in: 0...65535, "The port", default: 8080))
        server.threads = try settings.number(threads, "HERALD_THREADS", in: 1...256, "The number of threads", default: server.threads)
        // 0 would let a silent client hold a connection forever.
        server.connectionTimeoutSeconds = try settings.number(connectionTimeout, "HERALD_CONNECTION_TIMEOUT", in: 1...3600, "The connection timeout in seconds", default: server.connectionTimeoutSeconds)
        // A head a person's browser sends in one packet; past 10 minutes a deadline protects nothing.
        server.requestHeadTimeout = .seconds(try settings.number(headTimeout, "HERALD_HEAD_TIMEOUT", in: 1...600, "The request head timeout in seconds", default: Int(server.requestHeadTimeout.components.seconds)))
        server.requestBodyGrace = .seconds(try settings.number(bodyGrace, "HERALD_BODY_GRACE", in: 1...600, "The request body grace in seconds", default: Int(server.requestBodyGrace.components.seconds)))
        // Below 100 bytes a second a 1 MiB body could take three hours; above 10 MiB a second real
        // uploads over a mobile link would be cut off.
        server.minimumBodyRate = try settings.number(minBodyRate, "HERALD_MIN_BODY_RATE", in: 100...10_485_760, "The minimum body rate in bytes per second", default: server.minimumBodyRate)
        // A batch of 1000 events needs about 300 KiB; past 256 MiB one request could hold a worker's memory hostage.
        server.maxBodyBytes = try settings.number(maxBodyBytes, "HERALD_MAX_BODY_BYTES", in: 65_536...268_435_456, "The largest request body in bytes", default: server.maxBodyBytes)
        let limitAsked = maxConnections != nil || settings.lookup("HERALD_MAX_CONNECTIONS") != nil
        server.connectionLimit = try settings.number(maxConnections, "HERALD_MAX_CONNECTIONS", in: 16...1_048_576, "The connection limit", default: server.connectionLimit)
        server.connectionsPerAddress = try settings.number(maxConnectionsPerAddress, "HERALD_MAX_CONNECTIONS_PER_ADDRESS", in: 0...1_048_576, "The connection limit per address", default: server.connectionsPerAddress)
        let metricsHost = settings.text(metricsHost, "HERALD_METRICS_HOST", default: "127.0.0.1") ?? "127.0.0.1"
        let metrics = try settings.text(metricsPort.map(String.init), "HERALD_METRICS_PORT").map { text in
            guard let port = UInt16(text) else {
                throw ValidationError("HERALD_METRICS_PORT must be a port number, not \(text.prefix(80)).")
            }
            return (host: metricsHost, port: port)
        }
        console.metricsAddress = metrics.map { ($0.host.contains(":") ? "[\($0.host)]" : $0.host) + ":\($0.port)" }
        try settings.refuseUnread()
        return ServeSetup(
            console: console, server: server, logLevel: level, logFormat: format, metrics: metrics, connectionLimitAsked: limitAsked)
    }

    /// Console host names, comma-separated, in lower case.
    static func consoleHosts(_ text: String?) throws -> [String] {
        let names = (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        for name in names where !ConsoleHosts.isHostName(name) {
            throw ValidationError("A console host is a host name such as herald.example.com, without scheme, port or path, not \(name.prefix(80)). Check --console-host and HERALD_CONSOLE_HOSTS.")
        }
        return names
    }

    /// Trusted proxies, comma-separated, each an address or range.
    static func trustedProxies(_ text: String?) throws -> [AddressRange] {
        let texts = (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return try texts.map { text in
            guard let range = AddressRange(text) else {
                throw ValidationError("A trusted proxy is an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8, not \(text). Check --trusted-proxy and HERALD_TRUSTED_PROXIES.")
            }
            return range
        }
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
