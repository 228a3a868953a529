import Foundation
import HeraldDomain

/// How a client reaches Herald and what it knows about the device.
public struct DeliveryConfiguration: Sendable {
    public var serverURL: URL
    public var apiKey: String
    /// Where the client keeps the last good feed, impression history, the event queue and settings.
    public var storageFolder: URL
    public var device: DeviceContext
    public var transport: any DeliveryTransport
    public var clock: @Sendable () -> Date
    /// Overrides the app's minimum interval between messages from the feed (default 30 s).
    public var minimumInterval: TimeInterval?
    /// Events per upload request (the server takes up to 1000).
    public var uploadBatchSize: Int

    public init(
        serverURL: URL, apiKey: String, storageFolder: URL, device: DeviceContext,
        transport: any DeliveryTransport = URLSessionTransport(), clock: @escaping @Sendable () -> Date = { Date() },
        minimumInterval: TimeInterval? = nil, uploadBatchSize: Int = 500
    ) {
        self.serverURL = serverURL
        self.apiKey = apiKey
        self.storageFolder = storageFolder
        self.device = device
        self.transport = transport
        self.clock = clock
        self.minimumInterval = minimumInterval
        self.uploadBatchSize = uploadBatchSize
    }
}

/// A message the app should render now, in the language version for the device.
public struct InAppMessage: Sendable, Equatable {
    public let campaign: Campaign
    /// The event that fired it.
    public let trigger: String
    /// The language version shown: the tag of the campaign's version as the campaign writes it
    /// (`message.translations`), or nil for the default version. Every event reported for this display carries it.
    public let language: String?
    /// What to draw: the version for the device's language (`Message.version(for:)`), with no versions of its own.
    public let message: Message

    init(campaign: Campaign, trigger: String, deviceLanguage: String) {
        self.campaign = campaign
        self.trigger = trigger
        (language, message) = campaign.message.version(for: deviceLanguage)
    }

    public var campaignID: Int64 { campaign.id ?? 0 }
    public var data: CustomData { campaign.data }
    /// Sent to a test device; not real traffic.
    public var isTest: Bool { campaign.test == true }
}


/// What happened to a trigger.
public enum TriggerOutcome: Sendable, Equatable {
    /// Handed to the display delegate.
    case displayed(Int64)
    /// Another message is showing or the app is in the background: kept on the stack for `displayNext()`.
    case stacked(Int64)
    /// Inside the app's minimum interval since the last message: not shown.
    case throttled(Int64)
    /// Display is suppressed: the trigger is ignored, not queued.
    case suppressed
    /// No campaign matches; the delegate heard `noMatchingTrigger`.
    case noMatch
}

/// The app's renderer. The library decides what and when; the app draws, then reports back.
public protocol DeliveryDisplayDelegate: AnyObject, Sendable {
    func display(_ message: InAppMessage)
    func noMatchingTrigger(_ event: String)
}

public enum FeedRefresh: Sendable, Equatable {
    case updated, notModified
    /// The last good feed stays in use.
    case failed(String)
}

