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
    /// Set once a user exists; until then every page leads to `/setup`.
    let setupDone = Atomic<Bool>(false)

    /// Loads templates, string catalogs and static files (failing if any is missing or broken) and builds the routes.
    public init(configuration: ConsoleConfiguration, database: AppDatabase, logger: Logger) async throws {
        let views = try await Views(folder: configuration.templatesFolder)
        let localization = try Localization(folder: configuration.localesFolder, pseudoLocale: configuration.pseudoLocale)
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
            push: PushService(editor: pushEditor, dispatcher: dispatcher, database: database, logger: logger))
        staticFiles = try StaticFiles(folder: configuration.publicFolder)
        router = Router(Self.routes(services: services, staticFiles: staticFiles))
    }

    /// Starts sending push campaigns in the background (after settling what a killed process left mid-send).
    public func startPushing() throws {
        try services.push.dispatcher.start()
    }

    /// Stops sending: notifications in flight are answered and recorded first.
    public func shutdown() async {
        await services.push.dispatcher.shutdown()
    }

    /// Every route with the access it needs, for `herald routes` and the docs.
    public var routeTable: [(method: String, pattern: String, access: String)] {
        Self.routes(services: services, staticFiles: staticFiles).map { ($0.method, $0.pattern, $0.accessDescription) }
    }

    public func respond(to request: Request) -> Response {
        let started = ContinuousClock.now
        var response = dispatch(request)
        SecurityHeaders.apply(to: &response)
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        // The path only, never the query: a beacon's API key travels there.
        services.logger.info(
            "\(request.method) \(request.path ?? String(request.target.prefix { $0 != "?" })) \(response.status) \(String(format: "%.1f", milliseconds))ms")
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
