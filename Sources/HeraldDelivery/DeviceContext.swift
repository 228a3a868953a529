import Foundation
import HeraldDomain

/// What the app knows about this device and user, for targeting and display.
public struct DeviceContext: Sendable, Equatable {
    public var platform: Platform
    public var appVersion: String
    /// A language code such as `en` or `pt-BR`.
    public var language: String
    /// A two-letter country code such as `US`.
    public var country: String
    public var userProperties: [String: FilterValue]
    /// How the screen is held now: a full-screen message locked to the other orientation is not shown.
    public var orientation: DeviceOrientation
    /// The device's IANA time zone, such as `Asia/Tehran`: Herald sends scheduled pushes at the device's own time.
    public var timeZone: String
    /// Whether the user lets the app show notifications (on iOS, the authorization status is `.authorized`
    /// or `.provisional`).
    public var notificationsAllowed: Bool

    public init(
        platform: Platform, appVersion: String, language: String, country: String, userProperties: [String: FilterValue] = [:],
        orientation: DeviceOrientation = .portrait, timeZone: String = TimeZone.current.identifier, notificationsAllowed: Bool = false
    ) {
        self.platform = platform
        self.appVersion = appVersion
        self.language = language
        self.country = country
        self.userProperties = userProperties
        self.orientation = orientation
        self.timeZone = timeZone
        self.notificationsAllowed = notificationsAllowed
    }
}

/// How the device's screen is held.
public enum DeviceOrientation: String, Sendable, Equatable, CaseIterable {
    case portrait, landscape
}
