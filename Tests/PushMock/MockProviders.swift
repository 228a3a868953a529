import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Mock APNs and FCM on one TLS port (HTTP/2, or HTTP/1.1 when the client offers only that), with a
/// plain-HTTP control port on 127.0.0.1. Started in process by the Swift tests, and as
/// `herald-push-mock serve` by the Python tests and the benchmark.
public final class MockProviders: Sendable {
    public struct Options: Sendable {
        /// The credentials to check tokens with; nil makes fresh ones whose `token_uri` is this mock.
        public var credentials: MockCredentials?
        public var host = "127.0.0.1"
        /// 0 picks a free port, for the provider port and the control port alike.
        public var port = 0
        public var controlPort = 0
        /// Requests past this many are counted, not recorded.
        public var recordLimit = 200_000
        /// Seconds an FCM access token lasts.
        public var accessTokenLifetime = 3599
        /// Where the self-signed certificate is written (PEM), for clients to trust.
        public var certificateFile: URL?

        public init(credentials: MockCredentials? = nil) {
            self.credentials = credentials
        }
    }

    public let port: Int
    public let controlPort: Int
    public let credentials: MockCredentials
    /// The self-signed certificate (PEM) the provider port presents.
    public let certificatePEM: String

    private let group: MultiThreadedEventLoopGroup
    private let channels: [any Channel]
    private let log: RequestLog
    private let behaviour: ProviderBehaviour

    /// The APNs and FCM base URL (both on the one port).
    public var baseURL: URL { URL(string: "https://127.0.0.1:\(port)")! }
    public var controlURL: URL { URL(string: "http://127.0.0.1:\(controlPort)")! }

    private init(port: Int, controlPort: Int, credentials: MockCredentials, certificatePEM: String,
                 group: MultiThreadedEventLoopGroup, channels: [any Channel], log: RequestLog, behaviour: ProviderBehaviour) {
        self.port = port
        self.controlPort = controlPort
        self.credentials = credentials
        self.certificatePEM = certificatePEM
        self.group = group
        self.channels = channels
        self.log = log
        self.behaviour = behaviour
    }

    /// Binds both ports and answers from then on; `shutdown()` stops it.
    public static func start(_ options: Options = Options()) async throws -> MockProviders {
        let identity = try SelfSignedCertificate.make()
        if let file = options.certificateFile { try Data(identity.certificatePEM.utf8).write(to: file) }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2", "http/1.1"]
        let sslContext = try NIOSSLContext(configuration: tls)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, min(4, System.coreCount)))
        let log = RequestLog(limit: options.recordLimit)
        let behaviour = ProviderBehaviour(accessTokenLifetime: options.accessTokenLifetime)
        let answerProvider: MockRequestHandler.Answer = { request, respond in
            log.arrive(request, answer: behaviour.answer, respond: respond)
        }
        do {
            let providerChannel = try await providerBootstrap(group: group, sslContext: sslContext, answer: answerProvider)
                .bind(host: options.host, port: options.port).get()
            // The control port answers through the mock, which exists only once both are bound.
            let control = NIOLockedValueBox<ControlRoutes?>(nil)
            let controlChannel = try await controlBootstrap(group: group) { request, respond in
                respond(control.withLockedValue { $0 }?.answer(request) ?? .json(503, ["error": "starting"]))
            }.bind(host: "127.0.0.1", port: options.controlPort).get()
            let port = providerChannel.localAddress?.port ?? options.port
            let credentials = try options.credentials ?? MockCredentials.generate(tokenURI: "https://127.0.0.1:\(port)/token")
            behaviour.credentials = credentials
            let mock = MockProviders(
                port: port, controlPort: controlChannel.localAddress?.port ?? options.controlPort, credentials: credentials,
                certificatePEM: identity.certificatePEM, group: group, channels: [providerChannel, controlChannel],
                log: log, behaviour: behaviour)
            control.withLockedValue { $0 = ControlRoutes(providers: mock) }
            return mock
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Closes both ports and stops the mock's threads.
    public func shutdown() async throws {
        for channel in channels { try? await channel.close() }
        try await group.shutdownGracefully()
    }

    /// Every request recorded since start or the last reset, in arrival order.
    public func requests() -> [RecordedRequest] { log.records() }
    public func stats() -> MockStats { log.stats() }
    /// Forgets the records and counts, and which `busy`/`flaky` tokens already failed once.
    public func reset() {
        log.reset()
        behaviour.reset()
    }
    /// Stops answering provider requests (still recording them) until `release()`.
    public func hold() { log.hold() }
    public func release() { log.release(answer: behaviour.answer) }
    /// Every FCM access token issued so far stops working (sends get 401), as when Google revokes them.
    public func revokeAccessTokens() { behaviour.revokeAccessTokens() }

    private static func providerBootstrap(group: EventLoopGroup, sslContext: NIOSSLContext,
                                          answer: @escaping MockRequestHandler.Answer) -> ServerBootstrap {
        // APNs allows 1,000 streams a connection; NIO's default is 100.
        let settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                        HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384)]
        return ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            channel.configureHTTP2Pipeline(mode: .server, initialLocalSettings: settings) { stream in
                                stream.eventLoop.makeCompletedFuture {
                                    try stream.pipeline.syncOperations.addHandlers([
                                        HTTP2FramePayloadToHTTP1ServerCodec(), MockRequestHandler(answer: answer),
                                    ])
                                }
                            }.flatMapThrowing { _ in
                                try channel.pipeline.syncOperations.addHandler(CloseOnErrorHandler())
                            }
                        },
                        http1ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                                try channel.pipeline.syncOperations.addHandler(MockRequestHandler(answer: answer))
                            }
                        })
                }
            }
    }

    private static func controlBootstrap(group: EventLoopGroup, answer: @escaping MockRequestHandler.Answer) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(MockRequestHandler(answer: answer))
                }
            }
    }
}
