import Foundation
import GRDB
import HeraldDomain
@testable import HeraldSQLite
@testable import HeraldStorage
import TestSupport
import Testing

@Suite("Unique devices: per-app device numbers and per-day bitmaps")
struct DeviceBitmapTests {
    static let migrations = repositoryRoot.appendingPathComponent("migrations")
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static func database(in folder: TemporaryFolder) throws -> SQLiteAppDatabase {
        let database = try SQLiteAppDatabase(path: folder.url.appendingPathComponent("herald.sqlite").path, migrations: migrations)
        try database.migrate()
        return database
    }

    /// Two apps with one campaign each, plus a second campaign in the first.
    static func campaigns(_ database: SQLiteAppDatabase) throws -> (shop: Int64, news: Int64, sale: Int64, winter: Int64, digest: Int64) {
        let shop = try database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: start).id
        let news = try database.apps.create(name: "News", platforms: [.ios], actor: .commandLine, now: start).id
        func campaign(_ app: Int64, _ name: String) throws -> Int64 {
            try database.campaigns.create(
                Campaign(app: app, name: name, message: Message(layout: .modal, title: .init(text: name))),
                state: .published, actor: .commandLine, now: start)
        }
        return (shop, news, try campaign(shop, "Sale"), try campaign(shop, "Winter"), try campaign(news, "Digest"))
    }

    /// The same apps and campaigns written as a schema of before 0015 or 0017 holds them, for the migration tests.
    static func campaignsInEarlierSchema(_ database: SQLiteAppDatabase) throws -> (shop: Int64, news: Int64, sale: Int64, winter: Int64, digest: Int64) {
        let shop = try TestApp.insertApp(named: "Shop", now: start, in: database)
        let news = try TestApp.insertApp(named: "News", now: start, in: database)
        func campaign(_ app: Int64, _ name: String) throws -> Int64 {
            try TestApp.insertCampaign(Campaign(app: app, name: name, message: Message(layout: .modal, title: .init(text: name))), now: start, in: database)
        }
        return (shop, news, try campaign(shop, "Sale"), try campaign(shop, "Winter"), try campaign(news, "Digest"))
    }

    static func event(app: Int64, campaign: Int64, installation: String, day: Int, test: Bool = false, type: EventType = .impression) -> Event {
        Event(
            id: UUID().uuidString, appID: app, campaignID: campaign, type: type,
            occurredAt: start.addingTimeInterval(Double(day) * 86_400), platform: "ios", installationID: installation, detail: "", url: nil,
            test: test)
    }

    @Test("A chunk's stored form: 512 bytes of little-endian words that read back as the same bits; a shorter blob reads as far as it goes")
    func storedForm() {
        var bitmap = DeviceBitmap()
        bitmap.insert(0)
        bitmap.insert(9)
        bitmap.insert(DeviceBitmap.bits - 1)
        let blob = bitmap.blob
        #expect(blob.count == 512 && blob[0] == 0x01 && blob[1] == 0x02 && blob[511] == 0x80 && blob.dropFirst(2).dropLast().allSatisfy { $0 == 0 })
        #expect(DeviceBitmap(blob: blob) == bitmap)
        #expect(DeviceBitmap(blob: blob.prefix(9)).count == 2, "the first whole word only")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var random = DeviceBitmap()
            for _ in 0..<Int.random(in: 0...300, using: &generator) { random.insert(Int.random(in: 0..<DeviceBitmap.bits, using: &generator)) }
            #expect(DeviceBitmap(blob: random.blob) == random)
        }
    }

    @Test("Generated sightings over several chunks, days, campaigns and apps count what a set of the same sightings counts, over any range")
    func countsMatchASet() throws {
        let folder = try TemporaryFolder()
        let database = try Self.database(in: folder)
        let ids = try Self.campaigns(database)
        let campaigns = [(ids.shop, ids.sale), (ids.shop, ids.winter), (ids.news, ids.digest)]
        var generator = SystemRandomNumberGenerator()
        var seen: Set<[String]> = []  // [app, campaign, day, test, installation]
        // Installation numbers past two chunks (4096 each), so unions cross chunk boundaries.
        for _ in 0..<12 {
            let events = (0..<1000).map { _ in
                let (app, campaign) = campaigns.randomElement(using: &generator)!
                let installation = "device-\(Int.random(in: 0..<9000, using: &generator))"
                let day = Int.random(in: 0..<6, using: &generator), test = Int.random(in: 0..<10, using: &generator) == 0
                seen.insert(["\(app)", "\(campaign)", "\(day)", "\(test)", installation])
                return Self.event(app: app, campaign: campaign, installation: installation, day: day, test: test)
            }
            _ = try database.events.ingest(events, now: Self.start)
        }
        for _ in 0..<40 {
            let first = Int.random(in: 0..<6, using: &generator), last = Int.random(in: first..<6, using: &generator)
            let campaign: Int64? = Bool.random(using: &generator) ? nil : campaigns.randomElement(using: &generator)!.1
            let from = UTCTime.day(Self.start.addingTimeInterval(Double(first) * 86_400))
            let to = UTCTime.day(Self.start.addingTimeInterval(Double(last) * 86_400))
            let counts = try database.events.counts(campaignID: campaign, from: from, to: to)
            for test in [false, true] {
                // Devices are per app: the same installation id in two apps is two devices.
                let expected = Set(seen.filter { sighting in
                    (campaign == nil || sighting[1] == "\(campaign!)") && (first...last).contains(Int(sighting[2])!) && sighting[3] == "\(test)"
                }.map { [$0[0], $0[4]] }).count
                #expect((test ? counts.uniqueTestDevices : counts.uniqueDevices) == expected, "campaign \(campaign as Any), days \(first)...\(last), test \(test)")
            }
        }
        try database.close()
    }

    @Test("An erasure clears the installation's bits and forgets its number; the same id in another app stays; coming back it is numbered anew")
    func erasure() async throws {
        let folder = try TemporaryFolder()
        let database = try Self.database(in: folder)
        let ids = try Self.campaigns(database)
        let events = (0..<3).flatMap { day in
            ["gone", "kept"].map { Self.event(app: ids.shop, campaign: ids.sale, installation: $0, day: day) }
        } + [Self.event(app: ids.news, campaign: ids.digest, installation: "gone", day: 0)]
        _ = try database.events.ingest(events, now: Self.start)
        let range = (UTCTime.day(Self.start), UTCTime.day(Self.start.addingTimeInterval(2 * 86_400)))
        #expect(try database.events.counts(campaignID: ids.sale, from: range.0, to: range.1).uniqueDevices == 2)

        _ = try database.events.eraseInstallation("gone", appID: ids.shop, actor: .commandLine, now: Self.start)

        #expect(try database.events.counts(campaignID: ids.sale, from: range.0, to: range.1).uniqueDevices == 1)
        #expect(try database.events.counts(campaignID: ids.digest, from: range.0, to: range.1).uniqueDevices == 1, "another app's device of the same id stays")
        let numbers = try await database.pool.read { try String.fetchAll($0, sql: "SELECT installation_id FROM device_numbers WHERE app_id = ?", arguments: [ids.shop]) }
        #expect(numbers == ["kept"])
        // Coming back, it is a new device with a number never given before
        _ = try database.events.ingest([Self.event(app: ids.shop, campaign: ids.sale, installation: "gone", day: 1)], now: Self.start)
        let renumbered = try await database.pool.read {
            try Int64.fetchAll($0, sql: "SELECT number FROM device_numbers WHERE app_id = ? ORDER BY installation_id", arguments: [ids.shop])
        }
        #expect(renumbered == [2, 1], "gone was 0, kept 1; gone comes back as 2")
        #expect(try database.events.counts(campaignID: ids.sale, from: range.0, to: range.1).uniqueDevices == 2)
        try database.close()
    }

    @Test("Migrating to 0015 turns the device rows into numbers and bitmaps that count what COUNT(DISTINCT) counted, and 0016 drops them")
    func migration() async throws {
        // Given a database before 0015 with device rows of two apps over several days
        let folder = try TemporaryFolder()
        let (before, path) = try TestApp.database(migratedBefore: "0015", in: folder)
        let ids = try Self.campaignsInEarlierSchema(before)
        try await before.pool.write { db in
            for index in 0..<5000 {
                let (campaign, day, test) = [(ids.sale, "2026-09-20", 0), (ids.winter, "2026-09-21", 0), (ids.digest, "2026-09-20", 1)][index % 3]
                try db.execute(
                    sql: "INSERT OR IGNORE INTO campaign_devices (campaign_id, day, test, installation_id) VALUES (?, ?, ?, ?)",
                    arguments: [campaign, index % 7 == 0 ? "2026-09-22" : day, test, "device-\(index % 4500)"])
            }
        }
        @Sendable func distinct(_ db: Database, _ campaign: Int64?, test: Bool) throws -> Int {
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM (SELECT DISTINCT c.app_id, d.installation_id FROM campaign_devices d JOIN campaigns c ON c.id = d.campaign_id
                WHERE (? IS NULL OR d.campaign_id = ?) AND d.test = ?)
                """, arguments: [campaign, campaign, test]) ?? 0
        }
        let cases: [(Int64?, Bool)] = [(ids.sale, false), (ids.winter, false), (ids.digest, true), (nil, false), (nil, true)]
        let expected = try await before.pool.read { db in try cases.map { try distinct(db, $0.0, test: $0.1) } }
        #expect(expected.allSatisfy { $0 > 0 })
        try before.close()

        // When this Herald migrates it
        let after = try SQLiteAppDatabase(path: path, migrations: Self.migrations)
        try after.migrate()

        // Then every count is as it was, and the old table is gone
        for ((campaign, test), count) in zip(cases, expected) {
            let counts = try after.events.counts(campaignID: campaign, from: "2026-09-01", to: "2026-09-30")
            #expect((test ? counts.uniqueTestDevices : counts.uniqueDevices) == count, "campaign \(campaign as Any), test \(test)")
        }
        let tables = try await after.pool.read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE name = 'campaign_devices'") }
        #expect(tables.isEmpty)
        // And new devices are numbered after the converted ones
        _ = try after.events.ingest([Self.event(app: ids.shop, campaign: ids.sale, installation: "new", day: 0)], now: Self.start)
        let numbers = try await after.pool.read { db in
            (try Int64.fetchOne(db, sql: "SELECT number FROM device_numbers WHERE installation_id = 'new'"),
             try Int64.fetchOne(db, sql: "SELECT MAX(number) FROM device_numbers WHERE app_id = ? AND installation_id != 'new'", arguments: [ids.shop]))
        }
        #expect(numbers.0 == (numbers.1 ?? -1) + 1)
        try after.close()
    }
}
