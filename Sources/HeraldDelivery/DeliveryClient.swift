import Foundation
import HeraldDomain

/// Herald's delivery client: the semantics of `docs/delivery-semantics.md` (from Firebase In-App
/// Messaging and Braze) against Herald's feed. The app draws; the client decides what and when,
/// loads images, keeps sessions, and reports what happened.
///
/// The client's work is split by job over several files: the feed (`DeliveryClient+Feed.swift`),
/// triggers and the display pipeline (`+Display.swift`), images (`+Images.swift`), sessions (`+Session.swift`),
/// push notifications (`+Push.swift`), the installation's registration and push token (`+Installation.swift`),
/// and what the renderer reports and its upload (`+Events.swift`).
public actor DeliveryClient {
    public static let builtInEvents = Trigger.builtInEvents
    /// The most messages waiting on the stack; when full, the bottom one drops.
    public static let stackLimit = 50

    /// The one message being prepared or shown, and where it is in the pipeline.
    struct Slot {
        enum Phase: Equatable {
            /// Waiting for its images since `since` (its trigger, or leaving the stack).
            case waitingForImages(since: Date)
            /// Handed to the renderer at `at`; `impressed` once the renderer reported an impression.
            case shown(at: Date, impressed: Bool)
        }

        var message: InAppMessage
        var phase: Phase
    }

    let configuration: DeliveryConfiguration
    let store: DeviceStore
    var state: DeviceStore.Persisted
    var cachedFeed: DeviceStore.CachedFeed?
    var queue: EventQueue
    var discardTally: DiscardTally
    var images: ImageCache
    /// Image loads under way, by URL; each task ends after recording its result.
    var imageLoads: [String: Task<Void, Never>] = [:]
    /// Image loads waiting for a free connection, next first.
    var imageLoadQueue: [String] = []
    /// Images that failed to load; tried again when a different feed arrives.
    var failedImages: Set<String> = []
    /// Waiting messages, the top (next to show) last.
    var stack: [InAppMessage] = []
    var slot: Slot?
    var inForeground = true
    /// A session began in this process and the app has stayed in the foreground since.
    var sessionOpen = false
    weak var renderer: (any DeliveryDisplayDelegate)?
    weak var delegate: (any DeliveryDelegate)?
    var apiKey: String
    var feedBackoff = Backoff()
    var uploadBackoff = Backoff()
    var registrationBackoff = Backoff()
    var uploading = false
    var registering = false
    /// The status (401 or 403) that stopped polling and uploads, until `resume(apiKey:)`.
    public internal(set) var stoppedStatus: Int?
    public internal(set) var nextUploadAttempt: Date = .distantPast
    public internal(set) var nextFeedRefresh: Date = .distantPast
    /// When a registration that failed may be sent again.
    public internal(set) var nextRegistrationAttempt: Date = .distantPast
    /// While true, triggers are ignored (not queued). Not persisted: a restart starts unsuppressed.
    public internal(set) var messageDisplaySuppressed = false
    public internal(set) var device: DeviceContext
    /// Messages chosen but not shown, by reason, since this client started (local messages included); a campaign's
    /// are also counted for upload (`pendingDiscards`).
    public internal(set) var discards: [DiscardReason: Int] = [:]

    public init(configuration: DeliveryConfiguration) throws {
        self.configuration = configuration
        store = try DeviceStore(folder: configuration.storageFolder)
        var state = store.loadState()
        if state.firstOpen == nil { state.firstOpen = configuration.clock() }
        if let installationID = configuration.installationID, installationID != state.installationID {
            state.installationID = installationID
            // Herald knows the registration under the old id only.
            state.settledRegistration = nil
        }
        if state != store.loadState() { try store.save(state) }
        self.state = state
        cachedFeed = store.loadFeed()
        queue = EventQueue(file: store.eventsFile, limit: configuration.eventQueueLimit)
        discardTally = DiscardTally(file: store.discardsFile, limit: configuration.discardCountLimit)
        images = try ImageCache(folder: store.imagesFolder, limit: configuration.imageCacheBytes)
        device = configuration.device
        apiKey = configuration.apiKey
    }

    /// Registers the renderer and shows the top of the stack, so a message triggered by `app_launch` or
    /// `session_start` before the renderer was ready is not lost.
    @discardableResult
    public func setDisplayDelegate(_ renderer: any DeliveryDisplayDelegate) -> InAppMessage? {
        self.renderer = renderer
        return displayNext()
    }

    /// Who hears that delivery stopped (401/403) or that the device could not save something.
    public func setDelegate(_ delegate: any DeliveryDelegate) {
        self.delegate = delegate
    }

    public func setMessageDisplaySuppressed(_ suppressed: Bool) {
        messageDisplaySuppressed = suppressed
    }

    /// The device changed (language, orientation, properties, notification permission…); later choices use
    /// the new context, and the next `registerInstallationIfDue()` tells Herald what its registration says.
    public func updateDevice(_ device: DeviceContext) {
        self.device = device
    }

    /// Checks the time-based rules (display and renderer timeouts). Every other call checks them too;
    /// an app calls this from a timer (every second or so) so a timeout is noticed while nothing else happens.
    public func tick() {
        checkTimeRules(now: configuration.clock())
    }

    // MARK: Data collection

    /// When off, no installation ID leaves the device (feed requests and events go without one).
    /// The user's choice persists across restarts; until there is one, the configuration's default holds.
    public var automaticDataCollectionEnabled: Bool {
        state.automaticDataCollectionEnabled ?? configuration.automaticDataCollectionByDefault
    }

    public func setAutomaticDataCollectionEnabled(_ enabled: Bool) throws {
        state.automaticDataCollectionEnabled = enabled
        try store.save(state)
    }

    /// This installation's ID (kept on the device whatever the data-collection choice).
    public var installationID: String { state.installationID }

    // MARK: Storage

    /// Saves the state, telling the app when it cannot: unsaved frequency state is forgotten at the next start.
    func saveState() {
        do {
            try store.save(state)
        } catch {
            storageFailed(.state, error)
        }
    }

    func storageFailed(_ part: StorageFailure.Part, _ error: any Error) {
        delegate?.deliveryStorageFailed(StorageFailure(part: part, reason: "\(error)"))
    }
}
