import Foundation
import HeraldDomain
import NIOCore
@testable import HeraldPostgres
@testable import HeraldStorage
import PostgresNIO
import PropertyBased
import Synchronization
import TestSupport
import Testing

/// The storage contract for events: ingestion, rollups, unique devices, erasure and retention, on every engine.
extension StorageContractTests {
    /// `start` is 2026-09-21T14:13:20.123Z; day `n` is that many days after it.
    static func event(
        _ id: String, app: Int64, campaign: Int64, _ type: EventType = .impression, day: Int = 0, platform: String = "ios",
        installation: String? = nil, detail: String = "", test: Bool = false, language: String? = nil, url: String? = nil
    ) -> Event {
        Event(
            id: id, appID: app, campaignID: campaign, type: type, occurredAt: start.addingTimeInterval(Double(day) * 86_400),
            platform: platform, installationID: installation, detail: detail, url: url, test: test, language: language)
    }

    /// Two apps; Sale and Winter in the first, Digest in the second.
    static func eventWorld(_ database: EngineDatabase) throws -> (shop: Int64, news: Int64, sale: Int64, winter: Int64, digest: Int64) {
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: start).id
        let news = try database.stores.apps.create(name: "News", platforms: [.ios], actor: .commandLine, now: start).id
        return (shop, news, try database.makeCampaign(appID: shop, name: "Sale"), try database.makeCampaign(appID: shop, name: "Winter"),
                try database.makeCampaign(appID: news, name: "Digest"))
    }

    @Test(arguments: StorageEngine.available)
    func eventsCountOnceAndRollUpByDayPlatformAndLanguage(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let ids = try Self.eventWorld(database)
        let events = database.stores.events
        let (shop, sale) = (ids.shop, ids.sale)
        let batch = [
            Self.event("e1", app: shop, campaign: sale, installation: "a"),
            Self.event("e2", app: shop, campaign: sale, installation: "b", language: "fa"),
            Self.event("e3", app: shop, campaign: sale, .click, installation: "a", detail: "primary", language: "fa", url: "https://example.com/\u{0}ü"),
            Self.event("e4", app: shop, campaign: sale, .conversion, day: 1, platform: "android", installation: "a", detail: "purchase"),
            Self.event("e5", app: shop, campaign: sale, .conversion, day: 1, platform: "android", installation: "b", detail: "signup"),
            Self.event("e6", app: shop, campaign: sale, .conversion, day: 1, platform: "android", installation: "c", detail: "purchase"),
            Self.event("e7", app: shop, campaign: sale, .dismiss, day: 1, platform: "web", detail: "swipe"),
            Self.event("e8", app: shop, campaign: sale, installation: "tester", test: true),
            // The same id at the same time again in the batch is a duplicate, whatever else it says; at another
            // time, or in another app, it is another event (an event's key is its app, occurrence time and id).
            Self.event("e2", app: shop, campaign: sale, .click, installation: "z", detail: "body"),
            Self.event("e1", app: ids.news, campaign: ids.digest, installation: "a"),
            Self.event("e3", app: shop, campaign: ids.winter, day: 2, installation: "q"),
        ]
        #expect(try events.ingest(batch, now: Self.start) == (10, 1))
        #expect(try events.ingest(Array(batch.prefix(3)), now: Self.start) == (0, 3))
        #expect(try events.ingest([], now: Self.start) == (0, 0))

        let counts = try events.counts(campaignID: sale, from: "2026-09-21", to: "2026-09-22")
        func row(_ day: String, _ platform: String, _ test: Bool, _ type: EventType, _ detail: String, _ count: Int) -> EventCounts.Row {
            EventCounts.Row(campaignID: sale, day: day, platform: platform, test: test, type: type, detail: detail, count: count)
        }
        #expect(counts.inKeyOrder().rows == [
            row("2026-09-21", "ios", false, .click, "primary", 1),
            row("2026-09-21", "ios", false, .impression, "", 2),
            row("2026-09-21", "ios", true, .impression, "", 1),
            row("2026-09-22", "android", false, .conversion, "", 3),
            row("2026-09-22", "web", false, .dismiss, "swipe", 1),
        ])
        #expect(counts.uniqueDevices == 3 && !counts.uniqueDevicesEstimated)
        #expect(counts.uniqueTestDevices == 1 && !counts.uniqueTestDevicesEstimated)
        // Shown to a and b (the tester's impression is a test device's); a, b and c converted. Each device
        // once, whatever its number of events.
        #expect(counts.funnelDevices == EventCounts.FunnelDevices(exposed: 2, converted: 3, estimated: false))
        #expect(counts.topConversions == [.init(event: "purchase", count: 2), .init(event: "signup", count: 1)])
        #expect(counts.otherConversions == 0)
        #expect(counts.topLanguages == [
            .init(language: nil, counts: [.impression: 1, .conversion: 3, .dismiss: 1]),
            .init(language: "fa", counts: [.impression: 1, .click: 1]),
        ])
        #expect(counts.otherLanguages == [:])

        let oneDay = try events.counts(campaignID: sale, from: "2026-09-22", to: "2026-09-22")
        #expect(oneDay.inKeyOrder().rows.map(\.count) == [3, 1] && oneDay.uniqueDevices == 3)
        let all = try events.counts(campaignID: nil, from: "2026-09-21", to: "2026-09-22")
        #expect(all.inKeyOrder().rows.map(\.campaignID) == [sale, sale, sale, sale, sale, ids.digest])
        #expect(all.uniqueDevices == 4, "device a of another app is another device")
        #expect(all.topConversions.isEmpty && all.topLanguages.isEmpty && all.funnelDevices == nil)
        let withoutDevices = try events.counts(campaignID: nil, from: "2026-09-21", to: "2026-09-22", devices: false)
        #expect(withoutDevices.inKeyOrder().rows == all.inKeyOrder().rows && withoutDevices.uniqueDevices == 0)
        var nothing = EventCounts(rows: [], uniqueDevices: 0, uniqueTestDevices: 0)
        nothing.funnelDevices = EventCounts.FunnelDevices(exposed: 0, converted: 0, estimated: false)
        #expect(try events.counts(campaignID: sale, from: "2026-09-23", to: "2026-12-31") == nothing)

        let summary = try events.rawEventSummary()
        #expect(summary.count == 10 && summary.oldestReceivedAt?.asStored == Self.start.asStored)
        #expect(try events.count(installationID: "a") == 4)
        #expect(try events.count(installationID: "z") == 0)
        let push = try database.stores.campaigns.create(
            Campaign(app: shop, name: "Sale push", push: PushNotification(title: "Sale")), state: .draft, actor: .commandLine, now: Self.start)
        #expect(try events.campaignChannels(appID: shop) == [sale: .inApp, ids.winter: .inApp, push: .push])
        #expect(try events.campaignChannels(appID: 9_999) == [:])
    }

    @Test(arguments: StorageEngine.available)
    func discardCountsAddOncePerIDAndRollUpByDayTestAndReason(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let ids = try Self.eventWorld(database)
        let events = database.stores.events
        func discard(
            _ id: String, _ campaign: Int64, _ reason: DiscardReason, _ count: Int, day: String = "2026-09-21", test: Bool = false, app: Int64? = nil
        ) -> Discard {
            Discard(id: id, appID: app ?? ids.shop, campaignID: campaign, reason: reason, day: day, count: count, test: test)
        }
        // Given counts of two campaigns of one app over two days, a test device's, one id twice, and the same id in another app
        let batch = [
            discard("d1", ids.sale, .orientation, 3),
            discard("d2", ids.sale, .orientation, 2, day: "2026-09-22"),
            discard("d3", ids.sale, .throttled, 5),
            discard("d4", ids.sale, .timeout, 1, test: true),
            discard("d1", ids.sale, .delegate, 100),
            discard("d5", ids.winter, .stackFull, 4),
            discard("d1", ids.digest, .ineligible, 7, app: ids.news),
        ]
        // When they are stored with an event, and the same batch is sent again
        let stored = try events.ingest([Self.event("e1", app: ids.shop, campaign: ids.sale)], discards: batch, now: Self.start)
        #expect(stored.events == (1, 0) && stored.discards == (6, 1))
        #expect(try events.ingest([], discards: batch, now: Self.start.addingTimeInterval(3600)).discards == (0, 7))

        // Then each campaign's counts sum them by reason over the range, test devices apart
        let sale = try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22")
        #expect(sale.discards == [.orientation: 5, .throttled: 5] && sale.testDiscards == [.timeout: 1])
        #expect(try events.counts(campaignID: ids.sale, from: "2026-09-22", to: "2026-09-22").discards == [.orientation: 2])
        #expect(try events.counts(campaignID: ids.winter, from: "2026-09-21", to: "2026-09-22").discards == [.stackFull: 4])
        #expect(try events.counts(campaignID: ids.digest, from: "2026-09-21", to: "2026-09-22").discards == [.ineligible: 7])
        #expect(try events.counts(campaignID: ids.sale, from: "2026-09-23", to: "2026-09-30").discards == [:])
        #expect(try events.counts(campaignID: nil, from: "2026-09-21", to: "2026-09-22").discards == [:], "read for one campaign only")
        // And another instance knows the ids
        #expect(try database.open().events.ingest([], discards: [batch[2]], now: Self.start.addingTimeInterval(7200)).discards == (0, 1))

        // When counts arrive more than a week later, the week-old ids are forgotten: one sent again now counts again
        let later = Self.start.addingTimeInterval(8 * 86_400)
        #expect(try events.ingest([], discards: [discard("d9", ids.sale, .ineligible, 1, day: "2026-09-29")], now: later).discards == (1, 0))
        #expect(try events.ingest([], discards: [discard("d2", ids.sale, .orientation, 2, day: "2026-09-22")], now: later).discards == (1, 0))
        #expect(try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-30").discards == [.orientation: 7, .throttled: 5, .ineligible: 1])
    }

    @Test(arguments: StorageEngine.available)
    func duplicatesSentToTwoInstancesCountOnce(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let ids = try Self.eventWorld(database)
        let other = try database.open()
        let batch = (0..<5).map { Self.event("first-\($0)", app: ids.shop, campaign: ids.sale, installation: "device-\($0)") }
        #expect(try database.stores.events.ingest(batch, now: Self.start) == (5, 0))
        #expect(try other.events.ingest(batch, now: Self.start) == (0, 5))

        // The same batch at both instances at once: every event counts once between them.
        let concurrent = (0..<300).map { Self.event("both-\($0)", app: ids.shop, campaign: ids.sale, installation: "device-\($0 % 40)") }
        let discards = (0..<50).map {
            Discard(id: "count-\($0)", appID: ids.shop, campaignID: ids.sale, reason: DiscardReason.allCases[$0 % DiscardReason.allCases.count],
                    day: "2026-09-21", count: 2, test: false)
        }
        let outcomes = Mutex<[BatchIngestCounts]>([])
        let failures = Mutex<[String]>([])
        let handles: [any Stores] = [database.stores, other]
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            do {
                let outcome = try handles[index % 2].events.ingest(concurrent, discards: discards, now: Self.start)
                outcomes.withLock { $0.append(outcome) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(outcomes.withLock { $0.map(\.events.accepted).reduce(0, +) } == 300)
        #expect(outcomes.withLock { $0.map(\.events.duplicates).reduce(0, +) } == 900)
        #expect(outcomes.withLock { $0.map(\.discards.accepted).reduce(0, +) } == 50)
        #expect(outcomes.withLock { $0.map(\.discards.duplicates).reduce(0, +) } == 150)
        for handle in handles {
            let counts = try handle.events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-21")
            #expect(counts.rows.map(\.count) == [305])
            #expect(counts.discards.values.reduce(0, +) == 100)
            #expect(counts.uniqueDevices == 40)
            #expect(try handle.events.rawEventSummary().count == 305)
        }
    }

    @Test(arguments: StorageEngine.available)
    func uniqueDevicesPerPlatform(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let ids = try Self.eventWorld(database)
        let events = database.stores.events
        // Given the sale seen by 3 iOS devices (i1 on both days), 2 Android and 1 web device, and a test device;
        // the winter campaign of the same app by i1 and i4; the digest of another app by i1 (another device there)
        let batch = [
            Self.event("p1", app: ids.shop, campaign: ids.sale, installation: "i1"),
            Self.event("p2", app: ids.shop, campaign: ids.sale, day: 1, installation: "i1"),
            Self.event("p3", app: ids.shop, campaign: ids.sale, installation: "i2"),
            Self.event("p4", app: ids.shop, campaign: ids.sale, .click, day: 1, installation: "i3", detail: "primary"),
            Self.event("p5", app: ids.shop, campaign: ids.sale, platform: "android", installation: "a1"),
            Self.event("p6", app: ids.shop, campaign: ids.sale, day: 1, platform: "android", installation: "a2"),
            Self.event("p7", app: ids.shop, campaign: ids.sale, platform: "web", installation: "w1"),
            Self.event("p8", app: ids.shop, campaign: ids.sale, platform: "android", installation: "tester", test: true),
            Self.event("p9", app: ids.shop, campaign: ids.sale, platform: "web"),
            Self.event("p10", app: ids.shop, campaign: ids.winter, installation: "i1"),
            Self.event("p11", app: ids.shop, campaign: ids.winter, installation: "i4"),
            Self.event("p12", app: ids.news, campaign: ids.digest, installation: "i1"),
        ]
        #expect(try events.ingest(batch, now: Self.start).accepted == batch.count)

        // Then each platform counts its devices, whatever other campaigns and apps saw
        let sale = try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22")
        #expect(sale.uniqueDevices == 6 && sale.uniqueDevicesByPlatform == ["ios": 3, "android": 2, "web": 1])
        #expect(try events.counts(campaignID: ids.sale, from: "2026-09-22", to: "2026-09-22").uniqueDevicesByPlatform == ["ios": 2, "android": 1])
        let all = try events.counts(campaignID: nil, from: "2026-09-21", to: "2026-09-22")
        #expect(all.uniqueDevices == 8 && all.uniqueDevicesByPlatform == ["ios": 5, "android": 2, "web": 1])
        #expect(try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22", devices: false).uniqueDevicesByPlatform.isEmpty)

        // And a range too large to count shares its estimate out as the app's devices are among platforms
        var estimating = database.stores.events
        estimating.exactDeviceChunkLimit = 0
        let estimate = try estimating.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22")
        #expect(estimate.uniqueDevicesEstimated && abs(estimate.uniqueDevices - 6) <= 1, "linear counting is near exact for a few devices")
        // The app's devices: i1 to i4 on iOS; a1, a2 and the tester on Android; w1 on the web
        let shares = ["ios": 4, "android": 3, "web": 1].mapValues { estimate.uniqueDevices * $0 / 8 }
        #expect(estimate.uniqueDevicesByPlatform == shares)

        // And an erased installation leaves its platform's count
        _ = try events.eraseInstallation("i2", appID: ids.shop, actor: .commandLine, now: Self.start)
        #expect(try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22").uniqueDevicesByPlatform == ["ios": 2, "android": 2, "web": 1])
    }

    @Test(arguments: StorageEngine.available)
    func uniqueDevicesAreExactBelowTheChunkLimitAndEstimatedAbove(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let ids = try Self.eventWorld(database)
        let events = database.stores.events
        // 3,000 devices on the first day, 4,000 on the second (1,000 of them seen the day before): over two chunks a day.
        let sightings = (0..<3_000).map { (0, $0) } + (2_000..<6_000).map { (1, $0) }
        for (index, part) in sightings.chunked(1_000).enumerated() {
            let batch = part.map { day, device in
                Self.event("u-\(day)-\(device)", app: ids.shop, campaign: ids.sale, day: day, installation: "device-\(device)", test: device % 1_000 == 0)
            }
            #expect(try events.ingest(batch, now: Self.start).accepted == batch.count, "batch \(index)")
        }
        let exact = try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22")
        #expect(exact.uniqueDevices == 5_994 && exact.uniqueTestDevices == 6)
        #expect(!exact.uniqueDevicesEstimated && !exact.uniqueTestDevicesEstimated)
        #expect(try events.counts(campaignID: ids.sale, from: "2026-09-22", to: "2026-09-22").uniqueDevices == 3_996)

        var estimating = database.stores.events
        estimating.exactDeviceChunkLimit = 0
        let estimate = try estimating.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22")
        #expect(estimate.uniqueDevicesEstimated && estimate.uniqueTestDevicesEstimated)
        #expect(abs(Double(estimate.uniqueDevices - 5_994)) / 5_994 < 0.06, "estimated \(estimate.uniqueDevices)")
        #expect(abs(estimate.uniqueTestDevices - 6) <= 1, "linear counting is near exact for a few devices")
        #expect(estimate.inKeyOrder().rows == exact.inKeyOrder().rows)
        let everywhere = try estimating.counts(campaignID: nil, from: "2026-09-21", to: "2026-09-22")
        #expect(everywhere.uniqueDevicesEstimated && everywhere.uniqueDevices == estimate.uniqueDevices)
    }

    @Test(arguments: StorageEngine.available)
    func erasureRemovesAnInstallationsEventsAndBitsButNotTheRollups(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let ids = try Self.eventWorld(database)
        let events = database.stores.events
        let gone = [
            Self.event("g1", app: ids.shop, campaign: ids.sale, installation: "gone"),
            Self.event("g2", app: ids.shop, campaign: ids.sale, day: 1, installation: "gone"),
            Self.event("g3", app: ids.shop, campaign: ids.winter, installation: "gone"),
        ]
        let kept = [
            Self.event("k1", app: ids.shop, campaign: ids.sale, installation: "kept"),
            Self.event("k2", app: ids.news, campaign: ids.digest, installation: "gone"),
        ]
        #expect(try events.ingest(gone + kept, now: Self.start) == (5, 0))
        let before = try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22")
        #expect(before.uniqueDevices == 2)

        let erasure = try events.eraseInstallation("gone", appID: ids.shop, actor: .commandLine, now: Self.start)
        #expect(erasure == EventErasure(events: 3, registration: false))
        #expect(try events.count(installationID: "gone") == 1, "the other app's installation of that id stays")
        let after = try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-22")
        #expect(after.inKeyOrder().rows == before.inKeyOrder().rows)
        #expect(after.uniqueDevices == 1)
        #expect(try events.counts(campaignID: ids.winter, from: "2026-09-21", to: "2026-09-22").uniqueDevices == 0)
        #expect(try events.counts(campaignID: ids.digest, from: "2026-09-21", to: "2026-09-22").uniqueDevices == 1)
        #expect(try events.rawEventSummary().count == 2)
        let audit = try #require(try database.stores.auditLog.page(offset: 0, limit: 1).first)
        #expect(audit.action == "installation.erase" && audit.details == "3 events")
        #expect(try events.eraseInstallation("gone", appID: ids.shop, actor: .commandLine, now: Self.start).events == 0)
        #expect(try events.eraseInstallation("never", appID: ids.shop, actor: .commandLine, now: Self.start).events == 0)

        // An erased event's id went with it: sent again, it counts again, as a new device.
        #expect(try events.ingest([gone[0]], now: Self.start) == (1, 0))
        #expect(try events.counts(campaignID: ids.sale, from: "2026-09-21", to: "2026-09-21").uniqueDevices == 2)
    }

    /// Receipt times either side of the month's end: the retention cut-off (20 days before `start`) falls on
    /// 1 September at 14:13, so August is wholly expired and September partly.
    static let receipts: [(id: String, received: Date)] = [
        ("aug-30-a", start.addingTimeInterval(-22 * 86_400)),
        ("aug-30-b", start.addingTimeInterval(-22 * 86_400 + 60)),
        ("sep-01", start.addingTimeInterval(-20.2 * 86_400)),
        ("sep-02", start.addingTimeInterval(-19 * 86_400)),
        ("sep-21-a", start),
        ("sep-21-b", start.addingTimeInterval(1)),
    ]

    static func ingestAcrossTheMonthsEnd(_ database: EngineDatabase, _ ids: (shop: Int64, news: Int64, sale: Int64, winter: Int64, digest: Int64)) throws {
        for (id, received) in receipts {
            let event = Self.event(id, app: ids.shop, campaign: ids.sale, day: -25, installation: "device-\(id)")
            #expect(try database.stores.events.ingest([event], now: received) == (1, 0))
        }
    }

    @Test(arguments: StorageEngine.available)
    func retentionDeletesWhatWasReceivedBeforeTheCutoffAcrossTheMonthsEnd(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let ids = try Self.eventWorld(database)
        try Self.ingestAcrossTheMonthsEnd(database, ids)
        let events = database.stores.events
        #expect(try events.rawEventSummary().oldestReceivedAt?.asStored == Self.receipts[0].received.asStored)
        let rollups = try events.counts(campaignID: ids.sale, from: "2026-08-01", to: "2026-09-30")

        let retention = Retention(database: database.stores, days: 20, rowsPerStep: 1, pauseBetweenSteps: .zero)
        let run = try #require(try retention.run(now: Self.start))
        #expect(run == Retention.Run(finishedAt: Self.start, eventsDeleted: 3, installationsDeleted: 0, steps: 5))
        let summary = try events.rawEventSummary()
        #expect(summary.count == 3 && summary.oldestReceivedAt?.asStored == Self.receipts[3].received.asStored)
        #expect(try events.count(installationID: "device-sep-01") == 0)
        #expect(try events.count(installationID: "device-sep-02") == 1)
        #expect(try events.counts(campaignID: ids.sale, from: "2026-08-01", to: "2026-09-30") == rollups, "reports keep their counts")
        #expect(try retention.run(now: Self.start)?.eventsDeleted == 0)

        // An expired event's id went with it: sent again, it counts again.
        #expect(try events.ingest([Self.event("aug-30-a", app: ids.shop, campaign: ids.sale, installation: "device-aug-30-a")], now: Self.start) == (1, 0))
        // The instance that made the dropped month still stores an event received in it, and another one does too.
        #expect(try events.ingest(
            [Self.event("late", app: ids.shop, campaign: ids.sale)], now: Self.receipts[0].received) == (1, 0))
        #expect(try database.open().events.ingest(
            [Self.event("later", app: ids.shop, campaign: ids.sale)], now: Self.receipts[0].received) == (1, 0))
        #expect(try events.deleteRawEvents(receivedBefore: Self.start.addingTimeInterval(-20 * 86_400), limit: 10) == 2)
    }

    @Test("On PostgreSQL, sketches are kept in their rows uncompressed (migration 0006), so a report reads them without TOAST",
          .enabled(if: StorageEngine.postgresURL != nil))
    func postgresKeepsSketchesInTheirRows() throws {
        let database = try EngineDatabase(.postgres)
        let ids = try Self.eventWorld(database)
        let batch = (0..<50).map { Self.event("s-\($0)", app: ids.shop, campaign: ids.sale, installation: "device-\($0)") }
        #expect(try database.stores.events.ingest(batch, now: Self.start).accepted == 50)
        let postgres = try #require(database.stores as? PostgresAppDatabase)
        let (rows, inRow) = try postgres.read { db -> (Int64, Int64) in
            let row = try #require(try db.rows(
                """
                SELECT count(*)::int8, count(*) FILTER (WHERE pg_column_compression(registers) IS NULL AND pg_column_size(registers) > 4096)::int8
                FROM device_sketches
                """
            ).first)
            return try row.decode((Int64, Int64).self)
        }
        #expect(rows > 0 && inRow == rows)
    }

    @Test("Packed rows read back row by row; a packing whose lengths do not add up is an error, not fewer rows")
    func packedBlobsReadBackOrFail() throws {
        let bytes = ByteBuffer(bytes: [1, 2, 3, 4, 5])
        var read: [(Int64, Int64, [UInt8])] = []
        try PackedBlobs(campaigns: [7, 8], chunks: [0, 3], lengths: [3, 2], bytes: bytes).forEach { read.append(($0, $1, Array($2))) }
        #expect(read.map(\.0) == [7, 8] && read.map(\.1) == [0, 3] && read.map(\.2) == [[1, 2, 3], [4, 5]])
        for broken in [
            PackedBlobs(lengths: [3, 3], bytes: bytes), PackedBlobs(lengths: [6, -1], bytes: bytes),
            PackedBlobs(campaigns: [7], chunks: [0], lengths: [3, 2], bytes: bytes),
        ] {
            #expect(throws: PackedBlobs.Mismatch.self) { try broken.forEach { _, _, _ in } }
        }
    }

    @Test("On PostgreSQL, retention drops the wholly expired month's partition and keeps the partly expired one",
          .enabled(if: StorageEngine.postgresURL != nil))
    func postgresRetentionDropsExpiredMonths() throws {
        let database = try EngineDatabase(.postgres)
        let ids = try Self.eventWorld(database)
        let postgres = try #require(database.stores as? PostgresAppDatabase)
        func partitions() throws -> [String] {
            try postgres.read {
                try $0.all(
                    "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass ORDER BY 1",
                    as: String.self)
            }
        }
        try Self.ingestAcrossTheMonthsEnd(database, ids)
        #expect(try partitions() == ["events_2026_08", "events_2026_09"])
        _ = try Retention(database: database.stores, days: 20, rowsPerStep: 1_000, pauseBetweenSteps: .zero).run(now: Self.start)
        #expect(try partitions() == ["events_2026_09"])
        #expect(try postgres.read { try $0.one("SELECT count(*)::int8 FROM events_2026_09", as: Int64.self) } == 3)
        #expect(try postgres.read { try $0.one("SELECT count(*)::int8 FROM event_ids", as: Int64.self) } == 3)
    }
}

