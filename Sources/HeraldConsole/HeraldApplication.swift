import Foundation
import HeraldHTTP
import HeraldStorage
import Logging
import Synchronization

/// The whole console and API as one `Request -> Response` function, callable without a socket.
public final class HeraldApplication: Sendable {
    let services: Services
    let router: Router
    let staticFiles: StaticFiles
    let requestIDs: RequestIDs
    /// The hosts the console's pages answer at (the API answers any).
    let consoleHosts: ConsoleHosts
    let requestLog: RequestLog
    /// Set once a user exists; until then every page leads to `/setup`.
    let setupDone = Atomic<Bool>(false)
    /// Deletes raw events and unregistered installations past the retention period.
    public var retention: Retention { services.retention }
    /// Signalled to end the retention thread early at shutdown.
    private let retentionStop = DispatchSemaphore(value: 0)
    private let retentionRunning = Atomic<Bool>(false)

    /// Loads templates, string catalogs and static files (failing if any is missing or broken) and builds the routes.
    /// `requestLog` writes each request's line; by default through `logger`.
    public init(configuration: ConsoleConfiguration, database: any HeraldDatabase, logger: Logger, requestLog: RequestLog? = nil) async throws {
        let localization = try Localization(folder: configuration.localesFolder, pseudoLocale: configuration.pseudoLocale)
        let views = try Views(folder: configuration.templatesFolder, catalogs: localization.catalogs)
        let signingKey = try database.serverSecrets.signingKey(now: configuration.clock())
        let pushEditor = PushSetupEditor(database: database, box: configuration.secretBox)
        let dispatcher = PushDispatcher(
            database: database, credentials: pushEditor.credentials, settings: configuration.push, logger: logger)
        services = Services(
            database: database, views: views, localization: localization, configuration: configuration, logger: logger,
            feeds: FeedService(database: database), keys: KeyAuthenticator(database: database),
            crossOrigin: CrossOrigin(origins: AllowedOrigins(database: database), trustedProxies: configuration.trustedProxies),
            webClient: try WebClient(folder: configuration.webClientFolder, logger: logger),
            visitorForms: VisitorForms(signingKey: signingKey), knownBrowsers: KnownBrowsers(signingKey: signingKey),
            registrationLimits: RegistrationLimits(policy: configuration.registrationLimits),
            push: PushService(editor: pushEditor, dispatcher: dispatcher, database: database, logger: logger),
            audience: AudienceEstimator(read: { [installations = database.installations] in try installations.profiles(appID: $0, limit: $1) }),
            retention: Retention(database: database, days: configuration.retentionDays), startedAt: configuration.clock())
        staticFiles = try StaticFiles(folder: configuration.publicFolder)
        requestIDs = RequestIDs(trustedProxies: configuration.trustedProxies)
        consoleHosts = ConsoleHosts(names: configuration.consoleHosts, trustedProxies: configuration.trustedProxies)
        self.requestLog = requestLog ?? RequestLog(logger: logger)
        router = Router(Self.routes(services: services, staticFiles: staticFiles))
    }

    /// Starts sending push campaigns in the background (after settling what a killed process left mid-send).
    public func startPushing() throws {
        try services.push.dispatcher.start()
    }

    /// Runs the retention now and then every hour on a thread of its own (its steps sleep between
    /// writes, which must not hold a request or cooperative thread), until `shutdown()`; with raw events
    /// kept forever, it still keeps the installations' grouped counts up to date (`Retention.run`).
    public func startRetention(every interval: Duration = .seconds(3600)) {
        guard !retentionRunning.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let retention = retention, stop = retentionStop, clock = services.configuration.clock, logger = services.logger
        let seconds = Double(interval.components.seconds)
        Thread.detachNewThread {
            repeat {
                do {
                    if let run = try retention.run(now: clock()), run.eventsDeleted + run.installationsDeleted > 0 {
                        logger.info(
                            "retention deleted \(run.eventsDeleted) raw events and \(run.installationsDeleted) installations unregistered for over \(retention.days) days in \(run.steps) steps")
                    }
                } catch {
                    logger.error("retention failed, tried again at its next run: \(error)")
                }
            } while stop.wait(timeout: .now() + seconds) == .timedOut
        }
    }

    /// Stops sending: notifications in flight are answered and recorded first.
    public func shutdown() async {
        if retentionRunning.load(ordering: .acquiring) { retentionStop.signal() }
        await services.push.dispatcher.shutdown()
    }

    /// Every route with the access it needs, for `herald routes` and the docs.
    public var routeTable: [(method: String, pattern: String, access: String)] {
        Self.routes(services: services, staticFiles: staticFiles).map { ($0.method, $0.pattern, $0.accessDescription) }
    }

    public func respond(to request: Request) -> Response {
        let started = ContinuousClock.now
        var request = request
        request.id = requestIDs.id(for: request)
        var (response, route) = dispatch(request)
        SecurityHeaders.apply(to: &response)
        response.headers.set(RequestIDs.header, request.id)
        let elapsed = ContinuousClock.now - started
        RequestMetrics.record(method: request.method, route: route, status: response.status, duration: elapsed)
        // The path only, never the query: a beacon's API key travels there.
        requestLog.record(method: request.method, path: request.path ?? String(request.rawPath),
                          status: response.status, elapsed: elapsed, id: request.id)
        return response
    }
}

/// The console's variant of the baseline headers: a message preview framed by our own pages.
extension SecurityHeaders {
    /// The policy for a document shown in a frame of our own pages, whose `<style nonce>` element
    /// carries generated rules (message colors). Still no script at all.
    static func framablePolicy(styleNonce: String) -> String {
        [
            "default-src 'self'",
            "script-src 'none'",
            "style-src 'self' 'nonce-\(styleNonce)'",
            "img-src 'self' https: data:",
            "form-action 'none'",
            "frame-ancestors 'self'",
            "base-uri 'none'",
            "object-src 'none'",
        ].joined(separator: "; ")
    }

    /// Marks `response` as framable by our own pages, with styles allowed by `styleNonce`.
    static func allowFraming(_ response: inout Response, styleNonce: String) {
        response.headers.set("Content-Security-Policy", framablePolicy(styleNonce: styleNonce))
        response.headers.set("X-Frame-Options", "SAMEORIGIN")
    }
}
