import Foundation
@testable import HeraldDelivery
import HeraldDomain
import Synchronization
import TestSupport
import Testing

/// The image side of the pipeline the vectors leave out: prefetch when the feed changes, the cache on
/// disk (its bound, least recently used first, eviction with the campaign) and the files the renderer gets.
@Suite("Delivery client: images")
struct DeliveryImageTests {
    static func bytes(_ count: Int, _ fill: UInt8) -> Data { Data(repeating: fill, count: count) }

    @Test("The cache keeps at most its bound: the least recently used image goes first; one larger than the bound is refused")
    func boundAndLRU() throws {
        let folder = try TemporaryFolder()
        var cache = try ImageCache(folder: folder.url, limit: 100)
        let a = try cache.store(Self.bytes(40, 1), for: "https://img.example/a.png")
        try cache.store(Self.bytes(40, 2), for: "https://img.example/b.png")
        try cache.touch(["https://img.example/a.png"])
        try cache.store(Self.bytes(40, 3), for: "https://img.example/c.png")
        #expect(cache.file(for: "https://img.example/b.png") == nil, "b was used least recently")
        #expect(cache.file(for: "https://img.example/a.png") == a)
        #expect(try Data(contentsOf: a) == Self.bytes(40, 1))
        #expect(cache.totalBytes == 80)
        #expect(throws: ImageCache.TooLarge.self) { try cache.store(Self.bytes(101, 4), for: "https://img.example/huge.png") }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0 != "index.json" }
        #expect(files.count == 2, "b's file is deleted with its entry: \(files)")

        // Reopened, it has the same images, and drops a file no entry names (a crash between the two writes)
        try Data([9]).write(to: folder.url.appendingPathComponent("stray"))
        let reopened = try ImageCache(folder: folder.url, limit: 100)
        #expect(reopened.index.entries == cache.index.entries)
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("stray").path))

        // Keeping only what campaigns still use deletes the rest
        var kept = reopened
        try kept.keep(only: ["https://img.example/c.png"])
        #expect(kept.file(for: "https://img.example/a.png") == nil)
        #expect(!FileManager.default.fileExists(atPath: a.path))
        #expect(kept.totalBytes == 40)
    }

    /// A server with a feed that changes, and images by URL (a missing one answers 404).
    final class ImageServer: DeliveryTransport, Sendable {
        let feed: Mutex<[FeedCampaign]>
        let images: [String: Data]
        let fetched = Mutex<[String]>([])

        init(feed: [FeedCampaign], images: [String: Data]) {
            self.feed = Mutex(feed)
            self.images = images
        }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if request.url.path.hasSuffix("/api/v1/feed") {
                let campaigns = feed.withLock { $0 }
                let body = try CampaignJSON.encoder().encode(Feed(
                    app: .init(id: 1, name: "Shop", minIntervalSeconds: 0), generatedAt: Date(timeIntervalSince1970: 0), pollAfterSeconds: 60,
                    campaigns: campaigns))
                return TransportResponse(status: 200, headers: [:], body: body)
            }
            let url = request.url.absoluteString
            fetched.withLock { $0.append(url) }
            guard let image = images[url] else { return TransportResponse(status: 404, headers: [:], body: Data()) }
            return TransportResponse(status: 200, headers: ["Content-Type": "image/png"], body: image)
        }
    }

    static func campaign(_ id: Int64, image: String, platforms: [Platform]? = nil, frequency: Frequency = Frequency(type: .always)) -> FeedCampaign {
        FeedCampaign(id: id, triggers: [Trigger(event: "e\(id)")], frequency: frequency, targeting: Targeting(platforms: platforms),
                     message: Message(layout: .modal, title: .init(text: "\(id)"), imageUrl: image,
                                      translations: ["fa": .init(imageUrl: image.replacingOccurrences(of: ".png", with: "-fa.png"))]))
    }

    @Test("A new feed starts loading the images of the campaigns eligible here, in the device's version; the renderer gets their files; a campaign that leaves the feed takes its images along")
    func prefetchAndEviction() async throws {
        // Given a feed with a campaign for this device, one for another platform, and one whose image the server lacks
        let images = [
            "https://img.example/1.png": Self.bytes(10, 1), "https://img.example/1-fa.png": Self.bytes(11, 2),
            "https://img.example/2.png": Self.bytes(12, 3), "https://img.example/3.png": Self.bytes(13, 4),
        ]
        let server = ImageServer(feed: [
            Self.campaign(1, image: "https://img.example/1.png"),
            Self.campaign(2, image: "https://img.example/2.png", platforms: [.android]),
            Self.campaign(3, image: "https://img.example/3.png", frequency: Frequency(type: .once)),
        ], images: images)
        let folder = try TemporaryFolder()
        let configuration = DeliveryConfiguration(
            serverURL: URL(string: "https://herald.test/")!, apiKey: "k", storageFolder: folder.url,
            device: DeviceContext(platform: .ios, appVersion: "1", language: "fa-IR", country: "IR"), transport: server)
        let client = try DeliveryClient(configuration: configuration)
        let renderer = RecordingRenderer()
        await client.setDisplayDelegate(renderer)

        // When it fetches the feed
        #expect(await client.refreshFeed() == .updated)
        await client.waitForImageLoads()

        // Then only the eligible campaigns' images for Persian were fetched, and a display hands over their file
        #expect(Set(server.fetched.withLock { $0 }) == ["https://img.example/1-fa.png", "https://img.example/3-fa.png"])
        #expect(await client.triggerEvent("e1") == .displayed(1))
        let shown = try #require(await client.currentMessage)
        #expect(shown.message.imageUrl == "https://img.example/1-fa.png")
        let file = try #require(shown.imageFile)
        #expect(try Data(contentsOf: file) == images["https://img.example/1-fa.png"])
        await client.impressionDetected(shown)
        await client.messageDismissed(shown, type: .click)

        // When campaign 1 leaves the feed and the feed is fetched again
        _ = server.feed.withLock { $0.removeFirst() }
        #expect(await client.refreshFeed() == .updated)
        await client.waitForImageLoads()

        // Then its image is deleted from the disk
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(await client.images.file(for: "https://img.example/1-fa.png") == nil)
        // And a failed image (3-fa.png answered 404) is tried again because the feed changed
        #expect(server.fetched.withLock { $0 }.filter { $0 == "https://img.example/3-fa.png" }.count == 2)
    }

    @Test("A client made again on the same folder finds its images on disk and shows at once, without fetching them again")
    func cacheSurvivesRestart() async throws {
        let server = ImageServer(feed: [Self.campaign(1, image: "https://img.example/1.png")], images: ["https://img.example/1.png": Self.bytes(10, 1)])
        let folder = try TemporaryFolder()
        let configuration = DeliveryConfiguration(
            serverURL: URL(string: "https://herald.test/")!, apiKey: "k", storageFolder: folder.url,
            device: DeviceContext(platform: .ios, appVersion: "1", language: "en", country: "US"), transport: server)
        let first = try DeliveryClient(configuration: configuration)
        #expect(await first.refreshFeed() == .updated)
        await first.waitForImageLoads()

        let again = try DeliveryClient(configuration: configuration)
        let renderer = RecordingRenderer()
        await again.setDisplayDelegate(renderer)
        #expect(await again.start().map(\.event) == ["app_launch", "session_start"])
        #expect(await again.triggerEvent("e1") == .displayed(1))
        #expect(server.fetched.withLock { $0 } == ["https://img.example/1.png"])
    }
}
