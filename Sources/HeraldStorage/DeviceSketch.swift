import Foundation
import GRDB

/// A HyperLogLog sketch of the devices of one campaign on one day (migration 0017): 4096 one-byte
/// registers, so estimating a range reads 4 KB a day however many devices there were; the standard error
/// is 1.04 / √4096 ≈ 1.6 %. Devices are added by their app and number, the same pair the bitmaps use,
/// so the sketches of two campaigns of one app union without counting a device twice.
struct DeviceSketch: Equatable {
    static let precision = 12
    static let registerCount = 1 << precision

    private(set) var registers: [UInt8]

    init() {
        registers = Array(repeating: 0, count: Self.registerCount)
    }

    /// Reads stored registers; a blob of another length (never written by Herald) reads as far as it goes.
    init(blob: Data) {
        self.init()
        blob.withUnsafeBytes { formUnion($0) }
    }

    var blob: Data { Data(registers) }

    /// Adds a device; answers whether a register changed (the sketch must be written again).
    @discardableResult
    mutating func insert(app: Int64, number: Int64) -> Bool {
        let hash = Self.hash(app: app, number: number)
        let register = Int(hash >> UInt64(64 - Self.precision))
        // The rank of the first set bit after the register's bits; the guard bit caps it at 64 - precision + 1.
        let rank = UInt8((hash << UInt64(Self.precision) | 1 << UInt64(Self.precision - 1)).leadingZeroBitCount + 1)
        guard rank > registers[register] else { return false }
        registers[register] = rank
        return true
    }

    /// The union with stored registers, read in place: each register the larger of the two. Written without a
    /// branch so that it compiles to vector maxima: a 90-day estimate merges 368 KB, and the compare-and-store
    /// loop was 5 % of a report's CPU.
    mutating func formUnion(_ stored: UnsafeRawBufferPointer) {
        let stored = stored.assumingMemoryBound(to: UInt8.self).prefix(Self.registerCount)
        registers.withUnsafeMutableBufferPointer { registers in
            for index in stored.indices {
                registers[index] = max(registers[index], stored[index])
            }
        }
    }

    /// The estimated number of distinct devices: HyperLogLog's harmonic mean, with linear counting while
    /// registers are still empty (small ranges). A 64-bit hash needs no correction at the large end.
    var estimate: Int {
        let count = Double(Self.registerCount)
        var sum = 0.0
        var empty = 0
        for register in registers {
            sum += Double(sign: .plus, exponent: -Int(register), significand: 1)
            if register == 0 { empty += 1 }
        }
        let alpha = 0.7213 / (1 + 1.079 / count)
        let raw = alpha * count * count / sum
        if raw <= 2.5 * count, empty > 0 { return Int((count * log(count / Double(empty))).rounded()) }
        return Int(raw.rounded())
    }

    /// SplitMix64's finalizer over the app and the device number: every bit of both moves every bit of the hash.
    static func hash(app: Int64, number: Int64) -> UInt64 {
        var value = UInt64(bitPattern: app) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: number)
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// The sketches of campaigns' days and how many bitmap chunks each day has (`device_sketches`), kept by
/// ingestion beside the bitmaps; a range's unique devices are estimated from them when counting its
/// chunks exactly would read more than `exactChunkLimit` of them.
enum DeviceSketches {
    /// Chunk rows a range may have and still be counted exactly: 512 KB of bitmaps, about what the
    /// sketches of a 90-day range weigh (368 KB). At 4096 (2 MB) a 30-day report of 100,000 devices a day
    /// read 2,940 chunks, 1.5 MB through PostgreSQL's connection, and took 3 ms longer than 90 days of sketches.
    static let exactChunkLimit = 1024

    struct Day: Hashable {
        let campaignID: Int64, test: Bool, day: String
    }

    /// What one batch added to a day: the devices new to it (by app and number) and its new chunk rows.
    struct Added {
        var devices: [(app: Int64, number: Int64)] = []
        var chunks = 0
    }

    /// Adds a batch's new devices and chunks to their days' sketches; one read and at most one write a day.
    static func record(_ added: [Day: Added], in rows: some DeviceRows) throws {
        let days = added.filter { !$0.value.devices.isEmpty || $0.value.chunks != 0 }.keys
            .sorted { ($0.campaignID, $0.test ? 1 : 0, $0.day) < ($1.campaignID, $1.test ? 1 : 0, $1.day) }
        guard !days.isEmpty else { return }
        let stored = try rows.sketches(days)
        var writes: [(Day, chunks: Int, registers: Data)] = []
        for day in days {
            guard let additions = added[day] else { continue }
            let row = stored[day]
            var sketch = row.map { DeviceSketch(blob: $0.registers) } ?? DeviceSketch()
            var changed = additions.chunks != 0 || row == nil
            for device in additions.devices where sketch.insert(app: device.app, number: device.number) { changed = true }
            let chunks = max(0, (row?.chunks ?? 0) + additions.chunks)
            if changed { writes.append((day, chunks, sketch.blob)) }
        }
        try rows.writeSketches(writes)
    }

    /// The estimated distinct devices of a range: the union of its days' sketches.
    static func estimate(_ range: DeviceRange, in rows: some DeviceRows) throws -> Int {
        var union = DeviceSketch()
        try rows.forEachSketch(range) { union.formUnion($0) }
        return union.estimate
    }

    /// The sketch and chunk count that the stored bitmaps give each day, a day at a time in key order (so
    /// memory holds one day): what migration 0017 writes for the days stored before it, and what ingestion
    /// keeps them equal to (until an erasure, which clears a bitmap bit but cannot take a device out of a sketch).
    static func fromBitmaps(_ db: Database, _ each: (Day, _ chunks: Int, DeviceSketch) throws -> Void) throws {
        let rows = try Row.fetchCursor(
            db, sql: """
                SELECT b.campaign_id, b.test, b.day, b.chunk, b.bits, c.app_id
                FROM device_bitmaps b JOIN campaigns c ON c.id = b.campaign_id
                ORDER BY b.campaign_id, b.test, b.day
                """)
        var current: (day: Day, chunks: Int, sketch: DeviceSketch)?
        while let row = try rows.next() {
            let day = Day(campaignID: row[0], test: row[1], day: row[2])
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
}
