import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `apps` table.
struct SQLiteAppStore: AppStore {
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

extension App: FetchableRecord {
    public init(row: Row) throws {
        let stored: String = row["platforms"]
        self.init(
            id: row["id"], name: row["name"], platforms: stored.split(separator: ",").compactMap { Platform(rawValue: String($0)) },
            minIntervalSeconds: row["min_interval_seconds"], createdAt: row["created_at"])
    }
}

extension TestDevice: FetchableRecord {
    public init(row: Row) throws {
        self.init(
            id: row["id"], appID: row["app_id"], installationID: row["installation_id"], name: row["name"], createdAt: row["created_at"])
    }
}

extension AllowedOrigin: FetchableRecord {
    public init(row: Row) throws {
        self.init(id: row["id"], appID: row["app_id"], origin: row["origin"], createdAt: row["created_at"])
    }
}
