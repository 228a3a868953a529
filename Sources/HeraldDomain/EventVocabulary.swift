/// What delivery components report back, defined once for the delivery client that sends it, the
/// ingestion that checks it and the reports that count it.
public enum EventType: String, Sendable, Codable, CaseIterable {
    case impression, click, dismiss, error, conversion
    /// A push notification reached the device (the app told its client); the event's campaign is the push campaign.
    case pushReceived = "push_received"
    /// The user opened a push notification; the event's campaign is the push campaign.
    case pushOpen = "push_open"

    /// The channel whose campaigns the event is about: what devices do with an in-app message, or with a
    /// push notification. Ingestion refuses an event against a campaign of the other channel.
    public var channel: Channel {
        switch self {
        case .impression, .click, .dismiss, .error, .conversion: .inApp
        case .pushReceived, .pushOpen: .push
        }
    }
}

extension Channel {
    /// The event types a campaign of this channel takes, in the vocabulary's order.
    public var eventTypes: [EventType] { EventType.allCases.filter { $0.channel == self } }
}

/// Which part of a message was clicked.
public enum ClickAction: String, Sendable, Codable, CaseIterable {
    case primary, secondary, body
}

/// How a message went away without a click.
public enum DismissType: String, Sendable, Codable, CaseIterable {
    case auto, click, swipe, unknown
}

/// Why a message could not be shown.
public enum DisplayErrorCode: String, Sendable, Codable, CaseIterable {
    case imageFetch = "image_fetch", imageDisplay = "image_display", imageFormat = "image_format", unspecified
}

/// Why a message a delivery client chose was not shown (`docs/delivery-semantics.md` §7): what the clients count
/// on the device and upload as discard counts, and what ingestion checks and reports name.
public enum DiscardReason: String, Sendable, Equatable, CaseIterable, Codable {
    /// A full-screen message locked to the other orientation.
    case orientation
    /// An image failed to load (a campaign's message also reports a `displayError` event).
    case imageFetch = "image_fetch"
    /// Its images did not load within the display timeout.
    case timeout
    /// The renderer's delegate answered `discard`.
    case delegate
    /// The renderer reported nothing at all within the renderer timeout.
    case rendererTimeout = "renderer_timeout"
    /// It left the stack no longer eligible (schedule, targeting, frequency, or gone from the feed).
    case ineligible
    /// It was at the bottom of a full stack when another message came.
    case stackFull = "stack_full"
    /// Its trigger came inside the app's minimum interval since the last display.
    case throttled
}

/// What a delivery client uploads about discards: per in-app campaign, reason and UTC day, one count with an
/// id made once (so a retried upload counts once), sent in the events' batch as `discards`.
public enum DiscardCount {
    /// The most one count may say; a client that counts past it starts another.
    public static let maxCount = 10_000
    /// The most counts one batch may carry.
    public static let maxPerBatch = 500
}

extension CaseIterable where Self: RawRepresentable, RawValue == String {
    /// The raw values as a list people read: `auto, click, swipe or unknown`.
    public static var spokenList: String { allCases.map(\.rawValue).spokenList }
}

extension Array where Element == String {
    /// The texts as a list people read: `auto, click, swipe or unknown`.
    public var spokenList: String {
        guard count > 1 else { return joined() }
        return dropLast().joined(separator: ", ") + " or " + (last ?? "")
    }
}
