import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The device numbers, bitmaps and sketches in SQLite, for `DeviceBitmaps` and `DeviceSketches`; its one
/// writer needs no lock.
struct SQLiteDeviceRows: DeviceRows {
    let db: Database

    func lock(apps: Set<Int64>, days: Set<DeviceSketches.Day>) throws {}

    func numbers(of installations: [DeviceInstallation]) throws -> [DeviceInstallation: Int64] {
        let read = try db.cachedStatement(sql: "SELECT number FROM device_numbers WHERE app_id = ? AND installation_id = ?")
        var numbers: [DeviceInstallation: Int64] = [:]
        for installation in installations {
            numbers[installation] = try Int64.fetchOne(read, arguments: [installation.appID, installation.installationID])
        }
        return numbers
    }

    func nextNumber(appID: Int64) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT next_number FROM device_number_counters WHERE app_id = ?"), arguments: [appID]) ?? 0
    }

    func insertNumbers(_ numbers: [(DeviceInstallation, Int64)]) throws {
        let insert = try db.cachedStatement(sql: "INSERT INTO device_numbers (app_id, installation_id, number) VALUES (?, ?, ?)")
        for (installation, number) in numbers { try insert.execute(arguments: [installation.appID, installation.installationID, number]) }
    }

    func setNextNumber(appID: Int64, _ next: Int64) throws {
        try db.cachedStatement(sql: """
            INSERT INTO device_number_counters (app_id, next_number) VALUES (?, ?)
            ON CONFLICT (app_id) DO UPDATE SET next_number = excluded.next_number
            """).execute(arguments: [appID, next])
    }

    func deleteNumber(_ installation: DeviceInstallation) throws {
        try db.execute(
            sql: "DELETE FROM device_numbers WHERE app_id = ? AND installation_id = ?", arguments: [installation.appID, installation.installationID])
    }

    private static func arguments(_ key: DeviceChunkKey) -> StatementArguments {
        [key.campaignID, key.test, key.kind.rawValue, key.day, key.chunk]
    }

    func chunks(_ keys: [DeviceChunkKey]) throws -> [DeviceChunkKey: Data] {
        let read = try db.cachedStatement(
            sql: "SELECT bits FROM device_bitmaps WHERE campaign_id = ? AND test = ? AND kind = ? AND day = ? AND chunk = ?")
        var chunks: [DeviceChunkKey: Data] = [:]
        for key in keys { chunks[key] = try Data.fetchOne(read, arguments: Self.arguments(key)) }
        return chunks
    }

    func writeChunks(_ chunks: [(DeviceChunkKey, Data)]) throws {
        let write = try db.cachedStatement(sql: """
            INSERT INTO device_bitmaps (campaign_id, test, kind, day, chunk, bits) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (campaign_id, test, kind, day, chunk) DO UPDATE SET bits = excluded.bits
            """)
        for (key, bits) in chunks { try write.execute(arguments: Self.arguments(key) + [bits]) }
    }

    func deleteChunks(_ keys: [DeviceChunkKey]) throws {
        let delete = try db.cachedStatement(
            sql: "DELETE FROM device_bitmaps WHERE campaign_id = ? AND test = ? AND kind = ? AND day = ? AND chunk = ?")
        for key in keys { try delete.execute(arguments: Self.arguments(key)) }
    }

    func chunks(appID: Int64, chunk: Int64) throws -> [(DeviceChunkKey, Data)] {
        try Row.fetchAll(
            db, sql: """
                SELECT campaign_id, test, kind, day, chunk, bits FROM device_bitmaps
                WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?) AND chunk = ?
                """, arguments: [appID, chunk]
        ).compactMap { row in
            // A kind this binary does not know (never written by Herald) is left alone.
            DeviceKind(rawValue: row[2]).map { (DeviceChunkKey(campaignID: row[0], test: row[1], kind: $0, day: row[3], chunk: row[4]), row[5]) }
        }
    }

    func sketches(_ keys: [DeviceSketches.Day], of period: DeviceSketches.Period) throws -> [DeviceSketches.Day: (chunks: Int, registers: Data)] {
        let read = try db.cachedStatement(
            sql: "SELECT chunks, registers FROM \(period.table) WHERE campaign_id = ? AND test = ? AND kind = ? AND \(period.keyColumn) = ?")
        var sketches: [DeviceSketches.Day: (chunks: Int, registers: Data)] = [:]
        for key in keys {
            if let row = try Row.fetchOne(read, arguments: [key.campaignID, key.test, key.kind.rawValue, key.day]) { sketches[key] = (row[0], row[1]) }
        }
        return sketches
    }

    func writeSketches(_ sketches: [(DeviceSketches.Day, chunks: Int, registers: Data)], of period: DeviceSketches.Period) throws {
        let key = period.keyColumn
        let write = try db.cachedStatement(sql: """
            INSERT INTO \(period.table) (campaign_id, test, kind, \(key), chunks, registers) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (campaign_id, test, kind, \(key)) DO UPDATE SET chunks = excluded.chunks, registers = excluded.registers
            """)
        for (day, chunks, registers) in sketches {
            try write.execute(arguments: [day.campaignID, day.test, day.kind.rawValue, day.day, chunks, registers])
        }
    }

    func campaignApps(campaignID: Int64?) throws -> [Int64: Int64] {
        try Dictionary(
            Row.fetchAll(db.cachedStatement(sql: "SELECT id, app_id FROM campaigns" + (campaignID == nil ? "" : " WHERE id = ?")),
                         arguments: campaignID.map { [$0] } ?? []).map { row -> (Int64, Int64) in (row[0], row[1]) },
            uniquingKeysWith: { first, _ in first })
    }

    /// The WHERE clause and arguments that pick a range's rows of `device_bitmaps`, or (with `key`) one
    /// part of its sketch rows (`DeviceSketches.Split`).
    private static func filter(_ range: DeviceRange, key: (DeviceSketches.Period, String, String)? = nil) -> (sql: String, arguments: StatementArguments) {
        var arguments: StatementArguments = range.campaignID.map { [$0] } ?? []
        _ = arguments.append(contentsOf: [range.test, range.kind.rawValue, key?.1 ?? range.from, key?.2 ?? range.to])
        let column = key?.0.keyColumn ?? "day"
        return ("WHERE \(range.campaignID == nil ? "" : "campaign_id = ? AND ")test = ? AND kind = ? AND \(column) BETWEEN ? AND ?", arguments)
    }

    /// Each part of the sketch rows that cover the range, as its table and filter.
    private static func sketchParts(_ range: DeviceRange) -> [(table: String, filter: (sql: String, arguments: StatementArguments))] {
        DeviceSketches.split(from: range.from, to: range.to).parts(from: range.from, to: range.to).map { part in
            (part.0.table, filter(range, key: part))
        }
    }

    func forEachChunk(_ range: DeviceRange, _ body: (Int64, Int64, UnsafeRawBufferPointer) -> Void) throws {
        let filter = Self.filter(range)
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT campaign_id, chunk, bits FROM device_bitmaps \(filter.sql)"), arguments: filter.arguments)
        while let row = try rows.next() {
            // The blob is read where SQLite holds it: a day's chunks at a million devices are 30 MB a quarter.
            try row.withUnsafeData(atIndex: 2) { bits in
                bits?.withUnsafeBytes { body(row[0], row[1], $0) }
            }
        }
    }

    func chunkCount(_ range: DeviceRange) throws -> Int {
        try Self.sketchParts(range).reduce(0) { total, part in
            total + (try Int.fetchOne(
                db.cachedStatement(sql: "SELECT COALESCE(SUM(chunks), 0) FROM \(part.table) \(part.filter.sql)"), arguments: part.filter.arguments) ?? 0)
        }
    }

    func forEachSketch(_ range: DeviceRange, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        for part in Self.sketchParts(range) {
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT registers FROM \(part.table) \(part.filter.sql)"), arguments: part.filter.arguments)
            while let row = try rows.next() {
                try row.withUnsafeData(atIndex: 0) { registers in registers?.withUnsafeBytes { body($0) } }
            }
        }
    }

    func platformChunks(_ keys: [DevicePlatformKey]) throws -> [DevicePlatformKey: Data] {
        let read = try db.cachedStatement(sql: "SELECT bits FROM device_platforms WHERE app_id = ? AND platform = ? AND chunk = ?")
        var chunks: [DevicePlatformKey: Data] = [:]
        for key in keys { chunks[key] = try Data.fetchOne(read, arguments: [key.appID, key.platform, key.chunk]) }
        return chunks
    }

    func writePlatformChunks(_ chunks: [(DevicePlatformKey, Data)]) throws {
        let write = try db.cachedStatement(sql: """
            INSERT INTO device_platforms (app_id, platform, chunk, bits) VALUES (?, ?, ?, ?)
            ON CONFLICT (app_id, platform, chunk) DO UPDATE SET bits = excluded.bits
            """)
        for (key, bits) in chunks { try write.execute(arguments: [key.appID, key.platform, key.chunk, bits]) }
    }

    func forEachPlatformChunk(apps: Set<Int64>, _ body: (DevicePlatformKey, UnsafeRawBufferPointer) -> Void) throws {
        let read = try db.cachedStatement(sql: "SELECT platform, chunk, bits FROM device_platforms WHERE app_id = ?")
        for app in apps.sorted() {
            let rows = try Row.fetchCursor(read, arguments: [app])
            while let row = try rows.next() {
                try row.withUnsafeData(atIndex: 2) { bits in
                    bits?.withUnsafeBytes { body(DevicePlatformKey(appID: app, platform: row[0], chunk: row[1]), $0) }
                }
            }
        }
    }
}

