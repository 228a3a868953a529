import Foundation
import HeraldStorage
import NIOCore
import NIOFoundationCompat
import PostgresNIO

/// The device numbers, bitmaps and sketches in PostgreSQL, for `DeviceBitmaps` and `DeviceSketches`.
/// Their read-modify-writes are made atomic across instances by transaction locks: one per app for its
/// numbers, one per campaign, test flag, kind and day for its chunks and sketch, always taken apps first and
/// each kind in key order, so two transactions never wait for each other in a circle.
struct PostgresDeviceRows: DeviceRows {
    let db: PostgresSession
    /// What a report's one statement read ahead (`PostgresEventStore.counts`), answered without a round trip.
    var readAhead: [DeviceRange: RangeReadAhead] = [:]
    /// Each campaign's app as `campaignApps(campaignID:)` answers for `campaignID`, read ahead likewise.
    var appsReadAhead: (campaignID: Int64?, apps: [Int64: Int64])?

    /// A range's chunk count, and the rows that count says the unique devices are made from: its bitmap
    /// chunks when they are counted exactly, its sketches when estimated (each nil when not read ahead).
    struct RangeReadAhead {
        var chunkCount: Int
        var chunks: PackedBlobs?
        var sketches: PackedBlobs?
    }

    func lock(apps: Set<Int64>, days: Set<DeviceSketches.Day>) throws {
        func name(_ key: DeviceSketches.Day) -> String { "\(key.campaignID).\(key.test).\(key.kind.rawValue).\(key.day)" }
        for app in apps.sorted() { try db.lock("herald.device_numbers.\(app)") }
        for day in days.sorted() { try db.lock("herald.devices.\(name(day))") }
        // Two days of one week each hold their own lock, and both write the week's row: it has a lock of its own.
        for week in Set(days.compactMap(\.week)).sorted() { try db.lock("herald.device_weeks.\(name(week))") }
    }

    func numbers(of installations: [DeviceInstallation]) throws -> [DeviceInstallation: Int64] {
        var numbers: [DeviceInstallation: Int64] = [:]
        for (app, ofApp) in Dictionary(grouping: installations, by: \.appID) {
            for part in ofApp.map(\.installationID).chunked(PostgresEventStore.rowsPerStatement) {
                let ids = Array(part)
                for row in try db.rows(
                    "SELECT installation_id, number FROM device_numbers WHERE app_id = \(app) AND installation_id = ANY(\(ids))") {
                    let (installation, number) = try row.decode((String, Int64).self)
                    numbers[DeviceInstallation(appID: app, installationID: installation)] = number
                }
            }
        }
        return numbers
    }

    func nextNumber(appID: Int64) throws -> Int64 {
        try db.one("SELECT next_number FROM device_number_counters WHERE app_id = \(appID)", as: Int64.self) ?? 0
    }

    func insertNumbers(_ numbers: [(DeviceInstallation, Int64)]) throws {
        for part in numbers.chunked(PostgresEventStore.rowsPerStatement) {
            let (apps, ids, values) = (part.map(\.0.appID), part.map(\.0.installationID), part.map(\.1))
            try db.execute(
                "INSERT INTO device_numbers (app_id, installation_id, number) SELECT * FROM unnest(\(apps)::int8[], \(ids)::text[], \(values)::int8[])")
        }
    }

    func setNextNumber(appID: Int64, _ next: Int64) throws {
        try db.execute(
            """
            INSERT INTO device_number_counters (app_id, next_number) VALUES (\(appID), \(next))
            ON CONFLICT (app_id) DO UPDATE SET next_number = excluded.next_number
            """)
    }

    func deleteNumber(_ installation: DeviceInstallation) throws {
        try db.execute("DELETE FROM device_numbers WHERE app_id = \(installation.appID) AND installation_id = \(installation.installationID)")
    }

    /// A chunk row's key and bits; nil for a kind this binary does not know (never written by Herald).
    private static func key(_ row: PostgresRow) throws -> (DeviceChunkKey, Data)? {
        let (campaign, test, kind, day, chunk, bits) = try row.decode((Int64, Bool, String, String, Int64, ByteBuffer).self)
        return DeviceKind(rawValue: kind).map { (DeviceChunkKey(campaignID: campaign, test: test, kind: $0, day: day, chunk: chunk), Data(buffer: bits)) }
    }

