import Foundation
import GRDB
import HeraldDomain

/// A registered app: campaigns, API keys and test devices belong to one.
public struct App: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var name: String
    public var platforms: [Platform]
    /// The least time between two messages on one device.
    public var minIntervalSeconds: Int
    public var createdAt: Date
}

/// A named installation that sees the app's "test on device" campaigns and test sends at once.
public struct TestDevice: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var appID: Int64
    public var installationID: String
    public var name: String
    public var createdAt: Date

    /// The most test devices one app has: a team's phones, not an audience. Each one with a test in its
    /// feed has a feed of its own in memory, so this bounds them.
    public static let maxPerApp = 100
}

extension TestDevice: FetchableRecord {
    public init(row: Row) throws {
        id = row["id"]
        appID = row["app_id"]
        installationID = row["installation_id"]
        name = row["name"]
        createdAt = row["created_at"]
    }
}

/// A web origin (`https://shop.example.com`, stored normalized) whose pages may use the app's key from
/// visitors' browsers.
public struct AllowedOrigin: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var appID: Int64
    public var origin: String
    public var createdAt: Date

    /// The most origins one app may allow: a shop and its staging and local sites, not a list of the web.
    public static let maxPerApp = 50
}

extension AllowedOrigin: FetchableRecord {
    public init(row: Row) throws {
        id = row["id"]
        appID = row["app_id"]
        origin = row["origin"]
        createdAt = row["created_at"]
    }
}

extension App: FetchableRecord {
    public init(row: Row) throws {
        id = row["id"]
        name = row["name"]
        let stored: String = row["platforms"]
        platforms = stored.split(separator: ",").compactMap { Platform(rawValue: String($0)) }
        minIntervalSeconds = row["min_interval_seconds"]
        createdAt = row["created_at"]
    }
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

/// The `apps` table.
public struct SQLiteAppStore: AppStore {
    let pool: DatabasePool

    /// Creates an app and its audit line in one transaction.
    public func create(name: String, platforms: [Platform], actor: AuditActor, now: Date) throws -> App {
        try pool.write { db in
            if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM apps WHERE name = ? COLLATE NOCASE", arguments: [name])! > 0 {
                throw AppStoreError.nameTaken
            }
            try db.execute(
                sql: "INSERT INTO apps (name, platforms, created_at) VALUES (?, ?, ?)",
                arguments: [name, platforms.map(\.rawValue).joined(separator: ","), now])
            let app = App(id: db.lastInsertedRowID, name: name, platforms: platforms, minIntervalSeconds: 30, createdAt: now)
            try SQLiteAuditLogStore.record(actor, .appCreated(id: app.id, name: name, platforms: platforms), at: now, in: db)
            return app
        }
    }

    public func find(id: Int64) throws -> App? {
        // Every registration and feed rebuild asks: the statement is compiled once per connection.
        try pool.read { try App.fetchOne($0.cachedStatement(sql: "SELECT * FROM apps WHERE id = ?"), arguments: [id]) }
    }

    public func all() throws -> [App] {
        try pool.read { try App.fetchAll($0, sql: "SELECT * FROM apps ORDER BY name COLLATE NOCASE") }
    }

    public func setMinInterval(appID: Int64, seconds: Int, actor: AuditActor, now: Date) throws {
        try pool.write { db in
            try db.execute(sql: "UPDATE apps SET min_interval_seconds = ? WHERE id = ?", arguments: [seconds, appID])
            try SQLiteAuditLogStore.record(actor, .appMinimumInterval(appID: appID, seconds: seconds), at: now, in: db)
        }
    }

    public func testDevices(appID: Int64) throws -> [TestDevice] {
        try pool.read {
            try TestDevice.fetchAll($0, sql: "SELECT * FROM test_devices WHERE app_id = ? ORDER BY name COLLATE NOCASE", arguments: [appID])
        }
    }

    public func addTestDevice(appID: Int64, installationID: String, name: String, actor: AuditActor, now: Date) throws -> TestDevice {
        try pool.write { db in
            let taken = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM test_devices WHERE app_id = ? AND installation_id = ?", arguments: [appID, installationID]) ?? 0
            if taken > 0 { throw AppStoreError.deviceTaken }
            let devices = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM test_devices WHERE app_id = ?", arguments: [appID]) ?? 0
            if devices >= TestDevice.maxPerApp { throw AppStoreError.tooManyDevices }
            try db.execute(
                sql: "INSERT INTO test_devices (app_id, installation_id, name, created_at) VALUES (?, ?, ?, ?)",
                arguments: [appID, installationID, name, now])
            let device = TestDevice(id: db.lastInsertedRowID, appID: appID, installationID: installationID, name: name, createdAt: now)
            try SQLiteAuditLogStore.record(
                actor, .testDevice(added: true, name: name, appID: appID, installationID: installationID), at: now, in: db)
            return device
        }
    }