/// Generated batches ingested on every engine, each count compared between the engines and with a model.
extension StorageContractTests {
    struct GeneratedEventScenario: Sendable, CustomStringConvertible {
        struct Drawn: Sendable {
            var campaign: Int, id: String, type: EventType, day: Int, seconds: Double, platform: String, installation: String?
            var detail: String, test: Bool, language: String?, url: String?
        }

        /// A discard count: its campaign (0...2), id (from the same few as events', so some repeat), reason, day and count.
        struct DrawnDiscard: Sendable {
            var campaign: Int, id: String, reason: DiscardReason, day: Int, count: Int, test: Bool
        }

        struct Batch: Sendable {
            var events: [Drawn]
            var discards: [DrawnDiscard] = []
            var receivedDay: Int
        }

        var batches: [Batch]
        var erased: [String]
        var retentionDays: Int

        var description: String { "\(batches.count) batches of \(batches.map(\.events.count)), erasing \(erased), retention \(retentionDays) days" }

        static let installations = (0..<40).map { "device-\($0)" }
        static let conversions = (0..<25).map { "goal_\($0)" }

        static func drawn(_ draw: inout Draw, ids: [String], receivedDay: Int) -> Drawn {
            let type = draw.pick(EventType.allCases)
            let detail: String
            switch type {
            case .click: detail = draw.pick(ClickAction.allCases).rawValue
            case .dismiss: detail = draw.pick(DismissType.allCases).rawValue
            case .error: detail = draw.pick(DisplayErrorCode.allCases).rawValue
            case .conversion: detail = draw.pick(conversions)
            default: detail = ""
            }
            let url: String? = type == .click && draw.chance(0.5) ? draw.pick(["https://example.com/a", "x\u{0}y", "https://例え.jp/ü?q=1"]) : nil
            return Drawn(
                // A few times of day, so that an id drawn again is now and then the same event (a retry) and
                // otherwise another event under the same id.
                campaign: draw.int(0...2), id: draw.pick(ids), type: type, day: receivedDay - draw.int(0...3),
                seconds: draw.pick([0, 3_600.25, 86_399.999]),
                platform: draw.pick(["ios", "android", "web"]), installation: draw.chance(0.8) ? draw.pick(installations) : nil, detail: detail,
                test: draw.chance(0.1), language: draw.pick([nil, "fa", "pt-BR", "de", "zh-Hant-TW"]), url: url)
        }

