import Foundation
import GRDB

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
        [key.campaignID, key.test, key.day, key.chunk]
    }

    func chunks(_ keys: [DeviceChunkKey]) throws -> [DeviceChunkKey: Data] {
        let read = try db.cachedStatement(sql: "SELECT bits FROM device_bitmaps WHERE campaign_id = ? AND test = ? AND day = ? AND chunk = ?")
        var chunks: [DeviceChunkKey: Data] = [:]
        for key in keys { chunks[key] = try Data.fetchOne(read, arguments: Self.arguments(key)) }
        return chunks
    }

    func writeChunks(_ chunks: [(DeviceChunkKey, Data)]) throws {
        let write = try db.cachedStatement(sql: """
            INSERT INTO device_bitmaps (campaign_id, test, day, chunk, bits) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (campaign_id, test, day, chunk) DO UPDATE SET bits = excluded.bits
            """)
        for (key, bits) in chunks { try write.execute(arguments: Self.arguments(key) + [bits]) }
    }

    func deleteChunks(_ keys: [DeviceChunkKey]) throws {
        let delete = try db.cachedStatement(sql: "DELETE FROM device_bitmaps WHERE campaign_id = ? AND test = ? AND day = ? AND chunk = ?")
        for key in keys { try delete.execute(arguments: Self.arguments(key)) }
    }

    func chunks(appID: Int64, chunk: Int64) throws -> [(DeviceChunkKey, Data)] {
        try Row.fetchAll(
            db, sql: """
                SELECT campaign_id, test, day, chunk, bits FROM device_bitmaps
                WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?) AND chunk = ?
                """, arguments: [appID, chunk]
        ).map { (DeviceChunkKey(campaignID: $0[0], test: $0[1], day: $0[2], chunk: $0[3]), $0[4]) }
    }

    func sketches(_ keys: [DeviceSketches.Day], of period: DeviceSketches.Period) throws -> [DeviceSketches.Day: (chunks: Int, registers: Data)] {
        let read = try db.cachedStatement(
            sql: "SELECT chunks, registers FROM \(period.table) WHERE campaign_id = ? AND test = ? AND \(period.keyColumn) = ?")
        var sketches: [DeviceSketches.Day: (chunks: Int, registers: Data)] = [:]
        for key in keys {
            if let row = try Row.fetchOne(read, arguments: [key.campaignID, key.test, key.day]) { sketches[key] = (row[0], row[1]) }
        }
        return sketches
    }

    func writeSketches(_ sketches: [(DeviceSketches.Day, chunks: Int, registers: Data)], of period: DeviceSketches.Period) throws {
        let key = period.keyColumn
        let write = try db.cachedStatement(sql: """
            INSERT INTO \(period.table) (campaign_id, test, \(key), chunks, registers) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (campaign_id, test, \(key)) DO UPDATE SET chunks = excluded.chunks, registers = excluded.registers
            """)
        for (day, chunks, registers) in sketches { try write.execute(arguments: [day.campaignID, day.test, day.day, chunks, registers]) }
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
        _ = arguments.append(contentsOf: [range.test, key?.1 ?? range.from, key?.2 ?? range.to])
        let column = key?.0.keyColumn ?? "day"
        return ("WHERE \(range.campaignID == nil ? "" : "campaign_id = ? AND ")test = ? AND \(column) BETWEEN ? AND ?", arguments)
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
