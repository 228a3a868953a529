import Foundation
import GRDB
import HeraldDomain
@testable import HeraldConsole
@testable import HeraldSQLite
@testable import HeraldStorage
import TestSupport
import Testing

@Suite("Unique devices at scale: daily HyperLogLog sketches beside the bitmaps")
struct DeviceSketchTests {
    @Test("Generated sets of 1 to 2,000,000 devices are estimated within 6 % (over 3.7 standard errors), tiny ones within 3")
    func accuracy() {
        var run = GeneratedRun("device sketch accuracy", cases: 40)
        run.run(Generated.cases { draw -> (app: Int64, start: Int64, count: Int) in
            (draw.int64(1...1_000), draw.int64(0...1_000_000_000), draw.pick([draw.int(1...3_000), draw.int(3_000...2_000_000)]))
        }) { value, run in
            var sketch = DeviceSketch()
            // Device numbers are dense per app: a run of consecutive numbers, as apps give them out.
            for number in value.start..<(value.start + Int64(value.count)) { sketch.insert(app: value.app, number: number) }
            // Linear counting (small sets) errs about 1.2 % at a thousand or two; the harmonic mean 1.6 %.
            let error = abs(Double(sketch.estimate - value.count)) / Double(value.count)
            run.expect(error <= 0.06 || abs(sketch.estimate - value.count) <= 3, "estimated \(sketch.estimate) for \(value.count)", input: value)
            run.note(value.count <= 3_000 ? "small" : "large")
        }
    }

