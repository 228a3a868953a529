import Foundation
import HeraldStorage
import HeraldDomain
import NIOFoundationCompat
import PostgresNIO

/// Apps, test devices, allowed origins and push settings on PostgreSQL.
struct PostgresAppStore: AppStore {
    let database: PostgresAppDatabase

    private static let columns = "id, name, platforms, min_interval_seconds, created_at"

    private static func app(_ row: PostgresRow) throws -> App {
        let (id, name, platforms, minInterval, createdAt) = try row.decode((Int64, String, String, Int64, Date).self)
        return App(
            id: id, name: name, platforms: platforms.split(separator: ",").compactMap { Platform(rawValue: String($0)) },
            minIntervalSeconds: Int(clamping: minInterval), createdAt: createdAt)
    }

    private static func device(_ row: PostgresRow) throws -> TestDevice {
        let (id, appID, installationID, name, createdAt) = try row.decode((Int64, Int64, String, String, Date).self)
        return TestDevice(id: id, appID: appID, installationID: installationID, name: name, createdAt: createdAt)
    }

    private static func origin(_ row: PostgresRow) throws -> AllowedOrigin {
        let (id, appID, origin, createdAt) = try row.decode((Int64, Int64, String, Date).self)
        return AllowedOrigin(id: id, appID: appID, origin: origin, createdAt: createdAt)
    }

    func create(name: String, platforms: [Platform], actor: AuditActor, now: Date) throws -> App {
        let stored = platforms.map(\.rawValue).joined(separator: ",")
        return try database.write { db in
            // The unique index on the folded name decides, so two instances creating one name cannot both succeed.
            guard let row = try db.rows(
                """
                INSERT INTO apps (name, platforms, created_at) VALUES (\(name), \(stored), \(now.storedPrecision))
                ON CONFLICT DO NOTHING RETURNING \(unescaped: Self.columns)
                """
            ).first else { throw AppStoreError.nameTaken }
            let app = try Self.app(row)
            try PostgresAuditLogStore.record(actor, .appCreated(id: app.id, name: name, platforms: platforms), at: now, in: db)
            return app
        }
    }

    func find(id: Int64) throws -> App? {
        try database.read { try $0.rows("SELECT \(unescaped: Self.columns) FROM apps WHERE id = \(id)").first.map(Self.app) }
    }

    func all() throws -> [App] {
        try database.read { try $0.rows("SELECT \(unescaped: Self.columns) FROM apps ORDER BY herald_fold(name) COLLATE \"C\"").map(Self.app) }
    }

    func setMinInterval(appID: Int64, seconds: Int, actor: AuditActor, now: Date) throws {
        try database.write { db in
            try db.execute("UPDATE apps SET min_interval_seconds = \(Int64(seconds)) WHERE id = \(appID)")
            try PostgresAuditLogStore.record(actor, .appMinimumInterval(appID: appID, seconds: seconds), at: now, in: db)
        }
    }

    func testDevices(appID: Int64) throws -> [TestDevice] {
        try database.read {
            try $0.rows(
                """
                SELECT id, app_id, installation_id, name, created_at FROM test_devices WHERE app_id = \(appID)
                ORDER BY herald_fold(name) COLLATE "C"
                """
            ).map(Self.device)
        }
    }

    func addTestDevice(appID: Int64, installationID: String, name: String, actor: AuditActor, now: Date) throws -> TestDevice {
        try database.write { db in
            // Two admins adding at once, on two instances: the second counts the first's device.
            try db.lock("test_devices \(appID)")
            let devices = try db.one("SELECT count(*) FROM test_devices WHERE app_id = \(appID)", as: Int64.self) ?? 0
            let taken = try db.one(
                "SELECT count(*) FROM test_devices WHERE app_id = \(appID) AND installation_id = \(installationID)", as: Int64.self) ?? 0
            if taken > 0 { throw AppStoreError.deviceTaken }
            if devices >= TestDevice.maxPerApp { throw AppStoreError.tooManyDevices }
            guard let row = try db.rows(
                """
                INSERT INTO test_devices (app_id, installation_id, name, created_at)
                VALUES (\(appID), \(installationID), \(name), \(now.storedPrecision))
                ON CONFLICT (app_id, installation_id) DO NOTHING
                RETURNING id, app_id, installation_id, name, created_at
                """
            ).first else { throw AppStoreError.deviceTaken }
            let device = try Self.device(row)
            try PostgresAuditLogStore.record(
                actor, .testDevice(added: true, name: name, appID: appID, installationID: installationID), at: now, in: db)
            return device
        }
    }

