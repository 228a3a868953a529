import Foundation
import GRDB
import HeraldDomain
@testable import HeraldPostgres
@testable import HeraldSQLite
@testable import HeraldStorage
import PostgresNIO
import TestSupport
import Testing

/// The storage contract for the weeks' sketches (migrations 0018 and PostgreSQL's 0007), on every engine.
extension StorageContractTests {
    /// `body` with the engine's own device rows, in one read.
    static func withDeviceRows<T>(_ database: EngineDatabase, _ body: (any DeviceRows) throws -> T) throws -> T {
        switch database.stores {
        case let sqlite as SQLiteAppDatabase: try sqlite.pool.read { try body(SQLiteDeviceRows(db: $0)) }
        case let postgres as PostgresAppDatabase: try postgres.read { try body(PostgresDeviceRows(db: $0)) }
        default: throw PostgresUnavailable()
        }
    }

    /// Day `offset` after `start`, as stored.
    static func day(_ offset: Int) -> String {
        UTCTime.day(start.addingTimeInterval(Double(offset) * 86_400))
    }

    /// Days -3 to 39 of three campaigns: events drawn at random, of types that make every `DeviceKind`, late
    /// ones (days long past when received) included, as clients send them.
    static func ingestAcrossWeeks(_ database: EngineDatabase) throws -> [Int64] {
        let ids = try eventWorld(database)
        let campaigns = [(ids.shop, ids.sale), (ids.shop, ids.winter), (ids.news, ids.digest)]
        for batch in 0..<8 {
            let events = (0..<300).map { index in
                let (app, campaign) = campaigns.randomElement()!
                let type = [EventType.impression, .click, .conversion].randomElement()!
                return event(
                    "w-\(batch)-\(index)", app: app, campaign: campaign, type, day: Int.random(in: -3..<40),
                    installation: "device-\(Int.random(in: 0..<5_000))", detail: type == .conversion ? "purchase" : "",
                    test: Int.random(in: 0..<8) == 0)
            }
            #expect(try database.stores.events.ingest(events, now: start.addingTimeInterval(40 * 86_400)).accepted == 300)
        }
        return [ids.sale, ids.winter, ids.digest]
    }

    /// The union of the days' own rows from `from` to `to` (inclusive offsets), and their chunk counts summed.
    static func daysUnion(
        _ rows: any DeviceRows, campaigns: [Int64], test: Bool, kind: DeviceKind = .seen, from: Int, to: Int
    ) throws -> (DeviceSketch, Int) {
        let keys = campaigns.flatMap { campaign in (from...to).map { DeviceSketches.Day(campaignID: campaign, test: test, kind: kind, day: day($0)) } }
        var union = DeviceSketch()
        var chunks = 0
        for (_, row) in try rows.sketches(keys, of: .day) {
            row.registers.withUnsafeBytes { union.formUnion($0) }
            chunks += row.chunks
        }
        return (union, chunks)
    }