    func chunks(_ keys: [DeviceChunkKey]) throws -> [DeviceChunkKey: Data] {
        var chunks: [DeviceChunkKey: Data] = [:]
        for part in keys.chunked(PostgresEventStore.rowsPerStatement) {
            let (campaigns, tests, kinds) = (part.map(\.campaignID), part.map(\.test), part.map(\.kind.rawValue))
            let (days, numbers) = (part.map(\.day), part.map(\.chunk))
            for row in try db.rows(
                """
                SELECT campaign_id, test, kind, day, chunk, bits FROM device_bitmaps
                WHERE (campaign_id, test, kind, day, chunk)
                    IN (SELECT * FROM unnest(\(campaigns)::int8[], \(tests)::bool[], \(kinds)::text[], \(days)::text[], \(numbers)::int8[]))
                """) {
                if let (key, bits) = try Self.key(row) { chunks[key] = bits }
            }
        }
        return chunks
    }

    func writeChunks(_ chunks: [(DeviceChunkKey, Data)]) throws {
        for part in chunks.chunked(PostgresEventStore.rowsPerStatement) {
            let keys = part.map(\.0)
            let (campaigns, tests, kinds) = (keys.map(\.campaignID), keys.map(\.test), keys.map(\.kind.rawValue))
            let (days, numbers, bits) = (keys.map(\.day), keys.map(\.chunk), part.map { ByteBuffer(data: $0.1) })
            try db.execute(
                """
                INSERT INTO device_bitmaps (campaign_id, test, kind, day, chunk, bits)
                SELECT * FROM unnest(\(campaigns)::int8[], \(tests)::bool[], \(kinds)::text[], \(days)::text[], \(numbers)::int8[], \(bits)::bytea[])
                ON CONFLICT (campaign_id, test, kind, day, chunk) DO UPDATE SET bits = excluded.bits
                """)
        }
    }

    func deleteChunks(_ keys: [DeviceChunkKey]) throws {
        for part in keys.chunked(PostgresEventStore.rowsPerStatement) {
            let (campaigns, tests, kinds) = (part.map(\.campaignID), part.map(\.test), part.map(\.kind.rawValue))
            let (days, numbers) = (part.map(\.day), part.map(\.chunk))
            try db.execute(
                """
                DELETE FROM device_bitmaps
                WHERE (campaign_id, test, kind, day, chunk)
                    IN (SELECT * FROM unnest(\(campaigns)::int8[], \(tests)::bool[], \(kinds)::text[], \(days)::text[], \(numbers)::int8[]))
                """)
        }
    }

    func chunks(appID: Int64, chunk: Int64) throws -> [(DeviceChunkKey, Data)] {
        try db.rows(
            """
            SELECT campaign_id, test, kind, day, chunk, bits FROM device_bitmaps
            WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = \(appID)) AND chunk = \(chunk)
            """
        ).compactMap(Self.key)
    }

    func sketches(_ keys: [DeviceSketches.Day], of period: DeviceSketches.Period) throws -> [DeviceSketches.Day: (chunks: Int, registers: Data)] {
        var sketches: [DeviceSketches.Day: (chunks: Int, registers: Data)] = [:]
        for part in keys.chunked(PostgresEventStore.rowsPerStatement) {
            let (campaigns, tests, kinds, dayTexts) = (part.map(\.campaignID), part.map(\.test), part.map(\.kind.rawValue), part.map(\.day))
            for row in try db.rows(
                """
                SELECT campaign_id, test, kind, \(unescaped: period.keyColumn), chunks, registers FROM \(unescaped: period.table)
                WHERE (campaign_id, test, kind, \(unescaped: period.keyColumn))
                    IN (SELECT * FROM unnest(\(campaigns)::int8[], \(tests)::bool[], \(kinds)::text[], \(dayTexts)::text[]))
                """) {
                let (campaign, test, kindText, day, chunks, registers) = try row.decode((Int64, Bool, String, String, Int64, ByteBuffer).self)
                guard let kind = DeviceKind(rawValue: kindText) else { continue }
                sketches[DeviceSketches.Day(campaignID: campaign, test: test, kind: kind, day: day)] = (Int(clamping: chunks), Data(buffer: registers))
            }
        }
        return sketches
    }

    func writeSketches(_ sketches: [(DeviceSketches.Day, chunks: Int, registers: Data)], of period: DeviceSketches.Period) throws {
        for part in sketches.chunked(PostgresEventStore.rowsPerStatement) {
            let (campaigns, tests, kinds, days) = (part.map(\.0.campaignID), part.map(\.0.test), part.map(\.0.kind.rawValue), part.map(\.0.day))
            let (chunks, registers) = (part.map { Int64($0.chunks) }, part.map { ByteBuffer(data: $0.registers) })
            try db.execute(
                """
                INSERT INTO \(unescaped: period.table) (campaign_id, test, kind, \(unescaped: period.keyColumn), chunks, registers)
                SELECT * FROM unnest(\(campaigns)::int8[], \(tests)::bool[], \(kinds)::text[], \(days)::text[], \(chunks)::int8[], \(registers)::bytea[])
                ON CONFLICT (campaign_id, test, kind, \(unescaped: period.keyColumn))
                    DO UPDATE SET chunks = excluded.chunks, registers = excluded.registers
                """)
        }
    }

