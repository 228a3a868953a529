import Foundation
import HeraldDomain

/// A registered app: campaigns, API keys and test devices belong to one.
public struct App: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var name: String
    public var platforms: [Platform]
    /// The least time between two messages on one device.
    public var minIntervalSeconds: Int
    public var createdAt: Date

    package init(id: Int64, name: String, platforms: [Platform], minIntervalSeconds: Int, createdAt: Date) {
        self.id = id
        self.name = name
        self.platforms = platforms
        self.minIntervalSeconds = minIntervalSeconds
        self.createdAt = createdAt
    }
}

/// A named installation that sees the app's "test on device" campaigns and test sends at once.
public struct TestDevice: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var appID: Int64
    public var installationID: String
    public var name: String
    public var createdAt: Date

    package init(id: Int64, appID: Int64, installationID: String, name: String, createdAt: Date) {
        self.id = id
        self.appID = appID
        self.installationID = installationID
        self.name = name
        self.createdAt = createdAt
    }

    /// The most test devices one app has: a team's phones, not an audience. Each one with a test in its
    /// feed has a feed of its own in memory, so this bounds them.
    public static let maxPerApp = 100
}

/// A web origin (`https://shop.example.com`, stored normalized) whose pages may use the app's key from
/// visitors' browsers.
public struct AllowedOrigin: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var appID: Int64
    public var origin: String
    public var createdAt: Date

    package init(id: Int64, appID: Int64, origin: String, createdAt: Date) {
        self.id = id
        self.appID = appID
        self.origin = origin
        self.createdAt = createdAt
    }

    /// The most origins one app may allow: a shop and its staging and local sites, not a list of the web.
    public static let maxPerApp = 50
}

/// Apps, their test devices, allowed web origins and push settings, on either engine.
public protocol AppStore: Sendable {
    /// Creates an app and its audit line in one transaction; `.nameTaken` when the name (ASCII letters folded) exists.
    func create(name: String, platforms: [Platform], actor: AuditActor, now: Date) throws -> App
    func find(id: Int64) throws -> App?
    /// Every app, by name with ASCII letters folded.
    func all() throws -> [App]
    func setMinInterval(appID: Int64, seconds: Int, actor: AuditActor, now: Date) throws
    /// The app's test devices, by name with ASCII letters folded.
    func testDevices(appID: Int64) throws -> [TestDevice]
    /// Adds a test device with its audit line; `.deviceTaken` when the app has that installation already,
    /// `.tooManyDevices` when it has `TestDevice.maxPerApp` (counted inside the transaction).
    func addTestDevice(appID: Int64, installationID: String, name: String, actor: AuditActor, now: Date) throws -> TestDevice
    /// Removes one of the app's test devices with its audit line; nothing when the app has no such device.
    func removeTestDevice(id: Int64, appID: Int64, actor: AuditActor, now: Date) throws
    /// The app's allowed web origins, in byte order.
    func origins(appID: Int64) throws -> [AllowedOrigin]
    /// Every app's allowed web origins, for the answers to browsers (at most `maxPerApp` per app).
    func allOrigins() throws -> [AllowedOrigin]
    /// Allows `origin` (already normalized) for the app, with its audit line, in one transaction; the count
    /// is checked inside it, so two admins adding at once cannot pass the limit.
    func addOrigin(appID: Int64, origin: String, actor: AuditActor, now: Date) throws -> AllowedOrigin
    /// Removes one of the app's origins with its audit line; nil when the app has no such origin.
    @discardableResult
    func removeOrigin(id: Int64, appID: Int64, actor: AuditActor, now: Date) throws -> AllowedOrigin?
    /// The app's push settings; the defaults for an app that does not exist.
    func pushSettings(appID: Int64) throws -> AppPushSettings
    func setPushSettings(_ settings: AppPushSettings, appID: Int64, actor: AuditActor, now: Date) throws
}

public enum AppStoreError: Error, Equatable {
    case nameTaken
    case deviceTaken
    /// The app has `TestDevice.maxPerApp` test devices already.
    case tooManyDevices
    case originTaken
    case tooManyOrigins
}

/// How an app sends pushes: a cap per device and day, whether in-app changes send a silent refresh, and how
/// far apart refreshes are.
public struct AppPushSettings: Sendable, Equatable {
    /// At most this many push campaigns reach one device in 24 hours; nil for no cap.
    public var dailyCap: Int?
    /// Publishing, pausing or stopping an in-app campaign sends the app's devices a silent push to fetch the feed.
    public var refreshOnChange: Bool
    /// At most one silent refresh every this many minutes; a change in between is carried by the next one.
    public var refreshMinutes: Int

    public init(dailyCap: Int? = nil, refreshOnChange: Bool = false, refreshMinutes: Int = defaultRefreshMinutes) {
        self.dailyCap = dailyCap
        self.refreshOnChange = refreshOnChange
        self.refreshMinutes = refreshMinutes
    }

    public static let dailyCapRange = 1...100
    /// Apple delivers a few background pushes an hour to an app and throttles the rest: three an hour by default.
    public static let defaultRefreshMinutes = 20
    public static let refreshMinutesRange = 1...1440
}
