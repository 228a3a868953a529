import Foundation
import HeraldDomain

/// An installation of an app as Herald stored its registration.
public struct Installation: Sendable, Equatable {
    /// The row's id: the push sender pages by it.
    public var rowID: Int64
    public var appID: Int64
    /// The client's own id for the installation.
    public var installationID: String
    public var platform: Platform
    /// The provider of the token, or of the last token when it was pruned; nil when it never had one.
    public var pushProvider: PushProvider?
    /// nil when the installation has no token, or its provider said the token is dead.
    public var pushToken: String?
    public var appVersion: String?
    public var language: String?
    public var country: String?
    public var timeZone: String?
    public var notificationsAllowed: Bool
    /// When a provider said the token is dead, and what it said.
    public var tokenRemovedAt: Date?
    public var tokenRemovedReason: String?
    public var createdAt: Date
    public var updatedAt: Date
    /// When the client last registered, changed or not: retention deletes installations that have not
    /// registered for the retention period.
    public var registeredAt: Date
}

/// The installation as the API answers it: what it registered as stored, and what Herald adds (times, a
/// token's removal); not the row's id or app.
extension Installation: Encodable {
    package enum CodingKeys: String, CodingKey {
        case installationID = "installationId"
        case platform, pushProvider, pushToken, appVersion, language, country, timeZone, notificationsAllowed
        case tokenRemovedAt, tokenRemovedReason, createdAt, updatedAt, registeredAt
    }
}

extension Installation {
    /// An `installations` row as either engine reads it; a platform or provider this version does not know is refused.
    package init(
        rowID: Int64, appID: Int64, installationID: String, platform: String, pushProvider: String?, pushToken: String?, appVersion: String?,
        language: String?, country: String?, timeZone: String?, notificationsAllowed: Bool, tokenRemovedAt: Date?, tokenRemovedReason: String?,
        createdAt: Date, updatedAt: Date, registeredAt: Date
    ) throws {
        guard let parsed = Platform(rawValue: platform) else { throw InstallationStoreError.unreadable("platform \(platform)") }
        self.init(
            rowID: rowID, appID: appID, installationID: installationID, platform: parsed,
            pushProvider: try pushProvider.map { text in
                guard let provider = PushProvider(rawValue: text) else { throw InstallationStoreError.unreadable("push provider \(text)") }
                return provider
            },
            pushToken: pushToken, appVersion: appVersion, language: language, country: country, timeZone: timeZone,
            notificationsAllowed: notificationsAllowed, tokenRemovedAt: tokenRemovedAt, tokenRemovedReason: tokenRemovedReason,
            createdAt: createdAt, updatedAt: updatedAt, registeredAt: registeredAt)
    }

    /// The most installations one page of `withTokens` holds.
    public static let maxPageSize = 1000
    /// A provider's reason for a dead token is kept to this many characters.
    public static let maxReasonLength = 200

    /// A provider's reason as it is stored: at most `maxReasonLength` characters, and no NUL, which
    /// PostgreSQL's text cannot hold (a provider's answer is not ours to refuse).
    package static func storedReason(_ reason: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: reason.unicodeScalars.lazy.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 })
        return String(String(scalars).prefix(maxReasonLength))
    }
}

/// How many of an app's installations there are, and what they can receive.
public struct InstallationCounts: Sendable, Equatable {
    public var installations = 0
    /// Installations holding a live token, by provider.
    public var withToken: [PushProvider: Int] = [:]
    public var notificationsAllowed = 0
    /// Installations whose last token a provider said is dead, and which have none since.
    public var tokensRemoved = 0

    public init() {}
}

/// An app's registered installations as targeting sees them (`InstallationStore.profiles`).
public struct InstallationProfiles: Sendable, Equatable {
    /// Installations alike for targeting, and how many of them hold a live token.
    public struct Group: Sendable, Equatable {
        public var device: TargetedDevice
        public var installations: Int
        public var withToken: Int

        public init(device: TargetedDevice, installations: Int, withToken: Int) {
            self.device = device
            self.installations = installations
            self.withToken = withToken
        }
    }

    /// The largest groups; those past the limit are only in the totals.
    public var groups: [Group]
    public var installations: Int
    public var withToken: Int

    public init(groups: [Group], installations: Int, withToken: Int) {
        self.groups = groups
        self.installations = installations
        self.withToken = withToken
    }

    /// A group read from storage; nil for a platform this Herald does not know (never written by it).
    package static func group(platform: String, appVersion: String?, language: String?, country: String?, installations: Int, withToken: Int) -> Group? {
        guard let platform = Platform(rawValue: platform) else { return nil }
        let device = TargetedDevice(platform: platform, appVersion: appVersion ?? "", language: language ?? "", country: country ?? "")
        return Group(device: device, installations: installations, withToken: withToken)
    }
}

/// One page of an app's installations with a live token, and where the next page starts.
public struct InstallationPage: Sendable, Equatable {
    public var installations: [Installation]
    /// The `after` of the next page; nil when this page came short, so there is no more.
    public var next: Int64?
}

