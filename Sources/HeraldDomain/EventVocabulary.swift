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