    func removeTestDevice(id: Int64, appID: Int64, actor: AuditActor, now: Date) throws {
        try database.write { db in
            guard let row = try db.rows(
                """
                DELETE FROM test_devices WHERE id = \(id) AND app_id = \(appID)
                RETURNING id, app_id, installation_id, name, created_at
                """
            ).first else { return }
            let device = try Self.device(row)
            try PostgresAuditLogStore.record(
                actor, .testDevice(added: false, name: device.name, appID: appID, installationID: device.installationID), at: now, in: db)
        }
    }

    func origins(appID: Int64) throws -> [AllowedOrigin] {
        try database.read {
            try $0.rows(
                "SELECT id, app_id, origin, created_at FROM app_origins WHERE app_id = \(appID) ORDER BY origin COLLATE \"C\""
            ).map(Self.origin)
        }
    }

    func allOrigins() throws -> [AllowedOrigin] {
        try database.read { try $0.rows("SELECT id, app_id, origin, created_at FROM app_origins").map(Self.origin) }
    }

    func addOrigin(appID: Int64, origin: String, actor: AuditActor, now: Date) throws -> AllowedOrigin {
        try database.write { db in
            // Two admins adding at once, on two instances: the second counts after the first commits.
            try db.lock("app_origins \(appID)")
            let allowed = try db.one("SELECT count(*) FROM app_origins WHERE app_id = \(appID)", as: Int64.self) ?? 0
            let taken = try db.one("SELECT count(*) FROM app_origins WHERE app_id = \(appID) AND origin = \(origin)", as: Int64.self) ?? 0
            if taken > 0 { throw AppStoreError.originTaken }
            if allowed >= AllowedOrigin.maxPerApp { throw AppStoreError.tooManyOrigins }
            guard let row = try db.rows(
                """
                INSERT INTO app_origins (app_id, origin, created_at) VALUES (\(appID), \(origin), \(now.storedPrecision))
                RETURNING id, app_id, origin, created_at
                """
            ).first else { throw AppStoreError.originTaken }
            let added = try Self.origin(row)
            try PostgresAuditLogStore.record(actor, .origin(added: true, appID: appID, origin: origin), at: now, in: db)
            return added
        }
    }

    @discardableResult
    func removeOrigin(id: Int64, appID: Int64, actor: AuditActor, now: Date) throws -> AllowedOrigin? {
        try database.write { db in
            guard let row = try db.rows(
                "DELETE FROM app_origins WHERE id = \(id) AND app_id = \(appID) RETURNING id, app_id, origin, created_at"
            ).first else { return nil }
            let allowed = try Self.origin(row)
            try PostgresAuditLogStore.record(actor, .origin(added: false, appID: appID, origin: allowed.origin), at: now, in: db)
            return allowed
        }
    }

    func pushSettings(appID: Int64) throws -> AppPushSettings {
        try database.read { db in
            guard let row = try db.rows("SELECT push_daily_cap, push_refresh_on_change, push_refresh_minutes FROM apps WHERE id = \(appID)").first else {
                return AppPushSettings()
            }
            let (cap, refresh, minutes) = try row.decode((Int64?, Bool, Int32).self)
            return AppPushSettings(dailyCap: cap.map { Int(clamping: $0) }, refreshOnChange: refresh, refreshMinutes: Int(minutes))
        }
    }

    func setPushSettings(_ settings: AppPushSettings, appID: Int64, actor: AuditActor, now: Date) throws {
        try database.write { db in
            try db.execute(
                """
                UPDATE apps SET push_daily_cap = \(settings.dailyCap.map(Int64.init)), push_refresh_on_change = \(settings.refreshOnChange),
                    push_refresh_minutes = \(Int64(settings.refreshMinutes))
                WHERE id = \(appID)
                """)
            try PostgresAuditLogStore.record(actor, .appPushSettings(appID: appID, settings), at: now, in: db)
        }
    }
}
