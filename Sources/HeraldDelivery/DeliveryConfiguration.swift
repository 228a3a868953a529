import Foundation

/// How a client reaches Herald, what it knows about the device, and its timeouts.
public struct DeliveryConfiguration: Sendable {
    public var serverURL: URL
    /// A key with the scopes `feed:read` and `events:write`.
    public var apiKey: String
    /// Where the client keeps its state, the last good feed, the event queue and the images.
    public var storageFolder: URL
    public var device: DeviceContext
    public var transport: any DeliveryTransport
    public var clock: @Sendable () -> Date
    /// Numbers in 0..<1 for the jitter of retries; tests give a fixed sequence.
    public var random: @Sendable () -> Double
    /// This installation's id; nil keeps the one the client made at its first start.
    public var installationID: String?
    /// Whether data collection is on until the user chooses (`DeliveryClient.setAutomaticDataCollectionEnabled(_:)`);
    /// an app that asks for consent first starts with false, and no installation id leaves the device meanwhile.
    public var automaticDataCollectionByDefault: Bool
    /// Overrides the app's minimum interval between messages from the feed (default 30 s).
    public var minimumInterval: TimeInterval?
    /// How long after the app goes to the background a session ends (Braze's default, 10 s).
    public var sessionTimeout: TimeInterval
    /// How long a message may wait for its images after its trigger before it is discarded.
    public var displayTimeout: TimeInterval
    /// How long a renderer may stay silent (not even an impression) before the slot frees.
    public var rendererTimeout: TimeInterval
    /// The image cache's bound on disk.
    public var imageCacheBytes: Int
    /// The largest image fetched (Braze's limit for in-app images, 5 MB); a larger one fails as
    /// `image_fetch`, and reading it stops there.
    public var imageBytesLimit: Int
    /// The most events waiting on the device; when full, the oldest is dropped and counted.
    public var eventQueueLimit: Int
    /// Events per upload request (the server takes up to 1000).
    public var uploadBatchSize: Int
    /// The most discard counts waiting on the device (one per campaign, reason and day); when full, the oldest is dropped.
    public var discardCountLimit: Int

    public init(
        serverURL: URL, apiKey: String, storageFolder: URL, device: DeviceContext,
        transport: any DeliveryTransport = URLSessionTransport(), clock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }, installationID: String? = nil,
        automaticDataCollectionByDefault: Bool = true,
        minimumInterval: TimeInterval? = nil, sessionTimeout: TimeInterval = 10, displayTimeout: TimeInterval = 10,
        rendererTimeout: TimeInterval = 10, imageCacheBytes: Int = 50 * 1024 * 1024, imageBytesLimit: Int = 5 * 1024 * 1024,
        eventQueueLimit: Int = 1_000,
        uploadBatchSize: Int = 500, discardCountLimit: Int = 200
    ) {
        self.serverURL = serverURL
        self.apiKey = apiKey
        self.storageFolder = storageFolder
        self.device = device
        self.transport = transport
        self.clock = clock
        self.random = random
        self.installationID = installationID
        self.automaticDataCollectionByDefault = automaticDataCollectionByDefault
        self.minimumInterval = minimumInterval
        self.sessionTimeout = sessionTimeout
        self.displayTimeout = displayTimeout
        self.rendererTimeout = rendererTimeout
        self.imageCacheBytes = imageCacheBytes
        self.imageBytesLimit = imageBytesLimit
        self.eventQueueLimit = eventQueueLimit
        self.uploadBatchSize = uploadBatchSize
        self.discardCountLimit = discardCountLimit
    }
}