public enum InstallationStoreError: Error, Equatable {
    /// A stored value this Herald cannot read (a newer Herald wrote it, or someone edited the file).
    case unreadable(String)
    /// A registration's `field` holds a NUL, which PostgreSQL's text cannot keep: refused on every engine
    /// (validation refuses control characters before this).
    case unstorable(field: String)
}

extension String {
    /// Whether the text holds a NUL, which PostgreSQL's text cannot keep.
    package var holdsNUL: Bool { unicodeScalars.contains("\u{0}") }
}

extension InstallationRegistration {
    /// Refuses a registration (or installation id) with a NUL in any text, before either engine stores it.
    package func refuseNUL(installationID: String) throws {
        let texts: [(field: String, text: String?)] = [
            ("installationId", installationID), ("pushToken", pushToken), ("appVersion", appVersion), ("language", language),
            ("country", country), ("timeZone", timeZone),
        ]
        if let held = texts.first(where: { $0.text?.holdsNUL == true }) { throw InstallationStoreError.unstorable(field: held.field) }
    }
}

/// One registration on its way through the group commit: a burst of registrations is written in one
/// transaction per group, not one per request.
package struct InstallationUpsert: Sendable {
    package let appID: Int64
    package let installationID: String
    package let registration: InstallationRegistration
    package let now: Date

    package init(appID: Int64, installationID: String, registration: InstallationRegistration, now: Date) {
        self.appID = appID
        self.installationID = installationID
        self.registration = registration
        self.now = now
    }
}

/// Registrations that arrive together are written in one transaction, in arrival order.
package typealias InstallationGroupCommit = GroupCommit<InstallationUpsert, (installation: Installation, created: Bool)>

/// Registrations by delivery clients and their push tokens, on either engine.
public protocol InstallationStore: Sendable {
    /// Stores `registration` (already checked: `problems` empty, and `normalized`) for the app's
    /// installation, creating it or replacing what it said before. A token that another installation of
    /// the app holds is taken from it: the app was reinstalled and the provider gave the new installation
    /// the same token. Written through the group commit: registrations arriving together share one
    /// transaction (and fail together if it does); what is returned was read back from it.
    func upsert(appID: Int64, installationID: String, registration: InstallationRegistration, now: Date) throws -> (installation: Installation, created: Bool)
    /// The app's installation with the client's id `id`, or nil.
    func installation(appID: Int64, id: String) throws -> Installation?
    /// Prunes a token its provider said is dead (APNs 410 `Unregistered`, FCM `UNREGISTERED`): the
    /// installation holding it keeps no token and records when and `reason`. Only while it still holds
    /// that token: one it registered since the send is not touched. Returns whether a token was removed.
    @discardableResult
    func removeToken(appID: Int64, provider: PushProvider, token: String, reason: String, now: Date) throws -> Bool
    /// The app's installations holding a live token of `provider` (nil: of either), in the order they
    /// were first registered, from just after the installation whose `rowID` is `after` (nil: from the
    /// first); at most `pageSize` (1…`Installation.maxPageSize`) of them. Each page is one indexed range read.
    /// An installation registered while a page is read is in that page or after it, never before its last
    /// (the push planner pages by `rowID` and would pass over it for good).
    func withTokens(appID: Int64, provider: PushProvider?, after: Int64?, pageSize: Int) throws -> InstallationPage
    /// How many installations the app has, how many can be sent to by each provider, allow
    /// notifications, and lost their token to a provider.
    func counts(appID: Int64) throws -> InstallationCounts
    /// The app's installations grouped by what the server's targeting reads of them (platform, app version,
    /// language, country): at most `limit` groups, the largest first, beside the totals of all of them.
    func profiles(appID: Int64, limit: Int) throws -> InstallationProfiles
    /// Brings every app's grouped counts up to date, so what keeps them stays bounded for apps nobody
    /// estimates: PostgreSQL appends a change per registration that moves an installation between groups,
    /// folded in here (and by `profiles`, for its app); SQLite keeps the counts in place, with nothing to do.
    func foldProfileChanges() throws
    /// Deletes at most `limit` installations, of every app, that have not registered since `cutoff`, the
    /// longest unregistered first (retention); returns how many. One that registers while this runs is kept.
    func deleteUnregistered(since cutoff: Date, limit: Int) throws -> Int
}

extension InstallationStore {
    public func withTokens(appID: Int64, pageSize: Int) throws -> InstallationPage {
        try withTokens(appID: appID, provider: nil, after: nil, pageSize: pageSize)
    }

    public func withTokens(appID: Int64, provider: PushProvider?, pageSize: Int) throws -> InstallationPage {
        try withTokens(appID: appID, provider: provider, after: nil, pageSize: pageSize)
    }

    public func withTokens(appID: Int64, after: Int64?, pageSize: Int) throws -> InstallationPage {
        try withTokens(appID: appID, provider: nil, after: after, pageSize: pageSize)
    }
}

extension InstallationPage {
    /// A page read with `limit`: the next page starts after its last installation, unless it came short.
    package init(_ installations: [Installation], limit: Int) {
        self.init(installations: installations, next: installations.count == limit ? installations.last?.rowID : nil)
    }

    /// `pageSize` within 1…`Installation.maxPageSize`.
    package static func limit(_ pageSize: Int) -> Int { min(max(pageSize, 1), Installation.maxPageSize) }
}