    public func removeTestDevice(id: Int64, appID: Int64, actor: AuditActor, now: Date) throws {
        try pool.write { db in
            guard let device = try TestDevice.fetchOne(
                db, sql: "SELECT * FROM test_devices WHERE id = ? AND app_id = ?", arguments: [id, appID]) else { return }
            try db.execute(sql: "DELETE FROM test_devices WHERE id = ?", arguments: [id])
            try SQLiteAuditLogStore.record(
                actor, .testDevice(added: false, name: device.name, appID: appID, installationID: device.installationID), at: now, in: db)
        }
    }

    /// The app's allowed web origins, in alphabetical order.
    public func origins(appID: Int64) throws -> [AllowedOrigin] {
        try pool.read {
            try AllowedOrigin.fetchAll($0, sql: "SELECT * FROM app_origins WHERE app_id = ? ORDER BY origin", arguments: [appID])
        }
    }

    /// Every app's allowed web origins, for the answers to browsers (at most `maxPerApp` per app).
    public func allOrigins() throws -> [AllowedOrigin] {
        try pool.read { try AllowedOrigin.fetchAll($0, sql: "SELECT * FROM app_origins") }
    }

    /// Allows `origin` (already normalized) for the app, with its audit line, in one transaction; the count
    /// is checked inside it, so two admins adding at once cannot pass the limit.
    public func addOrigin(appID: Int64, origin: String, actor: AuditActor, now: Date) throws -> AllowedOrigin {
        try pool.write { db in
            let allowed = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM app_origins WHERE app_id = ?", arguments: [appID]) ?? 0
            let taken = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM app_origins WHERE app_id = ? AND origin = ?", arguments: [appID, origin]) ?? 0
            if taken > 0 { throw AppStoreError.originTaken }
            if allowed >= AllowedOrigin.maxPerApp { throw AppStoreError.tooManyOrigins }
            try db.execute(
                sql: "INSERT INTO app_origins (app_id, origin, created_at) VALUES (?, ?, ?)", arguments: [appID, origin, now])
            let added = AllowedOrigin(id: db.lastInsertedRowID, appID: appID, origin: origin, createdAt: now)
            try SQLiteAuditLogStore.record(actor, .origin(added: true, appID: appID, origin: origin), at: now, in: db)
            return added
        }
    }

    /// Removes one of the app's origins with its audit line; nil when the app has no such origin.
    @discardableResult
    public func removeOrigin(id: Int64, appID: Int64, actor: AuditActor, now: Date) throws -> AllowedOrigin? {
        try pool.write { db in
            guard let allowed = try AllowedOrigin.fetchOne(
                db, sql: "SELECT * FROM app_origins WHERE id = ? AND app_id = ?", arguments: [id, appID]) else { return nil }
            try db.execute(sql: "DELETE FROM app_origins WHERE id = ?", arguments: [id])
            try SQLiteAuditLogStore.record(actor, .origin(added: false, appID: appID, origin: allowed.origin), at: now, in: db)
            return allowed
        }
    }
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

extension SQLiteAppStore {
    public func pushSettings(appID: Int64) throws -> AppPushSettings {
        try pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT push_daily_cap, push_refresh_on_change, push_refresh_minutes FROM apps WHERE id = ?", arguments: [appID]
            ) else {
                return AppPushSettings()
            }
            return AppPushSettings(dailyCap: row["push_daily_cap"], refreshOnChange: row["push_refresh_on_change"], refreshMinutes: row["push_refresh_minutes"])
        }
    }

    public func setPushSettings(_ settings: AppPushSettings, appID: Int64, actor: AuditActor, now: Date) throws {
        try pool.write { db in
            try db.execute(
                sql: "UPDATE apps SET push_daily_cap = ?, push_refresh_on_change = ?, push_refresh_minutes = ? WHERE id = ?",
                arguments: [settings.dailyCap, settings.refreshOnChange, settings.refreshMinutes, appID])
            try SQLiteAuditLogStore.record(actor, .appPushSettings(appID: appID, settings), at: now, in: db)
        }
    }
}