        static var generator: Generator<GeneratedEventScenario, Shrink.None<GeneratedEventScenario>> {
            Generated.cases { draw in
                var ids: [String] = []
                for _ in 0..<80 { ids.append("event-\(draw.int64(0...Int64.max))") }
                var receivedDay = -45
                var batches: [Batch] = []
                for _ in 0..<draw.int(5...25) {
                    receivedDay += draw.int(0...4)
                    var events: [Drawn] = []
                    for _ in 0..<draw.int(0...40) { events.append(drawn(&draw, ids: ids, receivedDay: receivedDay)) }
                    let discards = (0..<draw.int(0...8)).map { _ in
                        DrawnDiscard(
                            campaign: draw.int(0...2), id: draw.pick(ids), reason: draw.pick(DiscardReason.allCases), day: receivedDay - draw.int(0...3),
                            count: draw.chance(0.1) ? DiscardCount.maxCount : draw.int(1...20), test: draw.chance(0.1))
                    }
                    batches.append(Batch(events: events, discards: discards, receivedDay: receivedDay))
                }
                return GeneratedEventScenario(
                    batches: batches, erased: [draw.pick(installations), draw.pick(installations)], retentionDays: draw.int(1...40))
            }
        }
    }

    /// Everything an engine answers about the stored events, to compare between engines.
    struct EventAnswers: Equatable {
        var counts: [EventCounts] = []
        var stored = 0
        var oldest: Date?
        var perInstallation: [Int] = []
    }

