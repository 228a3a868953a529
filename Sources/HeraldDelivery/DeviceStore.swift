import Foundation
import HeraldDomain

/// What the client keeps on the device, in one folder: the last good feed, impression history,
/// the event queue and the user's data-collection choice. Written atomically, read at start.
struct DeviceStore: Sendable {
    /// The state that survives restarts.
    struct Persisted: Codable, Sendable, Equatable {
        var installationID = UUID().uuidString.lowercased()
        var firstOpen: Date?
        var automaticDataCollectionEnabled = true
        /// The last impression per campaign, for frequency limits.
        var lastImpressions: [String: Date] = [:]
        /// When any message last showed, for the app's minimum interval.
        var lastDisplay: Date?
    }

    /// The last feed the server answered with, and its ETag.
    struct CachedFeed: Codable, Sendable {
        var feed: Feed
        var etag: String?
        var fetchedAt: Date
    }

    let folder: URL

    init(folder: URL) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    private var stateFile: URL { folder.appendingPathComponent("state.json") }
    private var feedFile: URL { folder.appendingPathComponent("feed.json") }
    private var queueFile: URL { folder.appendingPathComponent("events.json") }

    func loadState() -> Persisted { load(Persisted.self, from: stateFile) ?? Persisted() }
    func save(_ state: Persisted) throws { try write(state, to: stateFile) }

    func loadFeed() -> CachedFeed? { load(CachedFeed.self, from: feedFile) }
    func save(_ feed: CachedFeed) throws { try write(feed, to: feedFile) }

    func loadQueue() -> [OutgoingEvent] { load([OutgoingEvent].self, from: queueFile) ?? [] }
    func save(_ queue: [OutgoingEvent]) throws { try write(queue, to: queueFile) }

    private func load<T: Decodable>(_ type: T.Type, from file: URL) -> T? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        return try? CampaignJSON.decoder().decode(type, from: data)
    }

    private func write<T: Encodable>(_ value: T, to file: URL) throws {
        try CampaignJSON.encoder().encode(value).write(to: file, options: .atomic)
    }
}

/// An event as the events endpoint takes it; its id is made once, so a retried upload counts once.
public struct OutgoingEvent: Codable, Sendable, Equatable {
    public var id: String
    public var type: EventType
    public var campaignId: Int64
    public var occurredAt: Date
    public var platform: String
    public var installationId: String?
    public var action: ClickAction?
    public var url: String?
    public var dismissType: DismissType?
    public var errorCode: DisplayErrorCode?
    public var event: String?
    /// The language version the display showed (`InAppMessage.language`); absent for the default version.
    public var language: String?
}