extension DeviceBitmaps {
    /// Migration 0015's second half: the bitmaps of the device rows kept before it, by the numbers its SQL
    /// gave out; one campaign, test flag and day at a time, so memory holds one day's chunks.
    static func fillFromDeviceRows(_ db: Database) throws {
        let rows = try Row.fetchCursor(
            db, sql: """
                SELECT d.campaign_id, d.test, d.day, n.number
                FROM campaign_devices d JOIN campaigns c ON c.id = d.campaign_id
                JOIN device_numbers n ON n.app_id = c.app_id AND n.installation_id = d.installation_id
                ORDER BY d.campaign_id, d.test, d.day
                """)
        let write = try db.makeStatement(sql: "INSERT INTO device_bitmaps (campaign_id, test, day, chunk, bits) VALUES (?, ?, ?, ?, ?)")
        var day: (campaignID: Int64, test: Bool, day: String)?
        var chunks: [Int64: DeviceBitmap] = [:]
        func flush() throws {
            guard let day else { return }
            for (chunk, bitmap) in chunks { try write.execute(arguments: [day.campaignID, day.test, day.day, chunk, bitmap.blob]) }
            chunks = [:]
        }
        while let row = try rows.next() {
            let current: (campaignID: Int64, test: Bool, day: String) = (row[0], row[1], row[2])
            if let day, day != current { try flush() }
            day = current
            let (chunk, offset) = DeviceBitmap.position(of: row[3])
            chunks[chunk, default: DeviceBitmap()].insert(offset)
        }
        try flush()
    }
}