/// The delivery semantics of Firebase In-App Messaging and Braze, against Herald's feed.
public actor DeliveryClient {
    public static let builtInEvents = Trigger.builtInEvents

    private let configuration: DeliveryConfiguration
    private let store: DeviceStore
    private var state: DeviceStore.Persisted
    private var cachedFeed: DeviceStore.CachedFeed?
    private var queue: [OutgoingEvent]
    private var stack: [InAppMessage] = []
    private var showing: InAppMessage?
    private var inForeground = true
    private weak var delegate: (any DeliveryDisplayDelegate)?
    private var uploadBackoff: TimeInterval = 0
    public private(set) var nextUploadAttempt: Date = .distantPast
    public private(set) var nextFeedRefresh: Date = .distantPast
    /// While true, triggers are ignored (not queued). Not persisted: a restart starts unsuppressed.
    public var messageDisplaySuppressed = false
    public private(set) var device: DeviceContext

    public init(configuration: DeliveryConfiguration) throws {
        self.configuration = configuration
        store = try DeviceStore(folder: configuration.storageFolder)
        var state = store.loadState()
        if state.firstOpen == nil {
            state.firstOpen = configuration.clock()
            try store.save(state)
        }
        self.state = state
        cachedFeed = store.loadFeed()
        queue = store.loadQueue()
        device = configuration.device
    }

    public func setDisplayDelegate(_ delegate: any DeliveryDisplayDelegate) {
        self.delegate = delegate
    }

    public func setMessageDisplaySuppressed(_ suppressed: Bool) {
        messageDisplaySuppressed = suppressed
    }

    public func updateDevice(_ device: DeviceContext) {
        self.device = device
    }

    // MARK: Data collection

    /// When off, no installation ID leaves the device (feed requests and events go without one).
    /// The choice persists across restarts.
    public var automaticDataCollectionEnabled: Bool { state.automaticDataCollectionEnabled }

    public func setAutomaticDataCollectionEnabled(_ enabled: Bool) throws {
        state.automaticDataCollectionEnabled = enabled
        try store.save(state)
    }

    /// This installation's ID (kept on the device whatever the data-collection choice).
    public var installationID: String { state.installationID }

    // MARK: Feed

    /// The campaigns of the last good feed.
    public var campaigns: [Campaign] { cachedFeed?.feed.campaigns ?? [] }

    /// Fetches the feed (with `If-None-Match`); on any failure the last good feed stays in use.
    @discardableResult
    public func refreshFeed() async -> FeedRefresh {
        let now = configuration.clock()
        var headers = ["Authorization": "Bearer \(configuration.apiKey)", "Accept": "application/json"]
        if let etag = cachedFeed?.etag { headers["If-None-Match"] = etag }
        if state.automaticDataCollectionEnabled { headers["X-Installation-Id"] = state.installationID }
        let request = TransportRequest(
            method: "GET", url: configuration.serverURL.appendingPathComponent("api/v1/feed"), headers: headers, body: nil)
        let poll = TimeInterval(cachedFeed?.feed.pollAfterSeconds ?? 60)
        do {
            let response = try await configuration.transport.send(request)
            switch response.status {
            case 200:
                let feed = try CampaignJSON.decoder().decode(Feed.self, from: response.body)
                let cached = DeviceStore.CachedFeed(feed: feed, etag: response.header("ETag"), fetchedAt: now)
                try store.save(cached)
                cachedFeed = cached
                nextFeedRefresh = now.addingTimeInterval(TimeInterval(feed.pollAfterSeconds))
                return .updated
            case 304:
                nextFeedRefresh = now.addingTimeInterval(poll)
                return .notModified
            default:
                nextFeedRefresh = now.addingTimeInterval(min(poll, 60))
                return .failed("the server answered \(response.status)")
            }
        } catch {
            nextFeedRefresh = now.addingTimeInterval(min(poll, 60))
            return .failed("\(error)")
        }
    }

    /// Refreshes when `pollAfterSeconds` has passed since the last answer.
    public func refreshFeedIfDue() async {
        if configuration.clock() >= nextFeedRefresh { await refreshFeed() }
    }

    // MARK: Triggers and display

    /// Fires an event: the highest-priority eligible campaign shows, at most one per trigger.
    @discardableResult
    public func triggerEvent(_ name: String, properties: [String: FilterValue] = [:]) -> TriggerOutcome {
        guard !messageDisplaySuppressed else { return .suppressed }
        let now = configuration.clock()
        let eligible = campaigns.filter { campaign in
            Eligibility.triggers(campaign, event: name, properties: properties) && eligibleNow(campaign, now: now)
        }
        guard let chosen = Eligibility.pick(eligible) else {
            delegate?.noMatchingTrigger(name)
            return .noMatch
        }
        let message = InAppMessage(campaign: chosen, trigger: name, deviceLanguage: device.language)
        if showing != nil || !inForeground {
            push(message)
            return .stacked(message.campaignID)
        }
        if !message.isTest, let last = state.lastDisplay, now.timeIntervalSince(last) < minimumInterval {
            return .throttled(message.campaignID)
        }
        show(message, now: now)
        return .displayed(message.campaignID)
    }

    /// The app came to the foreground: fires `app_foreground`.
    @discardableResult
    public func appWillEnterForeground() -> TriggerOutcome {
        inForeground = true
        return triggerEvent("app_foreground")
    }

    /// Messages triggered in the background wait on the stack.
    public func appDidEnterBackground() {
        inForeground = false
    }

    /// Shows the top of the stack (the newest waiting message) on demand.
    @discardableResult
    public func displayNext() -> InAppMessage? {
        guard !messageDisplaySuppressed, showing == nil, inForeground else { return nil }
        let now = configuration.clock()
        while let message = stack.popLast() {
            guard eligibleNow(message.campaign, now: now) else { continue }
            return show(message, now: now)
        }
        return nil
    }

    /// Waiting messages, top (next to show) first.
    public var pendingMessages: [InAppMessage] { stack.reversed() }

    public var currentMessage: InAppMessage? { showing }

    private func eligibleNow(_ campaign: Campaign, now: Date) -> Bool {
        Eligibility.scheduled(campaign, now: now)
            && Eligibility.targets(campaign, device: device, firstOpen: state.firstOpen ?? now, installationID: state.installationID, now: now)
            && Eligibility.frequencyAllows(campaign, lastImpression: state.lastImpressions[String(campaign.id ?? 0)], now: now)
    }

    private var minimumInterval: TimeInterval {
        configuration.minimumInterval ?? TimeInterval(cachedFeed?.feed.app.minIntervalSeconds ?? 30)
    }

    /// Newest on top; a campaign waits only once.
    private func push(_ message: InAppMessage) {
        stack.removeAll { $0.campaignID == message.campaignID }
        stack.append(message)
    }

    @discardableResult
    private func show(_ waiting: InAppMessage, now: Date) -> InAppMessage {
        // The device's language may have changed while the message waited on the stack.
        let message = InAppMessage(campaign: waiting.campaign, trigger: waiting.trigger, deviceLanguage: device.language)
        showing = message
        state.lastDisplay = now
        try? store.save(state)
        delegate?.display(message)
        return message
    }

    // MARK: What the app reports

    public func impressionDetected(_ message: InAppMessage) {
        let now = configuration.clock()
        state.lastImpressions[String(message.campaignID)] = now
        try? store.save(state)
        record(message, type: .impression, now: now)
    }

    /// A click ends the display, as it does in the standard display components.
    public func messageClicked(_ message: InAppMessage, action: ClickAction, url: String? = nil) {
        record(message, type: .click, now: configuration.clock()) {
            $0.action = action
            $0.url = url
        }
        endDisplay(of: message)
    }

    public func messageDismissed(_ message: InAppMessage, type: DismissType) {
        record(message, type: .dismiss, now: configuration.clock()) { $0.dismissType = type }
        endDisplay(of: message)
    }

    public func displayError(_ message: InAppMessage, code: DisplayErrorCode) {
        record(message, type: .error, now: configuration.clock()) { $0.errorCode = code }
        endDisplay(of: message)
    }

    /// A conversion (such as a purchase) that the app attributes to a message.
    public func recordConversion(_ event: String, for message: InAppMessage) {
        record(message, type: .conversion, now: configuration.clock()) { $0.event = event }
    }

    private func endDisplay(of message: InAppMessage) {
        if showing?.campaignID == message.campaignID { showing = nil }
    }

    private func record(_ message: InAppMessage, type: EventType, now: Date, detail: (inout OutgoingEvent) -> Void = { _ in }) {
        var event = OutgoingEvent(
            id: TimeOrderedUUID.make(at: now).uuidString.lowercased(), type: type, campaignId: message.campaignID, occurredAt: now,
            platform: device.platform.rawValue, installationId: state.automaticDataCollectionEnabled ? state.installationID : nil,
            language: message.language)
        detail(&event)
        queue.append(event)
        try? store.save(queue)
    }

    // MARK: Upload

    /// Events waiting to be uploaded, oldest first.
    public var queuedEvents: [OutgoingEvent] { queue }

    public enum UploadResult: Sendable, Equatable {
        /// Every queued event reached the server (`accepted` new, the rest already stored).
        case uploaded(accepted: Int, duplicates: Int, rejected: Int)
        /// Nothing to send, or waiting for the backoff to pass.
        case idle
        /// Kept for a later retry.
        case failed(String)
    }

    /// Uploads queued events in batches. Ids never change, so a retry after a lost answer counts once.
    /// After a failure, retries wait 1, 2, 4… seconds (at most 5 minutes).
    @discardableResult
    public func flushEvents() async -> UploadResult {
        let now = configuration.clock()
        guard !queue.isEmpty, now >= nextUploadAttempt else { return .idle }
        var accepted = 0, duplicates = 0, rejected = 0
        while !queue.isEmpty {
            let batch = Array(queue.prefix(configuration.uploadBatchSize))
            let request = TransportRequest(
                method: "POST", url: configuration.serverURL.appendingPathComponent("api/v1/events"),
                headers: ["Authorization": "Bearer \(configuration.apiKey)", "Content-Type": "application/json"],
                body: try? CampaignJSON.encoder().encode(["events": batch]))
            do {
                let response = try await configuration.transport.send(request)
                guard (200..<300).contains(response.status) else {
                    // A batch the server refuses as a whole (4xx) will never pass: drop it rather than retry forever.
                    if (400..<500).contains(response.status) && response.status != 401 && response.status != 429 {
                        drop(batch)
                        continue
                    }
                    return backOff(reason: "the server answered \(response.status)", now: now)
                }
                let answer = try CampaignJSON.decoder().decode(UploadAnswer.self, from: response.body)
                accepted += answer.accepted
                duplicates += answer.duplicates
                rejected += answer.rejected.count
                drop(batch)
            } catch {
                return backOff(reason: "\(error)", now: now)
            }
        }
        uploadBackoff = 0
        nextUploadAttempt = .distantPast
        return .uploaded(accepted: accepted, duplicates: duplicates, rejected: rejected)
    }

    private struct UploadAnswer: Decodable {
        struct Rejection: Decodable { let index: Int }
        let accepted: Int
        let duplicates: Int
        let rejected: [Rejection]
    }

    private func drop(_ batch: [OutgoingEvent]) {
        let sent = Set(batch.map(\.id))
        queue.removeAll { sent.contains($0.id) }
        try? store.save(queue)
    }

    private func backOff(reason: String, now: Date) -> UploadResult {
        uploadBackoff = min(300, max(1, uploadBackoff * 2))
        nextUploadAttempt = now.addingTimeInterval(uploadBackoff)
        return .failed(reason)
    }
}
