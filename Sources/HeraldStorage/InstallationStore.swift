import Foundation
import GRDB
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
    enum CodingKeys: String, CodingKey {
        case installationID = "installationId"
        case platform, pushProvider, pushToken, appVersion, language, country, timeZone, notificationsAllowed
        case tokenRemovedAt, tokenRemovedReason, createdAt, updatedAt, registeredAt
    }
}

extension Installation {
    /// An `installations` row as either engine reads it; a platform or provider this version does not know is refused.
    init(
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
    static func storedReason(_ reason: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: reason.unicodeScalars.lazy.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 })
        return String(String(scalars).prefix(maxReasonLength))
    }
}

extension Installation: FetchableRecord {
    public init(row: Row) throws {
        try self.init(
            rowID: row["id"], appID: row["app_id"], installationID: row["installation_id"], platform: row["platform"] as String,
            pushProvider: row["push_provider"] as String?, pushToken: row["push_token"], appVersion: row["app_version"], language: row["language"],
            country: row["country"], timeZone: row["time_zone"], notificationsAllowed: row["notifications_allowed"],
            tokenRemovedAt: row["token_removed_at"], tokenRemovedReason: row["token_removed_reason"], createdAt: row["created_at"],
            updatedAt: row["updated_at"], registeredAt: row["registered_at"])
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
    var holdsNUL: Bool { unicodeScalars.contains("\u{0}") }
}

extension InstallationRegistration {
    /// Refuses a registration (or installation id) with a NUL in any text, before either engine stores it.
    func refuseNUL(installationID: String) throws {
        let texts: [(field: String, text: String?)] = [
            ("installationId", installationID), ("pushToken", pushToken), ("appVersion", appVersion), ("language", language),
            ("country", country), ("timeZone", timeZone),
        ]
        if let held = texts.first(where: { $0.text?.holdsNUL == true }) { throw InstallationStoreError.unstorable(field: held.field) }
    }
}

/// One registration on its way through the group commit: a burst of registrations is written in one
/// transaction per group, not one per request.
struct InstallationUpsert: Sendable {
    let appID: Int64
    let installationID: String
    let registration: InstallationRegistration
    let now: Date
}

/// Registrations that arrive together are written in one transaction, in arrival order.
typealias InstallationGroupCommit = GroupCommit<InstallationUpsert, (installation: Installation, created: Bool)>

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
    init(_ installations: [Installation], limit: Int) {
        self.init(installations: installations, next: installations.count == limit ? installations.last?.rowID : nil)
    }

    /// `pageSize` within 1…`Installation.maxPageSize`.
    static func limit(_ pageSize: Int) -> Int { min(max(pageSize, 1), Installation.maxPageSize) }
}

/// The `installations` table in SQLite.
public struct SQLiteInstallationStore: InstallationStore {
    let pool: DatabasePool
    let registrations: InstallationGroupCommit

    public func upsert(
        appID: Int64, installationID: String, registration: InstallationRegistration, now: Date
    ) throws -> (installation: Installation, created: Bool) {
        try registration.refuseNUL(installationID: installationID)
        let upsert = InstallationUpsert(appID: appID, installationID: installationID, registration: registration, now: now)
        return try registrations.submit(upsert) { group in
            try pool.write { db in try group.map { try Self.upsert($0, db) } }
        }
    }

    /// One registration of a group, inside the group's transaction. Its statements are the connection's
    /// cached ones: compiling them again for every registration (SQLite's parser, GRDB's authorizer and
    /// region) cost more CPU than running them.
    private static func upsert(_ upsert: InstallationUpsert, _ db: Database) throws -> (installation: Installation, created: Bool) {
        let (appID, installationID, registration, now) = (upsert.appID, upsert.installationID, upsert.registration, upsert.now)
        let existing = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM installations WHERE app_id = ? AND installation_id = ?"), arguments: [appID, installationID])
        if let provider = registration.pushProvider, let token = registration.pushToken {
            try db.cachedStatement(
                sql: """
                    UPDATE installations SET push_token = NULL, push_provider = NULL, updated_at = ?
                    WHERE app_id = ? AND push_provider = ? AND push_token = ? AND installation_id <> ?
                    """
            ).execute(arguments: [now, appID, provider.rawValue, token, installationID])
        }
        // A new token is live whatever happened to the last one; without one, a pruned token's record stays.
        let hasToken = registration.pushToken != nil
        try db.cachedStatement(
            sql: """
                INSERT INTO installations
                    (app_id, installation_id, platform, push_provider, push_token, app_version, language, country, time_zone,
                     notifications_allowed, created_at, updated_at, registered_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_id, installation_id) DO UPDATE SET
                    platform = excluded.platform,
                    push_provider = CASE WHEN excluded.push_token IS NOT NULL OR token_removed_at IS NULL
                        THEN excluded.push_provider ELSE push_provider END,
                    push_token = excluded.push_token, app_version = excluded.app_version, language = excluded.language,
                    country = excluded.country, time_zone = excluded.time_zone, notifications_allowed = excluded.notifications_allowed,
                    token_removed_at = CASE WHEN ? THEN NULL ELSE token_removed_at END,
                    token_removed_reason = CASE WHEN ? THEN NULL ELSE token_removed_reason END,
                    updated_at = excluded.updated_at, registered_at = excluded.registered_at
                """
        ).execute(
            arguments: [
                appID, installationID, registration.platform.rawValue, registration.pushProvider?.rawValue, registration.pushToken,
                registration.appVersion, registration.language, registration.country, registration.timeZone,
                registration.notificationsAllowed, now, now, now, hasToken, hasToken,
            ])
        guard let stored = try Self.installation(appID: appID, id: installationID, db) else {
            throw InstallationStoreError.unreadable("installation \(installationID) of app \(appID) after saving it")
        }
        return (stored, existing == nil)
    }

