import Foundation
import GRDB

/// One chunk of a campaign's devices on a day: bit `n` is set when the installation numbered
/// `chunk * DeviceBitmap.bits + n` in the campaign's app sent an event that day.
struct DeviceBitmap: Equatable {
    /// Devices a chunk covers: 512 bytes stored.
    static let bits = 4096
    private static let words = bits / 64

    private(set) var words: [UInt64]

    init() {
        words = Array(repeating: 0, count: Self.words)
    }

    /// Where a device number's bit is: its chunk, and its offset in that chunk.
    static func position(of number: Int64) -> (chunk: Int64, offset: Int) {
        (number / Int64(bits), Int(number % Int64(bits)))
    }

    /// Reads a stored chunk; a blob of another length (never written by Herald) reads as far as it goes.
    init(blob: Data) {
        self.init()
        blob.withUnsafeBytes { bytes in
            for index in 0..<min(bytes.count / 8, Self.words) {
                words[index] = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
            }
        }
    }

    /// Little-endian words, so a stored chunk reads the same on any machine. Written in place: appending
    /// its 512 bytes one at a time was a fifth of ingestion's CPU.
    var blob: Data {
        var bytes = Data(count: Self.words * 8)
        bytes.withUnsafeMutableBytes { raw in
            for (index, word) in words.enumerated() {
                raw.storeBytes(of: word.littleEndian, toByteOffset: index * 8, as: UInt64.self)
            }
        }
        return bytes
    }

    /// Sets the bit of `offset` (0..<bits); answers whether it was clear.
    @discardableResult
    mutating func insert(_ offset: Int) -> Bool {
        let mask: UInt64 = 1 << UInt64(offset % 64)
        let had = words[offset / 64] & mask != 0
        words[offset / 64] |= mask
        return !had
    }

    /// Clears the bit of `offset`; answers whether it was set.
    @discardableResult
    mutating func remove(_ offset: Int) -> Bool {
        let mask: UInt64 = 1 << UInt64(offset % 64)
        let had = words[offset / 64] & mask != 0
        words[offset / 64] &= ~mask
        return had
    }

    func contains(_ offset: Int) -> Bool {
        words[offset / 64] & (1 << UInt64(offset % 64)) != 0
    }

    var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// The offsets of the set bits, lowest first.
    var offsets: [Int] {
        var offsets: [Int] = []
        for (index, word) in words.enumerated() {
            var rest = word
            while rest != 0 {
                offsets.append(index * 64 + rest.trailingZeroBitCount)
                rest &= rest - 1
            }
        }
        return offsets
    }

    var isEmpty: Bool { words.allSatisfy { $0 == 0 } }
}

/// Unique devices per campaign, test flag and day, as bitmaps over per-app device numbers
/// (`device_numbers`, `device_bitmaps`, migration 0015). A range's unique devices are the union of its
/// days' chunks: at most one 512-byte row per day and 4096 devices, whatever the number of events.
enum DeviceBitmaps {
    /// A campaign's device on a day, as ingestion sees it.
    struct Sighting: Hashable {
        let appID: Int64, campaignID: Int64, day: String, test: Bool, installationID: String
    }

    private struct ChunkKey: Hashable {
        let campaignID: Int64, test: Bool, day: String, chunk: Int64
    }

    /// Numbers installations never seen in their app (in the order given, so a batch numbers its devices
    /// as they came) and sets their bits; one read and at most one write per chunk touched.
    static func record(_ sightings: [Sighting], in db: Database) throws {
        guard !sightings.isEmpty else { return }
        let numbers = try self.numbers(for: sightings.map { ($0.appID, $0.installationID) }, in: db)
        var offsets: [ChunkKey: [Int]] = [:]
        var apps: [Int64: Int64] = [:]
        for sighting in sightings {
            guard let number = numbers[AppInstallation(appID: sighting.appID, installationID: sighting.installationID)] else { continue }
            let (chunk, offset) = DeviceBitmap.position(of: number)
            offsets[ChunkKey(campaignID: sighting.campaignID, test: sighting.test, day: sighting.day, chunk: chunk), default: []].append(offset)
            apps[sighting.campaignID] = sighting.appID
        }
        let read = try chunkReader(db)
        let write = try db.cachedStatement(sql: """
            INSERT INTO device_bitmaps (campaign_id, test, day, chunk, bits) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (campaign_id, test, day, chunk) DO UPDATE SET bits = excluded.bits
            """)
        // A device new to a day's bitmap is new to its sketch too; one already in it was added before.
        var added: [DeviceSketches.Day: DeviceSketches.Added] = [:]
        for (key, chunkOffsets) in offsets {
            guard let app = apps[key.campaignID] else { continue }
            let arguments: StatementArguments = [key.campaignID, key.test, key.day, key.chunk]
            let stored = try Data.fetchOne(read, arguments: arguments)
            var bitmap = stored.map(DeviceBitmap.init(blob:)) ?? DeviceBitmap()
            let day = DeviceSketches.Day(campaignID: key.campaignID, test: key.test, day: key.day)
            var new: [(app: Int64, number: Int64)] = []
            for offset in chunkOffsets where bitmap.insert(offset) { new.append((app, key.chunk * Int64(DeviceBitmap.bits) + Int64(offset))) }
            guard !new.isEmpty else { continue }
            added[day, default: DeviceSketches.Added()].devices += new
            if stored == nil { added[day, default: DeviceSketches.Added()].chunks += 1 }
            try write.execute(arguments: arguments + [bitmap.blob])
        }
        try DeviceSketches.record(added, in: db)
    }

