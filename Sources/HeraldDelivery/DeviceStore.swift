import Foundation
import HeraldDomain

/// What the client keeps on the device, in one folder: its state (installation, first open, frequency
/// history, session, data-collection choice, push token and registration) and the last good feed, each written atomically and read at
/// start. The event queue (`EventQueue`), the discard counts (`DiscardTally`) and the images (`ImageCache`) have their own files there.
struct DeviceStore: Sendable {
    /// The state that survives restarts.
    struct Persisted: Codable, Sendable, Equatable {
        var installationID = UUID().uuidString.lowercased()
        var firstOpen: Date?
        /// The user's data-collection choice; nil until one is made (the configuration's default applies).
        var automaticDataCollectionEnabled: Bool?
        /// The last impression per campaign, for frequency limits.
        var lastImpressions: [String: Date] = [:]
        /// When any message last showed, for the app's minimum interval.
        var lastDisplay: Date?
        /// When the app last went to the background (nil while in the foreground), so a relaunch within the
        /// session timeout continues the session.
        var backgroundedAt: Date?
        /// The push token the app registered last.
        var pushToken: PushToken?
        /// The registration Herald last answered for good (stored it, or refused it as a whole), so the same
        /// one is not sent again; nil until then.
        var settledRegistration: InstallationRegistration?
        /// When Herald answered it, so it is sent again once `DeliveryClient.registrationRefreshInterval`
        /// has passed (Herald deletes installations that stop registering); nil before, and on a device
        /// whose state an earlier version saved.
        var settledAt: Date?
    }

    /// A push token and the provider that gave it.
    struct PushToken: Codable, Sendable, Equatable {
        var provider: PushProvider
        var token: String
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
    var eventsFile: URL { folder.appendingPathComponent("events.jsonl") }
    var discardsFile: URL { folder.appendingPathComponent("discards.json") }
    var imagesFolder: URL { folder.appendingPathComponent("images", isDirectory: true) }

    func loadState() -> Persisted { load(Persisted.self, from: stateFile) ?? Persisted() }
    func save(_ state: Persisted) throws { try write(state, to: stateFile) }

    func loadFeed() -> CachedFeed? { load(CachedFeed.self, from: feedFile) }
    func save(_ feed: CachedFeed) throws { try write(feed, to: feedFile) }

    private func load<T: Decodable>(_ type: T.Type, from file: URL) -> T? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        return try? CampaignJSON.decoder().decode(type, from: data)
    }

    private func write<T: Encodable>(_ value: T, to file: URL) throws {
        try CampaignJSON.encoder().encode(value).write(to: file, options: .atomic)
    }
}
