import Foundation

/// How a campaign reaches devices: drawn by the app from the feed, or sent as a push notification.
public enum Channel: String, Codable, Sendable, CaseIterable {
    case inApp = "in_app", push
}

extension Campaign {
    /// What the campaign list shows and filters as a push campaign's layout.
    public static let pushLayout = "push"

    /// The layout as lists show it: the message's, or `push`.
    public var listedLayout: String {
        channel == .push ? Self.pushLayout : message.layout.rawValue
    }
}

/// The push services Herald sends notifications through.
public enum PushProvider: String, Codable, Sendable, CaseIterable {
    /// Apple Push Notification service: tokens are the device token's bytes in hex.
    case apns
    /// Firebase Cloud Messaging: registration tokens.
    case fcm

    /// The largest payload the provider takes, in UTF-8 bytes: APNs's for its JSON payload, FCM's for
    /// the message without its device token.
    public var payloadLimit: Int {
        switch self {
        case .apns: 4096
        case .fcm: 4000
        }
    }

    public var title: String {
        switch self {
        case .apns: "APNs"
        case .fcm: "FCM"
        }
    }
}

/// A push campaign's notification: what the lock screen shows, what tapping it opens, and the
/// campaign's custom data sent beside it as custom keys.
public struct PushNotification: Codable, Sendable, Equatable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    /// An https image, shown when the notification is expanded (APNs through a notification service
    /// extension reading `herald_image_url`; FCM's `notification.image`).
    public var imageUrl: String?
    /// The number on the app's icon; 0 clears it.
    public var badge: Int?
    /// A sound file in the app's bundle, or `default`.
    public var sound: String?
    /// The click action: APNs's `category`, FCM's `click_action`.
    public var category: String?
    /// Groups notifications: APNs's `thread-id`.
    public var threadId: String?
    /// The deep link tapping the notification opens.
    public var url: String?
    /// Content-available with no alert: wakes the app to refresh its data and shows nothing.
    public var silent: Bool
    /// The schedule's start read as wall-clock time in each device's own time zone (9:00 everywhere),
    /// instead of one instant.
    public var inDeviceTimeZone: Bool
    /// Language versions by BCP 47 tag; a device gets the one for its language (`version(for:)`).
    public var translations: [String: PushTranslation]?

    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, imageUrl: String? = nil, badge: Int? = nil,
        sound: String? = nil, category: String? = nil, threadId: String? = nil, url: String? = nil, silent: Bool = false,
        inDeviceTimeZone: Bool = false, translations: [String: PushTranslation]? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.imageUrl = imageUrl
        self.badge = badge
        self.sound = sound
        self.category = category
        self.threadId = threadId
        self.url = url
        self.silent = silent
        self.inDeviceTimeZone = inDeviceTimeZone
        self.translations = translations
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case title, subtitle, body, imageUrl, badge, sound, category, threadId, url, silent, inDeviceTimeZone, translations
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        subtitle = try container.decodeIfPresent(String.self, forKey: .subtitle)
        body = try container.decodeIfPresent(String.self, forKey: .body)
        imageUrl = try container.decodeIfPresent(String.self, forKey: .imageUrl)
        badge = try container.decodeIfPresent(Int.self, forKey: .badge)
        sound = try container.decodeIfPresent(String.self, forKey: .sound)
        category = try container.decodeIfPresent(String.self, forKey: .category)
        threadId = try container.decodeIfPresent(String.self, forKey: .threadId)
        url = try container.decodeIfPresent(String.self, forKey: .url)
        silent = try container.decodeIfPresent(Bool.self, forKey: .silent) ?? false
        inDeviceTimeZone = try container.decodeIfPresent(Bool.self, forKey: .inDeviceTimeZone) ?? false
        translations = try container.decodeIfPresent([String: PushTranslation].self, forKey: .translations)
    }

    /// The version a device whose language is `language` gets (the closest translation over the
    /// default, as for in-app messages), with the translation's tag, or nil for the default.
    public func version(for language: String) -> (tag: String?, notification: PushNotification) {
        for candidate in LanguageTag.fallbacks(for: language) {
            if let (tag, translation) = translations?.first(where: { $0.key.lowercased() == candidate }) {
                return (tag, applying(translation))
            }
        }
        return (nil, applying(PushTranslation()))
    }

    /// The default version with `translation`'s parts in place of its own (and no versions of its own).
    public func applying(_ translation: PushTranslation) -> PushNotification {
        var version = self
        version.translations = nil
        if let title = translation.title { version.title = title }
        if let subtitle = translation.subtitle { version.subtitle = subtitle }
        if let body = translation.body { version.body = body }
        if let imageUrl = translation.imageUrl { version.imageUrl = imageUrl }
        if let url = translation.url { version.url = url }
        return version
    }

    /// Every version a device can get: the default (tag nil) first, then each translation by tag.
    public var versions: [(tag: String?, notification: PushNotification)] {
        [(nil, applying(PushTranslation()))] + (translations ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, applying($0.value)) }
    }
}

/// One language version of a notification: its words, its image and its link; the rest (badge,
/// sound, category, thread) is the default version's.
public struct PushTranslation: Codable, Sendable, Equatable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var imageUrl: String?
    public var url: String?

    public init(title: String? = nil, subtitle: String? = nil, body: String? = nil, imageUrl: String? = nil, url: String? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.imageUrl = imageUrl
        self.url = url
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case title, subtitle, body, imageUrl, url }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        subtitle = try container.decodeIfPresent(String.self, forKey: .subtitle)
        body = try container.decodeIfPresent(String.self, forKey: .body)
        imageUrl = try container.decodeIfPresent(String.self, forKey: .imageUrl)
        url = try container.decodeIfPresent(String.self, forKey: .url)
    }

    public var isEmpty: Bool { self == PushTranslation() }
}