    /// An installation's number in its app, nil before its first event (or after its erasure).
    private static func number(of installationID: String, appID: Int64, in db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT number FROM device_numbers WHERE app_id = ? AND installation_id = ?"),
            arguments: [appID, installationID])
    }

    /// Reads one chunk's bits, given its campaign, test flag, day and chunk number.
    private static func chunkReader(_ db: Database) throws -> Statement {
        try db.cachedStatement(sql: "SELECT bits FROM device_bitmaps WHERE campaign_id = ? AND test = ? AND day = ? AND chunk = ?")
    }

    private struct AppInstallation: Hashable {
        let appID: Int64, installationID: String
    }

    /// Each installation's number in its app, given out from the app's counter to those without one.
    private static func numbers(for installations: [(Int64, String)], in db: Database) throws -> [AppInstallation: Int64] {
        var numbers: [AppInstallation: Int64] = [:]
        var unnumbered: [AppInstallation] = []
        var looked: Set<AppInstallation> = []
        for (appID, installationID) in installations {
            let key = AppInstallation(appID: appID, installationID: installationID)
            guard looked.insert(key).inserted else { continue }
            if let number = try Self.number(of: installationID, appID: appID, in: db) {
                numbers[key] = number
            } else {
                unnumbered.append(key)
            }
        }
        guard !unnumbered.isEmpty else { return numbers }
        let next = try db.cachedStatement(sql: "SELECT next_number FROM device_number_counters WHERE app_id = ?")
        let advance = try db.cachedStatement(sql: """
            INSERT INTO device_number_counters (app_id, next_number) VALUES (?, ?)
            ON CONFLICT (app_id) DO UPDATE SET next_number = excluded.next_number
            """)
        let insert = try db.cachedStatement(sql: "INSERT INTO device_numbers (app_id, installation_id, number) VALUES (?, ?, ?)")
        var counters: [Int64: Int64] = [:]
        for key in unnumbered {
            var number: Int64
            if let counted = counters[key.appID] {
                number = counted
            } else {
                number = try Int64.fetchOne(next, arguments: [key.appID]) ?? 0
            }
            try insert.execute(arguments: [key.appID, key.installationID, number])
            numbers[key] = number
            counters[key.appID] = number + 1
        }
        for (appID, next) in counters { try advance.execute(arguments: [appID, next]) }
        return numbers
    }

    /// Distinct devices of `campaignID` (every campaign when nil) from `from` to `to`, inclusive UTC days:
    /// counted from the bitmaps while the range has at most `exactChunkLimit` chunk rows, else estimated
    /// from the days' sketches (`estimated` true).
    static func uniqueDevices(
        campaignID: Int64?, from: String, to: String, test: Bool, exactChunkLimit: Int = DeviceSketches.exactChunkLimit, in db: Database
    ) throws -> (count: Int, estimated: Bool) {
        if try DeviceSketches.chunks(campaignID: campaignID, from: from, to: to, test: test, in: db) > exactChunkLimit {
            return (try DeviceSketches.estimate(campaignID: campaignID, from: from, to: to, test: test, in: db), true)
        }
        return (try exactUniqueDevices(campaignID: campaignID, from: from, to: to, test: test, in: db), false)
    }

    /// Distinct devices of a range, the union of its bitmap chunks.
    static func exactUniqueDevices(campaignID: Int64?, from: String, to: String, test: Bool, in db: Database) throws -> Int {
        // Numbers are per app: chunks of different apps are different devices. The apps are read first,
        // a row per campaign, so the chunk rows need no join.
        let apps = try Dictionary(
            Row.fetchAll(db, sql: "SELECT id, app_id FROM campaigns" + (campaignID == nil ? "" : " WHERE id = ?"),
                         arguments: campaignID.map { [$0] } ?? []).map { row -> (Int64, Int64) in (row[0], row[1]) },
            uniquingKeysWith: { first, _ in first })
        let range = DeviceSketches.rangeFilter(campaignID: campaignID, from: from, to: to, test: test)
        let rows = try Row.fetchCursor(db, sql: "SELECT campaign_id, chunk, bits FROM device_bitmaps \(range.sql)", arguments: range.arguments)
        var union = ChunkUnion()
        while let row = try rows.next() {
            guard let app = apps[row[0]] else { continue }
            // The blob is read where SQLite holds it: a day's chunks at a million devices are 30 MB a quarter.
            try row.withUnsafeData(atIndex: 2) { bits in
                bits?.withUnsafeBytes { union.add(app: app, chunk: row[1], bits: $0) }
            }
        }
        return union.count
    }

    /// The union of chunks by app and chunk number: each distinct chunk's 64 words in one flat array, so
    /// adding a stored chunk is a lookup and 64 ORs, with no allocation per row.
    struct ChunkUnion {
        private struct Key: Hashable {
            let app: Int64
            let chunk: Int64
        }

        private var slots: [Key: Int] = [:]
        private var words: [UInt64] = []
        private static let wordsPerChunk = DeviceBitmap.bits / 64

        /// ORs a stored chunk in; a blob of another length (never written by Herald) adds as far as it goes.
        mutating func add(app: Int64, chunk: Int64, bits: UnsafeRawBufferPointer) {
            let key = Key(app: app, chunk: chunk)
            let base: Int
            if let slot = slots[key] {
                base = slot
            } else {
                base = words.count
                slots[key] = base
                words.append(contentsOf: repeatElement(0, count: Self.wordsPerChunk))
            }
            words.withUnsafeMutableBufferPointer { words in
                for index in 0..<min(bits.count / 8, Self.wordsPerChunk) {
                    words[base + index] |= UInt64(littleEndian: bits.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
                }
            }
        }

        var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }
    }

    /// The chunk rows of an installation's app that have its bit set, and its number; read in a snapshot
    /// before an erasure's write (`erase`).
    static func sightings(of installationID: String, appID: Int64, in db: Database) throws -> (number: Int64, chunks: [Row])? {
        guard let number = try Self.number(of: installationID, appID: appID, in: db) else { return nil }
        let (chunk, offset) = DeviceBitmap.position(of: number)
        let chunks = try Row.fetchAll(
            db, sql: """
                SELECT campaign_id, test, day, chunk, bits FROM device_bitmaps
                WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?) AND chunk = ?
                """, arguments: [appID, chunk]
        ).filter { DeviceBitmap(blob: $0["bits"]).contains(offset) }
        return (number, chunks)
    }

    /// Clears an installation's bit in the chunks found by `sightings` and in those of `recent` (the
    /// campaigns and days of events it sent since), and forgets its number (never given out again).
    static func erase(
        _ found: (number: Int64, chunks: [Row])?, installationID: String, appID: Int64, recent: [(campaignID: Int64, test: Bool, day: String)],
        in db: Database
    ) throws {
        let number: Int64
        if let found {
            number = found.number
        } else if let assigned = try Self.number(of: installationID, appID: appID, in: db) {
            number = assigned  // numbered while the snapshot was read
        } else {
            return
        }
        let (chunk, offset) = DeviceBitmap.position(of: number)
        var keys = Set((found?.chunks ?? []).map { ChunkKey(campaignID: $0["campaign_id"], test: $0["test"], day: $0["day"], chunk: $0["chunk"]) })
        keys.formUnion(recent.map { ChunkKey(campaignID: $0.campaignID, test: $0.test, day: $0.day, chunk: chunk) })
        let read = try chunkReader(db)
        let write = try db.cachedStatement(sql: "UPDATE device_bitmaps SET bits = ? WHERE campaign_id = ? AND test = ? AND day = ? AND chunk = ?")
        let delete = try db.cachedStatement(sql: "DELETE FROM device_bitmaps WHERE campaign_id = ? AND test = ? AND day = ? AND chunk = ?")
        // A sketch keeps the device (HyperLogLog cannot remove one); its day's chunk count follows the bitmaps.
        var removedChunks: [DeviceSketches.Day: DeviceSketches.Added] = [:]
        for key in keys {
            let arguments: StatementArguments = [key.campaignID, key.test, key.day, key.chunk]
            guard let blob = try Data.fetchOne(read, arguments: arguments) else { continue }
            var bitmap = DeviceBitmap(blob: blob)
            guard bitmap.remove(offset) else { continue }
            if bitmap.isEmpty {
                try delete.execute(arguments: arguments)
                removedChunks[DeviceSketches.Day(campaignID: key.campaignID, test: key.test, day: key.day), default: DeviceSketches.Added()].chunks -= 1
            } else {
                try write.execute(arguments: [bitmap.blob] + arguments)
            }
        }
        try DeviceSketches.record(removedChunks, in: db)
        try db.execute(sql: "DELETE FROM device_numbers WHERE app_id = ? AND installation_id = ?", arguments: [appID, installationID])
    }

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
