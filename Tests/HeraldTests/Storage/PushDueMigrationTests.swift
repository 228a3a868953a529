import Foundation
import GRDB
import HeraldDomain
@testable import HeraldSQLite
@testable import HeraldStorage
import TestSupport
import Testing

/// Migration 0019 on a database an earlier Herald left: the outbox's due times, text until then, become
/// milliseconds that compare as the instants do.
@Suite("Push due times migrated to numbers")
struct PushDueMigrationTests {
    @Test("Pending rows keep their instant to the millisecond; one the old text put in the year 10000 goes to the end of the range, not first")
    func migration() throws {
        let folder = try TemporaryFolder()
        let (before, path) = try TestApp.database(migratedBefore: "0019", in: folder)
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let shop = try TestApp.insertApp(named: "Shop", now: now, in: before)
        let campaign = try TestApp.insertCampaign(Campaign(app: shop, name: "Morning", push: PushNotification(title: "Hi")), now: now, in: before)
        // Due times as GRDB wrote them before 0019, one with the five-digit year a device-time start near the end made.
        let written = ["2026-09-21 09:00:00.123", "2026-09-20 23:59:59.999", "10000-01-01 08:00:00.000", "9999-12-31 23:00:00.000"]
        try before.pool.write { db in
            for (index, due) in written.enumerated() {
                try db.execute(
                    sql: """
                        INSERT INTO push_outbox (app_id, campaign_id, installation_id, provider, token, platform, due_at, state)
                        VALUES (?, ?, ?, 'apns', ?, 'ios', ?, 'pending')
                        """,
                    arguments: [shop, campaign, "iid-\(index)", "aa0\(index)", due])
            }
        }
        let oldOrder = try before.pool.read { db in
            try String.fetchAll(db, sql: "SELECT installation_id FROM push_outbox WHERE state = 'pending' ORDER BY due_at")
        }
        #expect(oldOrder.first == "iid-2", "the old text put the year 10000 first")
        try before.close()

        let after = try SQLiteAppDatabase(path: path, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try after.migrate()
        let stored = try after.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT installation_id, due_at_ms FROM push_outbox ORDER BY installation_id").map { ($0[0] as String, $0[1] as Int64) }
        }
        #expect(stored.map(\.1) == [
            try #require(UTCTime.date(rfc3339: "2026-09-21T09:00:00.123Z")).storedMilliseconds,
            try #require(UTCTime.date(rfc3339: "2026-09-20T23:59:59.999Z")).storedMilliseconds,
            UTCTime.supported.upperBound.storedMilliseconds,
            try #require(UTCTime.date(rfc3339: "9999-12-31T23:00:00Z")).storedMilliseconds,
        ])
        #expect(try after.pushOutbox.nextDue() == UTCTime.date(rfc3339: "2026-09-20T23:59:59.999Z"))
        let claimed = try after.pushOutbox.claim(limit: 10, now: UTCTime.date(rfc3339: "2027-01-01T00:00:00Z")!)
        #expect(claimed.map(\.installationID) == ["iid-1", "iid-0"], "in the instants' order; nothing from the year 10000")
        try after.close()
    }
}
