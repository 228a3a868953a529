import Foundation
@testable import HeraldDelivery
import HeraldDomain
import HeraldHTTP
import HeraldMicroHTTPD
import Logging
import Synchronization
import TestSupport
import Testing

/// `URLSessionTransport` against a real HTTP server on loopback: an answer longer than the request's
/// `maxResponseBytes` is given up on as it arrives (with a length or chunked), and the client turns an
/// image that is too large into an `image_fetch` discard.
@Suite("Delivery client: the transport's bound")
struct DeliveryTransportTests {
    /// Answers `/sized/N` with N bytes and a Content-Length, `/chunked/N` with N bytes in 16 KiB chunks and
    /// no length, and `/api/v1/feed` with `feed`.
    final class Server: Sendable {
        let server: HTTPServer
        var base: String { "http://127.0.0.1:\(server.port)" }

        init(feed: @escaping @Sendable (String) -> Data = { _ in Data() }) throws {
            var configuration = HTTPServerConfiguration()
            configuration.port = 0
            configuration.threads = 2
            let base = Mutex<String>("")
            server = HTTPServer(configuration: configuration, logger: Logger(label: "transport-tests"), handler: { request in
                let parts = (request.path ?? "").split(separator: "/").map(String.init)
                if parts == ["api", "v1", "feed"] {
                    return Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(feed(base.withLock { $0 })))
                }
                guard parts.count == 2, let count = Int(parts[1]), (0...50_000_000).contains(count) else { return Response(status: 404) }
                if parts[0] == "sized" { return Response(status: 200, body: [UInt8](repeating: 7, count: count)) }
                var left = count
                return Response(status: 200, stream: StreamedBody {
                    guard left > 0 else { return nil }
                    let piece = min(left, 16 * 1024)
                    left -= piece
                    return [UInt8](repeating: 7, count: piece)
                })
            })
            try server.start()
            base.withLock { $0 = "http://127.0.0.1:\(server.port)" }
        }

        func request(_ path: String, limit: Int?) -> TransportRequest {
            TransportRequest(method: "GET", url: URL(string: base + path)!, headers: [:], body: nil, maxResponseBytes: limit)
        }
    }

    @Test("An answer within the bound arrives whole; one past it, with a length or chunked, is refused as it arrives", arguments: ["sized", "chunked"])
    func bound(kind: String) async throws {
        let server = try Server()
        let transport = URLSessionTransport(timeout: 10)
        let within = try await transport.send(server.request("/\(kind)/200000", limit: 200_000))
        #expect(within.status == 200 && within.body.count == 200_000)
        await #expect(throws: TransportError.responseTooLarge(limit: 100_000)) {
            _ = try await transport.send(server.request("/\(kind)/20000000", limit: 100_000))
        }
        // Without a bound (Herald's own answers) nothing changes
        #expect(try await transport.send(server.request("/\(kind)/300000", limit: nil)).body.count == 300_000)
    }

    @Test("An image larger than the client's image bound is not shown: discarded as image_fetch and reported")
    func imageTooLarge() async throws {
        let server = try Server(feed: { base in
            let campaigns = [
                FeedCampaign(id: 1, triggers: [Trigger(event: "big")], frequency: Frequency(type: .always),
                             message: Message(layout: .modal, title: .init(text: "Big"), imageUrl: "\(base)/chunked/3000000")),
                FeedCampaign(id: 2, triggers: [Trigger(event: "small")], frequency: Frequency(type: .always),
                             message: Message(layout: .modal, title: .init(text: "Small"), imageUrl: "\(base)/sized/1000")),
            ]
            return (try? CampaignJSON.encoder().encode(Feed(
                app: .init(id: 1, name: "Shop", minIntervalSeconds: 0), generatedAt: Date(timeIntervalSince1970: 0), pollAfterSeconds: 60,
                campaigns: campaigns))) ?? Data()
        })
        let folder = try TemporaryFolder()
        let client = try DeliveryClient(configuration: DeliveryConfiguration(
            serverURL: URL(string: server.base + "/")!, apiKey: "k", storageFolder: folder.url,
            device: DeviceContext(platform: .ios, appVersion: "1", language: "en", country: "US"),
            transport: URLSessionTransport(timeout: 10), imageBytesLimit: 1_000_000))
        let renderer = RecordingRenderer()  // the client holds its renderer weakly
        await client.setDisplayDelegate(renderer)
        #expect(await client.refreshFeed() == .updated)
        await client.waitForImageLoads()

        #expect(await client.triggerEvent("big") == .discarded(1, .imageFetch))
        #expect(await client.queuedEvents.map(\.errorCode) == [.imageFetch])
        #expect(await client.triggerEvent("small") == .displayed(2))
        withExtendedLifetime(renderer) {}
    }
}