    func campaignApps(campaignID: Int64?) throws -> [Int64: Int64] {
        if let known = appsReadAhead, known.campaignID == campaignID { return known.apps }
        let query: PostgresQuery = if let campaignID { "SELECT id, app_id FROM campaigns WHERE id = \(campaignID)" } else { "SELECT id, app_id FROM campaigns" }
        var apps: [Int64: Int64] = [:]
        for row in try db.rows(query) {
            let (id, app) = try row.decode((Int64, Int64).self)
            apps[id] = app
        }
        return apps
    }

    func platformChunks(_ keys: [DevicePlatformKey]) throws -> [DevicePlatformKey: Data] {
        var chunks: [DevicePlatformKey: Data] = [:]
        for part in keys.chunked(PostgresEventStore.rowsPerStatement) {
            let (apps, platforms, numbers) = (part.map(\.appID), part.map(\.platform), part.map(\.chunk))
            for row in try db.rows(
                """
                SELECT app_id, platform, chunk, bits FROM device_platforms
                WHERE (app_id, platform, chunk) IN (SELECT * FROM unnest(\(apps)::int8[], \(platforms)::text[], \(numbers)::int8[]))
                """) {
                let (app, platform, chunk, bits) = try row.decode((Int64, String, Int64, ByteBuffer).self)
                chunks[DevicePlatformKey(appID: app, platform: platform, chunk: chunk)] = Data(buffer: bits)
            }
        }
        return chunks
    }

    func writePlatformChunks(_ chunks: [(DevicePlatformKey, Data)]) throws {
        for part in chunks.chunked(PostgresEventStore.rowsPerStatement) {
            let (apps, platforms, numbers) = (part.map(\.0.appID), part.map(\.0.platform), part.map(\.0.chunk))
            let bits = part.map { ByteBuffer(data: $0.1) }
            try db.execute(
                """
                INSERT INTO device_platforms (app_id, platform, chunk, bits)
                SELECT * FROM unnest(\(apps)::int8[], \(platforms)::text[], \(numbers)::int8[], \(bits)::bytea[])
                ON CONFLICT (app_id, platform, chunk) DO UPDATE SET bits = excluded.bits
                """)
        }
    }

    func forEachPlatformChunk(apps: Set<Int64>, _ body: (DevicePlatformKey, UnsafeRawBufferPointer) -> Void) throws {
        guard !apps.isEmpty else { return }
        let ids = apps.sorted()
        for row in try db.rows("SELECT app_id, platform, chunk, bits FROM device_platforms WHERE app_id = ANY(\(ids))") {
            let (app, platform, chunk, bits) = try row.decode((Int64, String, Int64, ByteBuffer).self)
            bits.withUnsafeReadableBytes { body(DevicePlatformKey(appID: app, platform: platform, chunk: chunk), $0) }
        }
    }

    /// Migration 0007's second half, as SQLite's 0018: a week row for every week the days' sketches hold
    /// (all `seen`, before 0014 added kinds), a campaign at a time, so memory holds one campaign's sketches.
    /// Written with the columns the table had then.
    static func fillWeeks(_ session: PostgresSession) throws {
        for campaign in try session.all("SELECT DISTINCT campaign_id FROM device_sketches ORDER BY 1", as: Int64.self) {
            var weeks: [(DeviceSketches.Day, chunks: Int, registers: Data)] = []
            var folder = DeviceSketches.WeekFolder { week, chunks, sketch in weeks.append((week, chunks, sketch.blob)) }
            for row in try session.rows(
                "SELECT test, day, chunks, registers FROM device_sketches WHERE campaign_id = \(campaign) ORDER BY test, day") {
                let (test, day, chunks, registers) = try row.decode((Bool, String, Int64, ByteBuffer).self)
                try registers.withUnsafeReadableBytes {
                    try folder.add(DeviceSketches.Day(campaignID: campaign, test: test, kind: .seen, day: day), chunks: Int(clamping: chunks), registers: $0)
                }
            }
            try folder.finish()
            for part in weeks.chunked(PostgresEventStore.rowsPerStatement) {
                let (tests, mondays) = (part.map(\.0.test), part.map(\.0.day))
                let (chunks, registers) = (part.map { Int64($0.chunks) }, part.map { ByteBuffer(data: $0.registers) })
                try session.execute(
                    """
                    INSERT INTO device_week_sketches (campaign_id, test, week, chunks, registers)
                    SELECT \(campaign), * FROM unnest(\(tests)::bool[], \(mondays)::text[], \(chunks)::int8[], \(registers)::bytea[])
                    """)
            }
        }
    }

