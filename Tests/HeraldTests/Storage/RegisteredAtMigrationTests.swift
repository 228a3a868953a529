import Foundation
import GRDB
import HeraldDomain
@testable import HeraldSQLite
@testable import HeraldStorage
import TestSupport
import Testing

/// Migration 0023 on a database an earlier Herald left: installations gain the time they last registered,
/// which retention expires them by.
@Suite("Installations' registration times migrated")
struct RegisteredAtMigrationTests {
    @Test("Installations stored before count as registered when they were last updated, so the first retention run after the upgrade deletes only those that were idle for the whole period")
    func migration() throws {
        let folder = try TemporaryFolder()
        let (before, path) = try TestApp.database(migratedBefore: "0023", in: folder)
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let shop = try TestApp.insertApp(named: "Shop", platforms: "android", now: now, in: before)
        let updated = [("active-phone", now.addingTimeInterval(-3 * 86_400)), ("old-phone", now.addingTimeInterval(-500 * 86_400))]
        try before.pool.write { db in
            for (id, time) in updated {
                try db.execute(
                    sql: """
                        INSERT INTO installations (app_id, installation_id, platform, push_provider, push_token, notifications_allowed, created_at, updated_at)
                        VALUES (?, ?, 'android', 'fcm', ?, 1, ?, ?)
                        """,
                    arguments: [shop, id, "tok-\(id)", now.addingTimeInterval(-600 * 86_400), time])
            }
        }
        try before.close()

        let after = try SQLiteAppDatabase(path: path, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try after.migrate()
        for (id, time) in updated {
            #expect(try after.installations.installation(appID: shop, id: id)?.registeredAt == time, "\(id)")
        }
        let run = try Retention(database: after, days: 400, pauseBetweenSteps: .zero).run(now: now)
        #expect(run?.installationsDeleted == 1)
        #expect(try after.installations.installation(appID: shop, id: "active-phone") != nil)
        #expect(try after.installations.installation(appID: shop, id: "old-phone") == nil)
        try after.close()
    }
}
