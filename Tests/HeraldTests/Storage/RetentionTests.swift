import Foundation
import GRDB
import HeraldDomain
import HeraldHTTP
@testable import HeraldSQLite
import HeraldStorage
import TestSupport
import Testing

@Suite("Data lifecycle: retention of raw events and the file size")
struct RetentionTests {
    /// `devices: false` leaves out installation ids, whose per-day device bitmaps (kept for reports) would grow the file by design.
    static func impressions(_ count: Int, campaign: Int64, app: Int64, at date: Date, padding: Int = 0, devices: Bool = true) -> [Event] {
        (0..<count).map { index in
            Event(
                id: UUID().uuidString, appID: app, campaignID: campaign, type: .impression, occurredAt: date, platform: "ios",
                installationID: devices ? "device-\(index)" : nil, detail: "", url: padding > 0 ? "https://example.com/" + String(repeating: "p", count: padding) : nil,
                test: false)
        }
    }

    @Test("Past the retention period old raw events are deleted in several steps while ingestion goes on, new ones stay and report totals do not change")
    func retentionKeepsReports() async throws {
        // Given campaigns with events received now, and a report and stats over their days
        let fixture = try await ReportTests.fixture()
        let app = fixture.app
        let reportBefore = ReportTests.section(
            fixture.browser.get("/campaigns/\(fixture.sale)/report?\(ReportTests.range)").text, #"<section class="report-totals""#)
        let statsBefore = try fixture.statsTotals(fixture.sale, ReportTests.range)
        let storedBefore = try app.database.events.rawEventSummary().count
        #expect(storedBefore > 5)

        // When time moves past 400 days (for retention and ingestion; the console's clock stays, so the
        // browser's session does too) and retention runs in steps of 5 while batches keep arriving
        let now = app.clock.now.addingTimeInterval(401 * 86_400)
        let retention = Retention(database: app.database, days: 400, rowsPerStep: 5, pauseBetweenSteps: .milliseconds(2))
        let database = app.database, sale = fixture.sale, shop = fixture.shop
        let ingestion = Task.detached {
            var accepted = 0
            for _ in 0..<20 {
                accepted += try database.events.ingest(Self.impressions(3, campaign: sale, app: shop, at: now), now: now).accepted
            }
            return accepted
        }
        let run = try #require(try retention.run(now: now))
        let acceptedMeanwhile = try await ingestion.value

        // Then every old raw event is gone, in more than one step, and every new one is kept
        #expect(run.eventsDeleted == storedBefore)
        #expect(run.steps > 1)
        #expect(retention.latestRun == run)
        #expect(acceptedMeanwhile == 60)
        let summary = try app.database.events.rawEventSummary()
        #expect(summary.count == 60)
        #expect(summary.oldestReceivedAt.map(UTCTime.timestamp) == UTCTime.timestamp(now))
        // And the report and the stats for the old days read the same
        let reportAfter = ReportTests.section(
            fixture.browser.get("/campaigns/\(fixture.sale)/report?\(ReportTests.range)").text, #"<section class="report-totals""#)
        #expect(reportAfter == reportBefore)
        #expect(ReportTests.metric(reportAfter, "Impressions") == "4")
        let statsAfter = try fixture.statsTotals(fixture.sale, ReportTests.range)
        #expect(NSDictionary(dictionary: statsAfter) == NSDictionary(dictionary: statsBefore))
        // And a second run finds nothing more to delete
        #expect(try retention.run(now: now)?.eventsDeleted == 0)
    }

    @Test("Retention 0 keeps raw events forever")
    func keepForever() async throws {
        let app = try await TestApp()
        _ = try app.database.events.ingest(Self.impressions(3, campaign: 1, app: 1, at: app.clock.now), now: app.clock.now)
        let retention = Retention(database: app.database, days: 0)
        #expect(try retention.run(now: app.clock.now.addingTimeInterval(100 * 365 * 86_400)) == nil)
        #expect(try app.database.events.rawEventSummary().count == 3)
    }

    @Test("Under steady ingestion with retention the database file stops growing")
    func fileSizeLevelsOff() async throws {
        // Given a database in incremental auto-vacuum mode
        let app = try await TestApp()
        let mode = try await app.database.pool.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") }
        #expect(mode == 2, "INCREMENTAL")
        let retention = Retention(database: app.database, days: 3, rowsPerStep: 500, pauseBetweenSteps: .zero)
        // When each day brings the same events and retention runs daily, for 24 days
        var pages: [Int] = []
        for _ in 0..<24 {
            let now = app.clock.now
            _ = try app.database.events.ingest(Self.impressions(400, campaign: 1, app: 1, at: now, padding: 200, devices: false), now: now)
            try retention.run(now: now)
            pages.append(try app.database.pageCounts().pages)
            app.clock.advance(86_400)
        }
        // Then once retention starts deleting the file no longer grows: the last days are within 5 % of the
        // largest early on (the daily rollup rows that stay, and pages filling differently from day to day);
        // without retention the file grows by about 50 pages a day, 600 over these twelve days.
        let early = try #require(pages[..<10].max())
        let late = try #require(pages[12...].max())
        #expect(late <= early + early / 20, "pages per day: \(pages)")
        #expect(pages[23] > pages[0], "the kept days hold more than one day's events")
        // And the freed pages went back to the file system
        #expect(try app.database.pageCounts().free < 20)
    }

    @Test("Background checkpoints: commits no longer copy the log into the database file, a thread of its own does, and closing stops it")
    func backgroundCheckpoints() async throws {
        let folder = try TemporaryFolder()
        let path = folder.url.appendingPathComponent("herald.sqlite").path
        let database = try SQLiteAppDatabase(path: path, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try database.migrate()
        func ingest(_ batches: Int) throws {
            for _ in 0..<batches {
                _ = try database.events.ingest(Self.impressions(200, campaign: 1, app: 1, at: Date(), padding: 200), now: Date())
            }
        }

        // Given checkpoints in the background every 10 ms
        try database.startBackgroundCheckpoints(every: .milliseconds(10))
        let fileBefore = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0

        // When batches are committed (well past SQLite's 1000-page threshold)
        try ingest(40)

        // Then the thread copies them into the file, and nothing is left behind once it has had its turn
        var copied = false
        for _ in 0..<300 where !copied {
            try await Task.sleep(for: .milliseconds(10))
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            copied = size > fileBefore + 1_000_000
        }
        #expect(copied, "the database file holds the events without a commit having checkpointed")
        #expect(try await database.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM events") } == 8000)
        let autocheckpoint = try await database.pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") }
        #expect(autocheckpoint == 0, "the writer's own checkpoint is off")

        // And closing stops the thread (this returns) and leaves a database that opens and reads back
        try database.close()
        let reopened = try SQLiteAppDatabase(path: path, migrations: repositoryRoot.appendingPathComponent("migrations"))
        #expect(try await reopened.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM events") } == 8000)
        #expect(try walFramesLeft(reopened) == 0)
        try reopened.close()
    }

    private func walFramesLeft(_ database: SQLiteAppDatabase) throws -> Int {
        try database.pool.writeWithoutTransaction { db in
            let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
            return (row?[1] as Int? ?? 0) - (row?[2] as Int? ?? 0)
        }
    }
}
