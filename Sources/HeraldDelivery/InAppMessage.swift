import Foundation
import HeraldDomain

/// A message to render: a campaign's, chosen for a trigger, or one the app made itself (`init(local:data:)`).
public struct InAppMessage: Sendable, Equatable, Identifiable {
    /// Identifies this message from the moment it is chosen until its display ends, so what the
    /// renderer reports is matched to the message in the slot.
    public let id: UUID
    /// The campaign it comes from; nil for a locally created message.
    public let campaign: FeedCampaign?
    /// The event that fired it; nil for a locally created message.
    public let trigger: String?
    /// The language version shown: the tag of the version as the message writes it (`message.translations`),
    /// or nil for the default version. Every event reported for this display carries it.
    public let language: String?
    /// What to draw: the version for the device's language (`Message.version(for:)`), with no versions of its own.
    public let message: Message
    /// Key/value pairs delivered with the message (FIAM's appData, Braze's extras).
    public let data: CustomData
    /// The loaded `message.imageUrl`, on disk, once the message is handed to the renderer.
    public let imageFile: URL?
    /// The loaded `message.landscapeImageUrl` (cards), on disk, once the message is handed to the renderer.
    public let landscapeImageFile: URL?
    /// The message with all its language versions, to choose again when it shows.
    let source: Message

    /// A message the app made itself, to put on the stack with `DeliveryClient.addToStack(_:)`. It has no
    /// campaign: no targeting, no frequency, and nothing about it is reported to Herald.
    public init(local message: Message, data: CustomData = CustomData()) {
        self.init(id: UUID(), campaign: nil, trigger: nil, source: message, data: data, deviceLanguage: nil)
    }

    init(campaign: FeedCampaign, trigger: String, deviceLanguage: String) {
        self.init(id: UUID(), campaign: campaign, trigger: trigger, source: campaign.message, data: campaign.data, deviceLanguage: deviceLanguage)
    }

    private init(
        id: UUID, campaign: FeedCampaign?, trigger: String?, source: Message, data: CustomData, deviceLanguage: String?,
        imageFile: URL? = nil, landscapeImageFile: URL? = nil
    ) {
        self.id = id
        self.campaign = campaign
        self.trigger = trigger
        self.source = source
        self.data = data
        if let deviceLanguage {
            (language, message) = source.version(for: deviceLanguage)
        } else {
            language = nil
            message = source.applying(MessageTranslation())
        }
        self.imageFile = imageFile
        self.landscapeImageFile = landscapeImageFile
    }

    /// The same message in the version for `deviceLanguage` (a message that waited on the stack shows in
    /// the language the device has when it shows), with the given images.
    func resolved(for deviceLanguage: String, imageFile: URL? = nil, landscapeImageFile: URL? = nil) -> InAppMessage {
        InAppMessage(
            id: id, campaign: campaign, trigger: trigger, source: source, data: data, deviceLanguage: deviceLanguage,
            imageFile: imageFile, landscapeImageFile: landscapeImageFile)
    }

    /// The same message for another version of its campaign (a newer feed changed it while it waited).
    func replacingCampaign(_ campaign: FeedCampaign, deviceLanguage: String) -> InAppMessage {
        InAppMessage(id: id, campaign: campaign, trigger: trigger, source: campaign.message, data: campaign.data, deviceLanguage: deviceLanguage)
    }

    public var campaignID: Int64? { campaign?.id }
    /// Made by the app (`init(local:data:)`), not by a campaign.
    public var isLocal: Bool { campaign == nil }
    /// Sent to a test device; not real traffic.
    public var isTest: Bool { campaign?.test == true }

    /// The images that must be loaded before it shows.
    var requiredImages: [String] { Self.requiredImages(of: message) }

    /// The images a version needs loaded before it shows: `imageUrl`, and `landscapeImageUrl` for a card.
    static func requiredImages(of version: Message) -> [String] {
        var urls: [String] = []
        if let image = version.imageUrl { urls.append(image) }
        if version.layout == .card, let landscape = version.landscapeImageUrl, landscape != version.imageUrl { urls.append(landscape) }
        return urls
    }

    /// A full-screen message locked to the other orientation does not show.
    func fits(_ orientation: DeviceOrientation) -> Bool {
        guard message.layout == .fullscreen else { return true }
        switch message.orientation {
        case .portrait: return orientation == .portrait
        case .landscape: return orientation == .landscape
        case .any, nil: return true
        }
    }
}

/// What happened to a trigger.
public enum TriggerOutcome: Sendable, Equatable {
    /// Handed to the renderer.
    case displayed(Int64)
    /// Waiting on the stack for `displayNext()`: another message holds the slot, the app is in the
    /// background, no renderer is registered yet, or the renderer's delegate answered `later`.
    case stacked(Int64)
    /// Inside the app's minimum interval since the last display: not shown, not stacked.
    case throttled(Int64)
    /// In the slot, waiting for its images; it shows when they load, or is discarded.
    case pending(Int64)
    /// Chosen but not shown, for `reason`.
    case discarded(Int64, DiscardReason)
    /// Display is suppressed: the trigger is ignored, not queued.
    case suppressed
    /// No campaign matches; the renderer heard `noMatchingTrigger`.
    case noMatch
}

/// One event the client fired, and what became of it.
public struct TriggerResult: Sendable, Equatable {
    public let event: String
    public let outcome: TriggerOutcome

    public init(event: String, outcome: TriggerOutcome) {
        self.event = event
        self.outcome = outcome
    }
}

/// What the renderer's delegate answers before a message is handed to it.
public enum DisplayDecision: Sendable, Equatable {
    /// Show it now (the default).
    case show
    /// Not now (a keyboard is up, a checkout is under way): back on top of the stack, the slot free.
    case later
    /// Never: dropped, and not reported.
    case discard
}