    static func answers(_ database: EngineDatabase, campaigns: [Int64]) throws -> EventAnswers {
        var estimating = database.stores.events
        estimating.exactDeviceChunkLimit = 0
        var answers = EventAnswers()
        for campaign in [nil] + campaigns.map(Optional.some) {
            for (from, to) in [("2026-07-01", "2026-10-31"), ("2026-08-20", "2026-09-05"), ("2026-09-01", "2026-09-01")] {
                answers.counts.append(try database.stores.events.counts(campaignID: campaign, from: from, to: to).inKeyOrder())
                answers.counts.append(try estimating.counts(campaignID: campaign, from: from, to: to).inKeyOrder())
            }
        }
        let summary = try database.stores.events.rawEventSummary()
        (answers.stored, answers.oldest) = (summary.count, summary.oldestReceivedAt?.asStored)
        answers.perInstallation = try GeneratedEventScenario.installations.map { try database.stores.events.count(installationID: $0) }
        return answers
    }

    @Test("Generated batches count the same on every engine, and what a model of them says")
    func generatedBatchesCountAlikeOnEveryEngine() throws {
        var run = GeneratedRun("event store on every engine", cases: 4)
        run.run(GeneratedEventScenario.generator) { scenario, run in
            let databases = try StorageEngine.available.map { try EngineDatabase($0) }
            let worlds = try databases.map { try Self.eventWorld($0) }
            run.expect(Set(worlds.map { [$0.sale, $0.winter, $0.digest] }).count == 1, "the engines numbered the campaigns alike", input: scenario)
            guard let world = worlds.first else { return }
            let campaigns = [(world.shop, world.sale), (world.shop, world.winter), (world.news, world.digest)]
            let now = Self.start
            var stored: Set<[String]> = []
            // Discard ids remembered, with when: a write that adds one forgets those received over a week before it.
            var discardIDs: [[String]: Date] = [:]
            var discarded: [Int64: [DiscardReason: Int]] = [:]
            var devices: Set<[String]> = []
            for batch in scenario.batches {
                let events = batch.events.map { drawn in
                    Event(
                        id: drawn.id, appID: campaigns[drawn.campaign].0, campaignID: campaigns[drawn.campaign].1, type: drawn.type,
                        occurredAt: now.addingTimeInterval(Double(drawn.day) * 86_400 + drawn.seconds), platform: drawn.platform,
                        installationID: drawn.installation, detail: drawn.detail, url: drawn.url, test: drawn.test, language: drawn.language)
                }
                let discards = batch.discards.map { drawn in
                    Discard(
                        id: drawn.id, appID: campaigns[drawn.campaign].0, campaignID: campaigns[drawn.campaign].1, reason: drawn.reason,
                        day: UTCTime.day(now.addingTimeInterval(Double(drawn.day) * 86_400)), count: drawn.count, test: drawn.test)
                }
                let new = events.filter { stored.insert(["\($0.appID)", UTCTime.timestamp($0.occurredAt), $0.id]).inserted }
                for event in new where !event.test { if let installation = event.installationID { devices.insert(["\(event.appID)", installation]) } }
                let received = now.addingTimeInterval(Double(batch.receivedDay) * 86_400)
                let newDiscards = discards.filter { discard in
                    guard discardIDs[["\(discard.appID)", discard.id]] == nil else { return false }
                    discardIDs[["\(discard.appID)", discard.id]] = received
                    return true
                }
                if !newDiscards.isEmpty { discardIDs = discardIDs.filter { $0.value >= received.addingTimeInterval(-7 * 86_400) } }
                for discard in newDiscards where !discard.test { discarded[discard.campaignID, default: [:]][discard.reason, default: 0] += discard.count }
                for database in databases {
                    let counts = try database.stores.events.ingest(events, discards: discards, now: received)
                    run.expect(counts.events == (new.count, events.count - new.count), "\(database.engine) ingested \(counts.events), the model \(new.count)",
                               input: scenario)
                    run.expect(counts.discards == (newDiscards.count, discards.count - newDiscards.count),
                               "\(database.engine) ingested discard counts \(counts.discards), the model \(newDiscards.count)", input: scenario)
                }
            }
            run.note("events", stored.count)
            func compare(_ label: String) throws {
                let answers = try databases.map { try Self.answers($0, campaigns: [world.sale, world.winter, world.digest]) }
                for (database, answer) in zip(databases, answers).dropFirst() where answer != answers[0] {
                    run.fail("\(label): \(database.engine) answered \(answer), SQLite \(answers[0])", input: scenario)
                }
                run.note(label)
            }
            try compare("after ingestion")
            for database in databases {
                for campaign in [world.sale, world.winter, world.digest] {
                    let counts = try database.stores.events.counts(campaignID: campaign, from: "0000-01-01", to: "9999-12-31")
                    run.expect(counts.discards == discarded[campaign, default: [:]],
                               "\(database.engine) summed \(counts.discards) discards of \(campaign), the model \(discarded[campaign, default: [:]])", input: scenario)
                }
                let all = try database.stores.events.counts(campaignID: nil, from: "0000-01-01", to: "9999-12-31")
                run.expect(all.uniqueDevices == devices.count, "\(database.engine) counted \(all.uniqueDevices) devices, the model \(devices.count)", input: scenario)
                run.expect(all.rows.reduce(0) { $0 + $1.count } == stored.count, "\(database.engine) rolled up every stored event", input: scenario)
            }
            for installation in scenario.erased {
                let erasures = try databases.map { try $0.stores.events.eraseInstallation(installation, appID: world.shop, actor: .commandLine, now: now) }
                run.expect(Set(erasures.map(\.events)).count == 1, "erasures \(erasures)", input: scenario)
            }
            try compare("after erasure")
            let runs = try databases.map {
                try Retention(database: $0.stores, days: scenario.retentionDays, rowsPerStep: 7, pauseBetweenSteps: .zero).run(now: now)?.eventsDeleted
            }
            run.expect(Set(runs).count == 1, "retention deleted \(runs)", input: scenario)
            try compare("after retention")
        }
    }
}