    /// A range's rows of `device_bitmaps`, or (with `key`) one part of its sketch rows (`DeviceSketches.Split`),
    /// `columns` of them.
    private static func range(_ columns: String, _ range: DeviceRange, key: (DeviceSketches.Period, String, String)? = nil) -> PostgresQuery {
        let table = key?.0.table ?? "device_bitmaps", column = key?.0.keyColumn ?? "day"
        let (first, last) = (key?.1 ?? range.from, key?.2 ?? range.to)
        if let campaignID = range.campaignID {
            return """
                SELECT \(unescaped: columns) FROM \(unescaped: table)
                WHERE campaign_id = \(campaignID) AND test = \(range.test) AND kind = \(range.kind.rawValue)
                    AND \(unescaped: column) BETWEEN \(first) AND \(last)
                """
        }
        return """
            SELECT \(unescaped: columns) FROM \(unescaped: table)
            WHERE test = \(range.test) AND kind = \(range.kind.rawValue) AND \(unescaped: column) BETWEEN \(first) AND \(last)
            """
    }

    /// Each part of the sketch rows that cover the range, `columns` of them.
    private static func sketchParts(_ columns: String, _ range: DeviceRange) -> [PostgresQuery] {
        DeviceSketches.split(from: range.from, to: range.to).parts(from: range.from, to: range.to).map { Self.range(columns, range, key: $0) }
    }

    func forEachChunk(_ range: DeviceRange, _ body: (Int64, Int64, UnsafeRawBufferPointer) -> Void) throws {
        if let known = readAhead[range]?.chunks {
            return try known.forEach(body)
        }
        for row in try db.execute(Self.range("campaign_id, chunk, bits", range)).rows {
            let (campaign, chunk, bits) = try row.decode((Int64, Int64, ByteBuffer).self)
            bits.withUnsafeReadableBytes { body(campaign, chunk, $0) }
        }
    }

    func chunkCount(_ range: DeviceRange) throws -> Int {
        if let known = readAhead[range] { return known.chunkCount }
        return try Self.sketchParts("COALESCE(SUM(chunks), 0)::int8", range).reduce(0) { total, part in
            total + Int(clamping: try db.one(part, as: Int64.self) ?? 0)
        }
    }

    func forEachSketch(_ range: DeviceRange, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        if let known = readAhead[range]?.sketches {
            return try known.forEach { _, _, registers in body(registers) }
        }
        for part in Self.sketchParts("registers", range) {
            for row in try db.execute(part).rows {
                try row.decode(ByteBuffer.self).withUnsafeReadableBytes { body($0) }
            }
        }
    }
}

/// Rows of a blob column read as one value: the blobs end to end in `bytes`, each row's length in
/// `lengths`, and for bitmap chunks each row's campaign and chunk number beside (empty for sketches). One
/// value instead of a row each spares the client the decoding of thousands of rows.
struct PackedBlobs {
    var campaigns: [Int64] = []
    var chunks: [Int64] = []
    var lengths: [Int32]
    var bytes: ByteBuffer

    /// A packing that does not add up (never made by Herald's statement): read as an error, not as fewer rows.
    struct Mismatch: Error, CustomStringConvertible {
        var description: String { "a statement's packed rows do not add up" }
    }

    /// Calls `body` with each row's campaign and chunk number (0 for sketches) and its blob, read in place.
    func forEach(_ body: (_ campaignID: Int64, _ chunk: Int64, _ blob: UnsafeRawBufferPointer) -> Void) throws {
        let keyed = !campaigns.isEmpty
        guard campaigns.count == chunks.count, !keyed || campaigns.count == lengths.count,
            lengths.allSatisfy({ $0 >= 0 }), lengths.reduce(0, { $0 + Int($1) }) == bytes.readableBytes
        else { throw Mismatch() }
        bytes.withUnsafeReadableBytes { all in
            var start = 0
            for (row, length) in lengths.enumerated() {
                let blob = UnsafeRawBufferPointer(rebasing: all[start..<start + Int(length)])
                body(keyed ? campaigns[row] : 0, keyed ? chunks[row] : 0, blob)
                start += Int(length)
            }
        }
    }
}