    public func installation(appID: Int64, id: String) throws -> Installation? {
        try pool.read { try Self.installation(appID: appID, id: id, $0) }
    }

    /// `installation(appID:id:)` inside the caller's transaction (a push test reads its devices' tokens as it queues them).
    static func installation(appID: Int64, id: String, _ db: Database) throws -> Installation? {
        try Installation.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM installations WHERE app_id = ? AND installation_id = ?"), arguments: [appID, id])
    }

    @discardableResult
    public func removeToken(appID: Int64, provider: PushProvider, token: String, reason: String, now: Date) throws -> Bool {
        try pool.write { try Self.removeToken(appID: appID, provider: provider, token: token, reason: reason, now: now, in: $0) }
    }

    /// `removeToken` inside the caller's transaction (the outbox records the send and prunes at once).
    @discardableResult
    static func removeToken(appID: Int64, provider: PushProvider, token: String, reason: String, now: Date, in db: Database) throws -> Bool {
        try db.execute(
            sql: """
                UPDATE installations SET push_token = NULL, token_removed_at = ?, token_removed_reason = ?, updated_at = ?
                WHERE app_id = ? AND push_provider = ? AND push_token = ?
                """,
            arguments: [now, Installation.storedReason(reason), now, appID, provider.rawValue, token])
        return db.changesCount > 0
    }

    public func withTokens(appID: Int64, provider: PushProvider?, after: Int64?, pageSize: Int) throws -> InstallationPage {
        let limit = InstallationPage.limit(pageSize)
        let installations = try pool.read { db in
            try Installation.fetchAll(
                db, sql: """
                    SELECT * FROM installations
                    WHERE app_id = ? AND (? IS NULL OR push_provider = ?) AND push_token IS NOT NULL AND id > ?
                    ORDER BY id LIMIT ?
                    """,
                arguments: [appID, provider?.rawValue, provider?.rawValue, after ?? 0, limit])
        }
        return InstallationPage(installations, limit: limit)
    }

    public func counts(appID: Int64) throws -> InstallationCounts {
        try pool.read { db in
            var counts = InstallationCounts()
            if let row = try Row.fetchOne(
                db, sql: """
                    SELECT COUNT(*) AS installations, COALESCE(SUM(notifications_allowed), 0) AS allowed,
                        COALESCE(SUM(push_token IS NULL AND token_removed_at IS NOT NULL), 0) AS removed
                    FROM installations WHERE app_id = ?
                    """, arguments: [appID]) {
                counts.installations = row["installations"]
                counts.notificationsAllowed = row["allowed"]
                counts.tokensRemoved = row["removed"]
            }
            for provider in PushProvider.allCases {
                counts.withToken[provider] = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM installations WHERE app_id = ? AND push_provider = ? AND push_token IS NOT NULL",
                    arguments: [appID, provider.rawValue]) ?? 0
            }
            return counts
        }
    }

    public func deleteUnregistered(since cutoff: Date, limit: Int) throws -> Int {
        try pool.write { db in
            try db.execute(
                sql: """
                    DELETE FROM installations WHERE id IN (
                        SELECT id FROM installations WHERE registered_at < ? ORDER BY registered_at LIMIT ?)
                    """,
                arguments: [cutoff, max(limit, 0)])
            return db.changesCount
        }
    }

    /// Deletes the app's installation `installationID` inside the caller's transaction (an erasure);
    /// returns whether there was one.
    static func delete(appID: Int64, installationID: String, in db: Database) throws -> Bool {
        try db.execute(sql: "DELETE FROM installations WHERE app_id = ? AND installation_id = ?", arguments: [appID, installationID])
        return db.changesCount > 0
    }
}
