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

    public init(
        platform: Platform, appVersion: String, language: String, country: String, userProperties: [String: FilterValue] = [:],
        orientation: DeviceOrientation = .portrait
    ) {
        self.platform = platform
        self.appVersion = appVersion
        self.language = language
        self.country = country
        self.userProperties = userProperties
        self.orientation = orientation
    }
}

/// How the device's screen is held.
public enum DeviceOrientation: String, Sendable, Equatable, CaseIterable {
    case portrait, landscape
}