    @Test("A union of sketches estimates the union of their sets; the stored form reads back; a device added twice changes nothing")
    func unionAndStoredForm() {
        var first = DeviceSketch(), second = DeviceSketch()
        for number in Int64(0)..<60_000 { first.insert(app: 1, number: number) }
        for number in Int64(40_000)..<100_000 { second.insert(app: 1, number: number) }
        let changed = first.insert(app: 1, number: 5)
        #expect(!changed, "already in")
        var union = first
        second.blob.withUnsafeBytes { union.formUnion($0) }
        #expect(abs(Double(union.estimate) - 100_000) / 100_000 < 0.06)
        #expect(DeviceSketch(blob: union.blob) == union)
        #expect(union.blob.count == DeviceSketch.registerCount)
        // The same numbers in another app are other devices
        var other = first
        for number in Int64(0)..<60_000 { other.insert(app: 2, number: number) }
        #expect(abs(Double(other.estimate) - 120_000) / 120_000 < 0.06)
        // Any stored bytes read without a trap, registers past 64 included
        var odd = DeviceSketch(blob: Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) }))
        #expect(odd.estimate >= 0)
        odd.insert(app: 1, number: 1)
    }

    @Test("Generated ranges from 2000 to 9999 split into whole Monday-to-Sunday weeks and the days around them: each day read once, no whole week read as days")
    func rangesSplitIntoWeeksAndDays() {
        func day(_ days: Int) -> String { UTCTime.day(Date(timeIntervalSince1970: Double(days) * 86_400)) }
        // 1970-01-01 (day 0) was a Thursday: weekday 0 is Monday.
        func weekday(_ days: Int) -> Int { ((days % 7) + 7 + 3) % 7 }
        var run = GeneratedRun("ranges split into weeks and days", cases: 1500)
        run.run(Generated.cases { draw -> (first: Int, length: Int) in
            (draw.pick([draw.int(10_957...10_990), draw.int(10_957...2_932_500), draw.int(20_400...20_800)]), draw.pick([draw.int(0...15), draw.int(0...400)]))
        }) { value, run in
            let last = value.first + value.length
            let split = DeviceSketches.split(from: day(value.first), to: day(last))
            let parts = split.parts(from: day(value.first), to: day(last))
            for days in value.first...last {
                let text = day(days), monday = day(days - weekday(days))
                let readAsDay = parts.filter { $0.0 == .day && $0.1 <= text && text <= $0.2 }.count
                let readInWeek = parts.filter { $0.0 == .week && $0.1 <= monday && monday <= $0.2 }.count
                run.expect(readAsDay + readInWeek == 1, "\(text) is read \(readAsDay) times as a day and \(readInWeek) in its week", input: value)
                let weekInside = days - weekday(days) >= value.first && days - weekday(days) + 6 <= last
                run.expect((readInWeek == 1) == weekInside, "\(text): read in its week exactly when the whole week is in the range", input: value)
                run.expect(DeviceSketches.monday(of: text) == monday, "the Monday of \(text)", input: value)
            }
            run.note(split.firstWeek <= split.lastWeek ? "with weeks" : "days only")
        }
        // 2026-11-27 is a Friday: its 90 days are Sunday 2026-08-30, 12 weeks, and the 5 days from Monday the 23rd.
        #expect(DeviceSketches.split(from: "2026-08-30", to: "2026-11-27")
            == DeviceSketches.Split(beforeTo: "2026-08-30", firstWeek: "2026-08-31", lastWeek: "2026-11-16", afterFrom: "2026-11-23"))
        #expect(DeviceSketches.split(from: "2026-11-23", to: "2026-11-28").firstWeek == DeviceSketches.Split.none)
        #expect(DeviceSketches.monday(of: "2026-02-30") == nil && DeviceSketches.split(from: "0000-01-01", to: "9999-12-31").beforeTo == "9999-12-31")
    }

    @Test("Ingestion keeps each day's sketch and chunk count equal to what its bitmaps give; past the chunk limit the counts are estimates, close to the exact ones, and say so")
    func ingestionAndEstimates() throws {
        let folder = try TemporaryFolder()
        let database = try DeviceBitmapTests.database(in: folder)
        let ids = try DeviceBitmapTests.campaigns(database)
        let campaigns = [(ids.shop, ids.sale), (ids.shop, ids.winter), (ids.news, ids.digest)]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10 {
            let events = (0..<2000).map { _ in
                let (app, campaign) = campaigns.randomElement(using: &generator)!
                return DeviceBitmapTests.event(
                    app: app, campaign: campaign, installation: "device-\(Int.random(in: 0..<30_000, using: &generator))",
                    day: Int.random(in: 0..<4, using: &generator), test: Int.random(in: 0..<10, using: &generator) == 0,
                    type: [.impression, .click, .conversion].randomElement(using: &generator)!)
            }
            _ = try database.events.ingest(events, now: DeviceBitmapTests.start)
        }
        try database.pool.read { db in
            var fromBitmaps: [DeviceSketches.Day: (Int, DeviceSketch)] = [:]
            for kind in DeviceKind.allCases {
                try DeviceSketches.fromBitmaps(db, kind: kind) { day, chunks, sketch in fromBitmaps[day] = (chunks, sketch) }
            }
            let stored = try Row.fetchAll(db, sql: "SELECT campaign_id, test, kind, day, chunks, registers FROM device_sketches")
            #expect(stored.count == fromBitmaps.count && Set(stored.map { $0[2] as String }) == Set(DeviceKind.allCases.map(\.rawValue)))
            for row in stored {
                let expected = try fromBitmaps[DeviceSketches.Day(campaignID: row[0], test: row[1], kind: #require(DeviceKind(rawValue: row[2])), day: row[3])]
                #expect(expected?.0 == row[4], "chunks of \(row)")
                #expect(expected?.1 == DeviceSketch(blob: row[5]), "registers of \(row)")
            }
        }
        let from = UTCTime.day(DeviceBitmapTests.start), to = UTCTime.day(DeviceBitmapTests.start.addingTimeInterval(3 * 86_400))
        var estimating = database.events
        estimating.exactDeviceChunkLimit = 0
        for campaign in [ids.sale, ids.winter, ids.digest, nil] as [Int64?] {
            let exact = try database.events.counts(campaignID: campaign, from: from, to: to)
            let estimated = try estimating.counts(campaignID: campaign, from: from, to: to)
            #expect(!exact.uniqueDevicesEstimated && estimated.uniqueDevicesEstimated && estimated.uniqueTestDevicesEstimated)
            for (counted, guessed) in [(exact.uniqueDevices, estimated.uniqueDevices), (exact.uniqueTestDevices, estimated.uniqueTestDevices)] {
                #expect(abs(Double(guessed - counted)) <= max(2, 0.06 * Double(counted)), "campaign \(campaign as Any): \(guessed) for \(counted)")
            }
        }
        try database.close()
    }

    @Test("An erasure keeps the days' chunk counts equal to their bitmap rows (the sketch keeps the device: it cannot remove one)")
    func erasure() throws {
        let folder = try TemporaryFolder()
        let database = try DeviceBitmapTests.database(in: folder)
        let ids = try DeviceBitmapTests.campaigns(database)
        _ = try database.events.ingest((0..<3).flatMap { day in
            ["gone", "kept"].map { DeviceBitmapTests.event(app: ids.shop, campaign: ids.sale, installation: $0, day: day) }
        }, now: DeviceBitmapTests.start)
        // "gone" alone in a chunk of its own on day 0: numbers 0 ("gone") and 1 ("kept") share chunk 0, so
        // move "kept" away by giving the next device a number in the next chunk.
        try database.pool.write { db in
            try db.execute(sql: "UPDATE device_number_counters SET next_number = ? WHERE app_id = ?", arguments: [DeviceBitmap.bits, ids.shop])
        }
        _ = try database.events.ingest([DeviceBitmapTests.event(app: ids.shop, campaign: ids.sale, installation: "far", day: 0)], now: DeviceBitmapTests.start)
        _ = try database.events.eraseInstallation("gone", appID: ids.shop, actor: .commandLine, now: DeviceBitmapTests.start)
        _ = try database.events.eraseInstallation("kept", appID: ids.shop, actor: .commandLine, now: DeviceBitmapTests.start)
        try database.pool.read { db in
            let bitmapRows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device_bitmaps") ?? -1
            let counted = try Int.fetchOne(db, sql: "SELECT SUM(chunks) FROM device_sketches") ?? -1
            // Its impression's chunk in `seen` and in `exposed`.
            #expect(bitmapRows == 2 && counted == 2, "only far's chunks are left: \(bitmapRows) rows, \(counted) counted")
        }
        try database.close()
    }

    @Test("Migrating to 0017 gives every day stored before it the sketch and chunk count its bitmaps give")
    func migration() throws {
        let folder = try TemporaryFolder()
        let (before, path) = try TestApp.database(migratedBefore: "0017", in: folder)
        let ids = try DeviceBitmapTests.campaignsInEarlierSchema(before)
        // Bitmaps as 0015 and ingestion before 0017 wrote them (this ingestion writes sketches, which that
        // schema has no table for): device n of each campaign on day d is in when (n + d) % 3 == 0.
        try before.pool.write { db in
            for campaign in [ids.sale, ids.digest] {
                for day in ["2026-09-20", "2026-09-21", "2026-09-22"] {
                    for test in [false, true] {
                        for chunk in Int64(0)..<2 {
                            var bitmap = DeviceBitmap()
                            for offset in 0..<DeviceBitmap.bits where (Int(chunk) * DeviceBitmap.bits + offset + day.count + (test ? 1 : 0)) % 3 == 0 {
                                bitmap.insert(offset)
                            }
                            try db.execute(sql: "INSERT INTO device_bitmaps (campaign_id, test, day, chunk, bits) VALUES (?, ?, ?, ?, ?)",
                                           arguments: [campaign, test, day, chunk, bitmap.blob])
                        }
                    }
                }
            }
        }
        try before.close()

        let after = try SQLiteAppDatabase(path: path, migrations: DeviceBitmapTests.migrations)
        try after.migrate()
        try after.pool.read { db in
            var days = 0
            try DeviceSketches.fromBitmaps(db) { day, chunks, sketch in
                days += 1
                let row = try Row.fetchOne(db, sql: "SELECT chunks, registers FROM device_sketches WHERE campaign_id = ? AND test = ? AND day = ?",
                                           arguments: [day.campaignID, day.test, day.day])
                #expect(row?[0] == chunks && row.map { DeviceSketch(blob: $0[1]) } == sketch)
            }
            #expect(days == 12)
        }
        var estimating = after.events
        estimating.exactDeviceChunkLimit = 0
        let exact = try after.events.counts(campaignID: ids.sale, from: "2026-09-20", to: "2026-09-20").uniqueDevices
        let estimated = try estimating.counts(campaignID: ids.sale, from: "2026-09-20", to: "2026-09-20").uniqueDevices
        #expect(exact == (0..<(2 * DeviceBitmap.bits)).filter { ($0 + "2026-09-20".count) % 3 == 0 }.count && abs(Double(estimated - exact)) <= 0.06 * Double(exact), "\(estimated) for \(exact)")
        try after.close()
    }
}

@Suite("Reports say when unique devices are an estimate")
struct EstimatedDevicesReportTests {
    @Test("The report shows an estimate as ≈ with a note saying so, in every language, and a count as a plain number; the stats endpoint says which it is")
    func reportAndStats() throws {
        var counts = EventCounts(rows: [], uniqueDevices: 1_234_567, uniqueTestDevices: 3)
        let range = DayRange(from: "2026-09-01", to: "2026-09-30")
        counts.funnelDevices = EventCounts.FunnelDevices(exposed: 40_000, converted: 1_000, estimated: false)
        let counted = CampaignStats(counts: counts, range: range)
        counts.uniqueDevicesEstimated = true
        counts.funnelDevices?.estimated = true
        let estimated = CampaignStats(counts: counts, range: range)
        #expect(!counted.totals.uniqueDevicesEstimated && estimated.totals.uniqueDevicesEstimated && !estimated.test.uniqueDevicesEstimated)
        let json = try JSONSerialization.jsonObject(with: Data(estimated.json)) as? [String: Any]
        #expect((json?["totals"] as? [String: Any])?["uniqueDevicesEstimated"] as? Bool == true)
        #expect((json?["funnel"] as? [String: Any])?["devicesEstimated"] as? Bool == true)
        #expect((json?["funnel"] as? [String: Any])?["conversionRate"] as? Double == 0.025)

        for language in ConsoleLanguage.allCases {
            let l = ComposerVersionTests.localization.localizer(language)
            let plain = try #require(ReportPages.report(counted, l).metrics.last)
            let guessed = try #require(ReportPages.report(estimated, l).metrics.last)
            #expect(plain.value == l.number(1_234_567) && plain.note == l("reports.metric.unique_devices_note"))
            #expect(guessed.value.hasPrefix("≈") && guessed.value.contains(l.number(1_234_567)), "\(language): \(guessed.value)")
            #expect(guessed.note == l("reports.metric.estimated_note") && guessed.note != "reports.metric.estimated_note")
            // The funnel's devices: the conversion rate is the same either way; an estimate reads ≈
            let (plainShown, guessedShown) = try (#require(ReportPages.funnel(counted, l).dropLast().last), #require(ReportPages.funnel(estimated, l).dropLast().last))
            let (plainConverted, guessedConverted) = try (#require(ReportPages.funnel(counted, l).last), #require(ReportPages.funnel(estimated, l).last))
            #expect(plainShown.value == l.number(40_000) && plainShown.note == l("reports.funnel.shown_devices_note"))
            #expect(guessedShown.value.hasPrefix("≈") && guessedShown.note == l("reports.metric.estimated_note"), "\(language): \(guessedShown.value)")
            #expect(plainConverted.value == l.number(1_000) && guessedConverted.value.hasPrefix("≈"))
            #expect(plainConverted.note == guessedConverted.note && plainConverted.note?.contains(ReportFormat.percent(1_000, of: 40_000, l)) == true)
        }
    }
}
