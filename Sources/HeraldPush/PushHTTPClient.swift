import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The one HTTP client the push senders share: HTTP/2 where the provider offers it (ALPN), bounded
/// timeouts, no redirects, and the system's trust roots plus, for tests, the mock's certificate.
public enum PushHTTPClient {
    /// The most of a provider's answer that is read; their answers are a few hundred bytes.
    public static let responseByteLimit = 64 * 1024
    /// A connection not made in this time fails the send as `.retry`.
    public static let connectTimeout = TimeAmount.seconds(10)
    /// A whole request, answer included, not done in this time fails as `.retry`.
    public static let requestTimeout = TimeAmount.seconds(30)

    /// A client for the senders; whoever makes it shuts it down (`shutdown()`) when done.
    /// - Parameter extraTrustRootsPEMFile: certificates (PEM) trusted besides the system's, such as the
    ///   test mock's self-signed one; nil in production.
    public static func make(
        extraTrustRootsPEMFile: String? = nil,
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let path = extraTrustRootsPEMFile {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw PushConfigurationError(.trustRoots, "The trust roots file \(path) does not read as PEM certificates (\(error)): give the certificate file the mock server wrote.")
            }
            guard !certificates.isEmpty else {
                throw PushConfigurationError(.trustRoots, "The trust roots file \(path) holds no certificate: give the certificate file the mock server wrote.")
            }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: .init(connect: connectTimeout, read: requestTimeout),
            decompression: .disabled)
        configuration.httpVersion = .automatic
        // A connection refused fails its sends at once as `.retry`, and the outbox's backoff decides when
        // to try again, instead of each send waiting out the connect timeout in the client's own retries.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }
}

/// One exchange with a provider, as both senders make it.
struct ProviderExchange {
    let httpClient: HTTPClient

    struct Reply {
        var status: Int
        var headers: HTTPHeaders
        /// Nil when the body was over `PushHTTPClient.responseByteLimit` or broke off.
        var body: Data?
    }

    /// Sends and reads the answer, or says why no answer came (as a `.retry` reason).
    func post(url: String, headers: HTTPHeaders, body: Data) async -> Result<Reply, ConnectionFailure> {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers = headers
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await httpClient.execute(request, timeout: PushHTTPClient.requestTimeout)
            let body = try? await response.body.collect(upTo: PushHTTPClient.responseByteLimit)
            return .success(Reply(status: Int(response.status.code), headers: response.headers, body: body.map { Data($0.readableBytesView) }))
        } catch {
            return .failure(ConnectionFailure(error: error))
        }
    }

    /// No answer: refused, timed out, TLS failed, the connection dropped, or the send was cancelled.
    struct ConnectionFailure: Error {
        let error: any Error
        var result: PushResult { .retry(after: nil, reason: "no answer: \(String(describing: error).prefix(200))") }
    }
}

extension Result where Success == ProviderAnswer, Failure == ProviderExchange.ConnectionFailure {
    /// The provider's answer, or no answer, as the outbox acts on it.
    var pushResult: PushResult {
        switch self {
        case .success(let answer): answer.result
        case .failure(let failure): failure.result
        }
    }
}