    @Test("A week's sketch is the union of its days' and its chunk count their sum, erasures included; generated ranges read the same registers and chunks through their weeks as through their days, and a report estimates from them",
          arguments: StorageEngine.available)
    func weeksHoldTheUnionOfTheirDays(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let campaigns = try Self.ingestAcrossWeeks(database)
        // Erasures empty some bitmap chunks (a day's test devices are a few, often one to a chunk), taking them
        // from their days' and weeks' chunk counts.
        func chunks() throws -> Int {
            try Self.withDeviceRows(database) { rows in
                try [false, true].flatMap { test in
                    try DeviceKind.allCases.map { try rows.chunkCount(DeviceRange(campaignID: nil, from: Self.day(-3), to: Self.day(39), test: test, kind: $0)) }
                }.reduce(0, +)
            }
        }
        let chunksBefore = try chunks()
        for app in try database.stores.apps.all().map(\.id) {
            for number in stride(from: 0, to: 5_000, by: 5) {
                _ = try database.stores.events.eraseInstallation("device-\(number)", appID: app, actor: .commandLine, now: Self.start)
            }
        }
        let chunksAfter = try chunks()
        #expect(chunksAfter < chunksBefore, "the erasures emptied some chunks: \(chunksBefore) then \(chunksAfter)")
        try Self.withDeviceRows(database) { rows in
            var weeks = 0
            for campaign in campaigns {
                for test in [false, true] {
                  for kind in DeviceKind.allCases {
                    let days = (-3..<40).map { DeviceSketches.Day(campaignID: campaign, test: test, kind: kind, day: Self.day($0)) }
                    let stored = try rows.sketches(days, of: .day)
                    let byWeek = Dictionary(grouping: stored, by: { $0.key.week })
                    let weekRows = try rows.sketches(Array(Set(days.compactMap(\.week))), of: .week)
                    #expect(weekRows.count == byWeek.count, "campaign \(campaign), test \(test): a week row for each week with days")
                    for (week, dayRows) in byWeek {
                        var union = DeviceSketch()
                        for row in dayRows { row.value.registers.withUnsafeBytes { union.formUnion($0) } }
                        let row = try #require(week.flatMap { weekRows[$0] })
                        #expect(DeviceSketch(blob: row.registers) == union, "the registers of \(week as Any)")
                        #expect(row.chunks == dayRows.map(\.value.chunks).reduce(0, +), "the chunks of \(week as Any)")
                        weeks += 1
                    }
                  }
                }
            }
            #expect(weeks >= 90)
            for _ in 0..<60 {
                let from = Int.random(in: -6..<44), to = from + Int.random(in: 0..<50)
                for campaign in [nil] + campaigns.map(Optional.some) {
                    for test in [false, true] {
                        let kind = DeviceKind.allCases.randomElement()!
                        let range = DeviceRange(campaignID: campaign, from: Self.day(from), to: Self.day(to), test: test, kind: kind)
                        var read = DeviceSketch()
                        try rows.forEachSketch(range) { read.formUnion($0) }
                        let (expected, chunks) = try Self.daysUnion(
                            rows, campaigns: campaign.map { [$0] } ?? campaigns, test: test, kind: kind, from: from, to: to)
                        #expect(read == expected, "the registers of \(range)")
                        #expect(try rows.chunkCount(range) == chunks, "the chunks of \(range)")
                    }
                }
            }
        }
        // The report's own reading: on PostgreSQL one statement reads the weeks and days ahead.
        var estimating = database.stores.events
        estimating.exactDeviceChunkLimit = 0
        for (from, to) in [(-3, 39), (0, 6), (1, 13), (-1, 30), (5, 5), (2, 20)] {
            for campaign in [nil] + campaigns.map(Optional.some) {
                let counts = try estimating.counts(campaignID: campaign, from: Self.day(from), to: Self.day(to))
                let (real, realChunks) = try Self.withDeviceRows(database) {
                    try Self.daysUnion($0, campaigns: campaign.map { [$0] } ?? campaigns, test: false, from: from, to: to)
                }
                let (test, testChunks) = try Self.withDeviceRows(database) {
                    try Self.daysUnion($0, campaigns: campaign.map { [$0] } ?? campaigns, test: true, from: from, to: to)
                }
                // A range whose chunks the erasures emptied has no device left, whatever its sketch (which
                // cannot forget) still estimates.
                #expect(counts.uniqueDevices == (realChunks == 0 ? 0 : real.estimate), "days \(from) to \(to) of \(campaign as Any)")
                #expect(counts.uniqueDevicesEstimated == (realChunks > 0), "days \(from) to \(to) of \(campaign as Any)")
                #expect(counts.uniqueTestDevices == (testChunks == 0 ? 0 : test.estimate), "test devices, days \(from) to \(to) of \(campaign as Any)")
                guard let campaign else {
                    #expect(counts.funnelDevices == nil)
                    continue
                }
                let (exposed, exposedChunks) = try Self.withDeviceRows(database) {
                    try Self.daysUnion($0, campaigns: [campaign], test: false, kind: .exposed, from: from, to: to)
                }
                let (converted, convertedChunks) = try Self.withDeviceRows(database) {
                    try Self.daysUnion($0, campaigns: [campaign], test: false, kind: .converted, from: from, to: to)
                }
                #expect(counts.funnelDevices == EventCounts.FunnelDevices(
                    exposed: exposedChunks == 0 ? 0 : exposed.estimate, converted: convertedChunks == 0 ? 0 : converted.estimate,
                    estimated: exposedChunks > 0 || convertedChunks > 0), "the funnel of days \(from) to \(to) of \(campaign)")
            }
        }
    }

    @Test("Migrating again to the weeks' sketches (SQLite 0018, PostgreSQL 0007) makes from the days exactly the weeks ingestion kept",
          arguments: StorageEngine.available)
    func theWeeksMigrationMakesWhatIngestionKeeps(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        _ = try Self.ingestAcrossWeeks(database)
        // As 0018 and 0007 found the days: every row `seen`, the kind the migrations after them added.
        let onlySeen = ["DELETE FROM device_sketches WHERE kind <> 'seen'", "DELETE FROM device_week_sketches WHERE kind <> 'seen'"]
        switch database.stores {
        case let sqlite as SQLiteAppDatabase: try sqlite.pool.write { db in for sql in onlySeen { try db.execute(sql: sql) } }
        case let postgres as PostgresAppDatabase: try postgres.write { db in for sql in onlySeen { try db.execute(PostgresQuery(unsafeSQL: sql)) } }
        default: throw PostgresUnavailable()
        }
        func weeks(_ stores: any Stores) throws -> [[String]] {
            let sql = "SELECT campaign_id, test, week, chunks, registers FROM device_week_sketches ORDER BY campaign_id, test, week"
            switch stores {
            case let sqlite as SQLiteAppDatabase:
                return try sqlite.pool.read { db in
                    try Row.fetchAll(db, sql: sql).map { row in
                        let registers: Data = row[4]
                        return ["\(row[0] as Int64)", "\(row[1] as Bool)", row[2], "\(row[3] as Int)", registers.base64EncodedString()]
                    }
                }
            case let postgres as PostgresAppDatabase:
                return try postgres.read { db in
                    try db.rows(PostgresQuery(unsafeSQL: sql)).map { row in
                        let (campaign, test, week, chunks, registers) = try row.decode((Int64, Bool, String, Int64, ByteBuffer).self)
                        return ["\(campaign)", "\(test)", week, "\(chunks)", Data(buffer: registers).base64EncodedString()]
                    }
                }
            default: throw PostgresUnavailable()
            }
        }
        let kept = try weeks(database.stores)
        #expect(kept.count >= 30)
        switch database.stores {
        case let sqlite as SQLiteAppDatabase:
            try sqlite.pool.write { db in
                try db.execute(sql: "DROP TABLE device_week_sketches")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = '0018_device_week_sketches'")
            }
        case let postgres as PostgresAppDatabase:
            try postgres.write { db in
                try db.execute("DROP TABLE device_week_sketches")
                try db.execute("DELETE FROM herald_migrations WHERE identifier = '0007_week_sketches'")
            }
        default: throw PostgresUnavailable()
        }
        #expect(try weeks(database.open()) == kept)
    }
}