extension DeviceSketches {
    /// The sketch and chunk count that the stored bitmaps give each day, a day at a time in key order (so
    /// memory holds one day): what migration 0017 writes for the days stored before it, and what ingestion
    /// keeps them equal to (until an erasure, which clears a bitmap bit but cannot take a device out of a sketch).
    /// `kind` reads one kind's rows, which migration 0024 added; before it every row is `seen`, and nil reads them all.
    static func fromBitmaps(_ db: Database, kind: DeviceKind? = nil, _ each: (Day, _ chunks: Int, DeviceSketch) throws -> Void) throws {
        let rows = try Row.fetchCursor(
            db, sql: """
                SELECT b.campaign_id, b.test, b.day, b.chunk, b.bits, c.app_id
                FROM device_bitmaps b JOIN campaigns c ON c.id = b.campaign_id
                \(kind == nil ? "" : "WHERE b.kind = ?")
                ORDER BY b.campaign_id, b.test, b.day
                """, arguments: kind.map { [$0.rawValue] } ?? [])
        var current: (day: Day, chunks: Int, sketch: DeviceSketch)?
        while let row = try rows.next() {
            let day = Day(campaignID: row[0], test: row[1], kind: kind ?? .seen, day: row[2])
            if let finished = current, finished.day != day {
                try each(finished.day, finished.chunks, finished.sketch)
                current = nil
            }
            var entry = current ?? (day, 0, DeviceSketch())
            let chunk: Int64 = row[3], app: Int64 = row[5]
            entry.chunks += 1
            for offset in DeviceBitmap(blob: row[4]).offsets {
                entry.sketch.insert(app: app, number: chunk * Int64(DeviceBitmap.bits) + Int64(offset))
            }
            current = entry
        }
        if let finished = current { try each(finished.day, finished.chunks, finished.sketch) }
    }

    /// Migration 0017's second half: a sketch row for every day the bitmaps hold.
    static func fillFromBitmaps(_ db: Database) throws {
        let write = try db.makeStatement(sql: "INSERT INTO device_sketches (campaign_id, test, day, chunks, registers) VALUES (?, ?, ?, ?, ?)")
        try fromBitmaps(db) { day, chunks, sketch in
            try write.execute(arguments: [day.campaignID, day.test, day.day, chunks, sketch.blob])
        }
    }

    /// Migration 0018's second half: a week row for every week the days' sketches hold (all `seen`, before 0024).
    static func fillWeeks(_ db: Database) throws {
        let write = try db.makeStatement(sql: "INSERT INTO device_week_sketches (campaign_id, test, week, chunks, registers) VALUES (?, ?, ?, ?, ?)")
        var folder = WeekFolder { week, chunks, sketch in
            try write.execute(arguments: [week.campaignID, week.test, week.day, chunks, sketch.blob])
        }
        let rows = try Row.fetchCursor(db, sql: "SELECT campaign_id, test, day, chunks, registers FROM device_sketches ORDER BY campaign_id, test, day")
        while let row = try rows.next() {
            let day = Day(campaignID: row[0], test: row[1], kind: .seen, day: row[2]), chunks: Int = row[3]
            try row.withUnsafeData(atIndex: 4) { registers in
                try (registers ?? Data()).withUnsafeBytes { try folder.add(day, chunks: chunks, registers: $0) }
            }
        }
        try folder.finish()
    }
}
