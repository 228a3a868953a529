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

/// A named installation that sees the app's "test on device" campaigns at once.
public struct TestDevice: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var appID: Int64
    public var installationID: String
    public var name: String
    public var createdAt: Date
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

/// The `apps` table.
public struct AppStore: Sendable {
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
            try AuditLogStore.record(
                actor, action: "app.create", subject: "app \(app.id) \(name)", details: platforms.map(\.rawValue).joined(separator: ", "),
                at: now, in: db)
            return app
        }
    }

    public func find(id: Int64) throws -> App? {
        try pool.read { try App.fetchOne($0, sql: "SELECT * FROM apps WHERE id = ?", arguments: [id]) }
    }

    public func all() throws -> [App] {
        try pool.read { try App.fetchAll($0, sql: "SELECT * FROM apps ORDER BY name COLLATE NOCASE") }
    }

    public func setMinInterval(appID: Int64, seconds: Int, actor: AuditActor, now: Date) throws {
        try pool.write { db in
            try db.execute(sql: "UPDATE apps SET min_interval_seconds = ? WHERE id = ?", arguments: [seconds, appID])
            try AuditLogStore.record(actor, action: "app.settings", subject: "app \(appID)", details: "minimum interval \(seconds) s", at: now, in: db)
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
            try db.execute(
                sql: "INSERT INTO test_devices (app_id, installation_id, name, created_at) VALUES (?, ?, ?, ?)",
                arguments: [appID, installationID, name, now])
            let device = TestDevice(id: db.lastInsertedRowID, appID: appID, installationID: installationID, name: name, createdAt: now)
            try AuditLogStore.record(actor, action: "device.add", subject: "test device \(name) of app \(appID)", details: installationID, at: now, in: db)
            return device
        }
    }

    public func removeTestDevice(id: Int64, appID: Int64, actor: AuditActor, now: Date) throws {
        try pool.write { db in
            guard let device = try TestDevice.fetchOne(
                db, sql: "SELECT * FROM test_devices WHERE id = ? AND app_id = ?", arguments: [id, appID]) else { return }
            try db.execute(sql: "DELETE FROM test_devices WHERE id = ?", arguments: [id])
            try AuditLogStore.record(actor, action: "device.remove", subject: "test device \(device.name) of app \(appID)", details: device.installationID, at: now, in: db)
        }
    }
}

public enum AppStoreError: Error, Equatable {
    case nameTaken
    case deviceTaken
}
