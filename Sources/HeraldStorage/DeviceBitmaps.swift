import Foundation
import HeraldDomain

/// One chunk of a campaign's devices on a day: bit `n` is set when the installation numbered
/// `chunk * DeviceBitmap.bits + n` in the campaign's app sent an event that day.
package struct DeviceBitmap: Equatable {
    /// Devices a chunk covers: 512 bytes stored.
    package static let bits = 4096
    private static let words = bits / 64

    private(set) var words: [UInt64]

    package init() {
        words = Array(repeating: 0, count: Self.words)
    }

    /// Where a device number's bit is: its chunk, and its offset in that chunk.
    package static func position(of number: Int64) -> (chunk: Int64, offset: Int) {
        (number / Int64(bits), Int(number % Int64(bits)))
    }

    /// Reads a stored chunk; a blob of another length (never written by Herald) reads as far as it goes.
    package init(blob: Data) {
        self.init()
        blob.withUnsafeBytes { bytes in
            for index in 0..<min(bytes.count / 8, Self.words) {
                words[index] = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
            }
        }
    }

    /// Little-endian words, so a stored chunk reads the same on any machine. Written in place: appending
    /// its 512 bytes one at a time was a fifth of ingestion's CPU.
    package var blob: Data {
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
    package mutating func insert(_ offset: Int) -> Bool {
        let mask: UInt64 = 1 << UInt64(offset % 64)
        let had = words[offset / 64] & mask != 0
        words[offset / 64] |= mask
        return !had
    }

    /// Clears the bit of `offset`; answers whether it was set.
    @discardableResult
    package mutating func remove(_ offset: Int) -> Bool {
        let mask: UInt64 = 1 << UInt64(offset % 64)
        let had = words[offset / 64] & mask != 0
        words[offset / 64] &= ~mask
        return had
    }

    package func contains(_ offset: Int) -> Bool {
        words[offset / 64] & (1 << UInt64(offset % 64)) != 0
    }

    package var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// The offsets of the set bits, lowest first.
    package var offsets: [Int] {
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

    package var isEmpty: Bool { words.allSatisfy { $0 == 0 } }
}

/// Which of a campaign's devices a bitmap (and its sketches) holds on a day (migrations 0024, PostgreSQL's
/// 0014): every device that sent the campaign an event, or only those it was shown to, or only those that
/// converted. The funnel's unique devices and conversion rate are counted from the last two.
package enum DeviceKind: String, CaseIterable, Comparable, Sendable {
    /// Sent any event of the campaign: the reports' unique devices.
    case seen
    /// Sent an impression of the campaign.
    case exposed
    /// Sent a conversion attributed to the campaign.
    case converted

    /// What each event adds a device to: `seen` always, and its type's own kind if it has one.
    package static func of(_ type: EventType) -> [DeviceKind] {
        switch type {
        case .impression: [.seen, .exposed]
        case .conversion: [.seen, .converted]
        default: [.seen]
        }
    }

    /// As the stored text sorts, so that rows are read, written and locked in their keys' order.
    package static func < (lhs: DeviceKind, rhs: DeviceKind) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A campaign's chunk of device numbers of one kind on a day: the key of a `device_bitmaps` row.
package struct DeviceChunkKey: Hashable {
    package let campaignID: Int64, test: Bool, kind: DeviceKind, day: String, chunk: Int64

    package init(campaignID: Int64, test: Bool, kind: DeviceKind, day: String, chunk: Int64) {
        self.campaignID = campaignID
        self.test = test
        self.kind = kind
        self.day = day
        self.chunk = chunk
    }

    package var sketchDay: DeviceSketches.Day { DeviceSketches.Day(campaignID: campaignID, test: test, kind: kind, day: day) }
}

/// The rows' key order: a day's (`DeviceSketches.Day`), then the chunk.
extension DeviceChunkKey: Comparable {
    package static func < (a: Self, b: Self) -> Bool {
        a.sketchDay == b.sketchDay ? a.chunk < b.chunk : a.sketchDay < b.sketchDay
    }
}

/// An app's chunk of the device numbers seen on one platform: the key of a `device_platforms` row.
package struct DevicePlatformKey: Hashable {
    package let appID: Int64, platform: String, chunk: Int64

    package init(appID: Int64, platform: String, chunk: Int64) {
        self.appID = appID
        self.platform = platform
        self.chunk = chunk
    }
}

/// An installation of an app: the key of a `device_numbers` row.
package struct DeviceInstallation: Hashable {
    package let appID: Int64, installationID: String

    package init(appID: Int64, installationID: String) {
        self.appID = appID
        self.installationID = installationID
    }
}

/// The rows of one campaign (or of all, nil), test flag, kind and inclusive range of UTC days.
package struct DeviceRange: Hashable {
    package let campaignID: Int64?, from: String, to: String, test: Bool, kind: DeviceKind

    package init(campaignID: Int64?, from: String, to: String, test: Bool, kind: DeviceKind = .seen) {
        self.campaignID = campaignID
        self.from = from
        self.to = to
        self.test = test
        self.kind = kind
    }
}

/// Where one engine keeps device numbers, bitmap chunks and sketches: the reads and writes that
/// `DeviceBitmaps` and `DeviceSketches` make, so that their algorithms are written once for every engine.
package protocol DeviceRows {
    /// Makes other writers of these apps' device numbers and these days' bitmaps and sketches (and their
    /// weeks' sketches) wait until this transaction ends; called before they are read. Nothing where the
    /// engine has one writer.
    func lock(apps: Set<Int64>, days: Set<DeviceSketches.Day>) throws
    func numbers(of installations: [DeviceInstallation]) throws -> [DeviceInstallation: Int64]
    /// The number the app gives out next (0 before its first).
    func nextNumber(appID: Int64) throws -> Int64
    func insertNumbers(_ numbers: [(DeviceInstallation, Int64)]) throws
    func setNextNumber(appID: Int64, _ next: Int64) throws
    func deleteNumber(_ installation: DeviceInstallation) throws
    func chunks(_ keys: [DeviceChunkKey]) throws -> [DeviceChunkKey: Data]
    /// Inserts or replaces each chunk's bits.
    func writeChunks(_ chunks: [(DeviceChunkKey, Data)]) throws
    func deleteChunks(_ keys: [DeviceChunkKey]) throws
    /// The stored chunks numbered `chunk` of every campaign of the app.
    func chunks(appID: Int64, chunk: Int64) throws -> [(DeviceChunkKey, Data)]
    func sketches(_ keys: [DeviceSketches.Day], of period: DeviceSketches.Period) throws -> [DeviceSketches.Day: (chunks: Int, registers: Data)]
    /// Inserts or replaces each day's (or week's) chunk count and registers.
    func writeSketches(_ sketches: [(DeviceSketches.Day, chunks: Int, registers: Data)], of period: DeviceSketches.Period) throws
    /// Each campaign's app, for one campaign or for all (nil).
    func campaignApps(campaignID: Int64?) throws -> [Int64: Int64]
    /// Calls `body` with each chunk row of the range, its bits read in place.
    func forEachChunk(_ range: DeviceRange, _ body: (_ campaignID: Int64, _ chunk: Int64, _ bits: UnsafeRawBufferPointer) -> Void) throws
    /// The chunk rows the range holds, summed from its sketch rows (`DeviceSketches.Split`).
    func chunkCount(_ range: DeviceRange) throws -> Int
    /// Calls `body` with the registers of each sketch row that covers the range (`DeviceSketches.Split`).
    func forEachSketch(_ range: DeviceRange, _ body: (UnsafeRawBufferPointer) -> Void) throws
    func platformChunks(_ keys: [DevicePlatformKey]) throws -> [DevicePlatformKey: Data]
    /// Inserts or replaces each platform chunk's bits.
    func writePlatformChunks(_ chunks: [(DevicePlatformKey, Data)]) throws
    /// Calls `body` with each platform chunk of these apps, its bits read in place.
    func forEachPlatformChunk(apps: Set<Int64>, _ body: (DevicePlatformKey, UnsafeRawBufferPointer) -> Void) throws
}

/// Unique devices per campaign, test flag and day, as bitmaps over per-app device numbers
/// (`device_numbers`, `device_bitmaps`, migration 0015). A range's unique devices are the union of its
/// days' chunks: at most one 512-byte row per day and 4096 devices, whatever the number of events.
/// Written once over `DeviceRows`, whichever engine keeps the rows.
package enum DeviceBitmaps {
    /// A campaign's device on a day, as ingestion sees it.
    package struct Sighting: Hashable {
        package let appID: Int64, campaignID: Int64, day: String, test: Bool, kind: DeviceKind, installationID: String, platform: String
    }

    /// Numbers installations never seen in their app (in the order given, so a batch numbers its devices
    /// as they came) and sets their bits; one read and at most one write per chunk touched.
    package static func record(_ sightings: [Sighting], in rows: some DeviceRows) throws {
        guard !sightings.isEmpty else { return }
        let numbers = try self.numbers(for: sightings.map { DeviceInstallation(appID: $0.appID, installationID: $0.installationID) }, in: rows)
        // Before the days' locks: apps' locks are taken first (`DeviceRows.lock`).
        try recordPlatforms(sightings, numbers: numbers, in: rows)
        var offsets: [DeviceChunkKey: [Int]] = [:]
        var apps: [Int64: Int64] = [:]
        for sighting in sightings {
            guard let number = numbers[DeviceInstallation(appID: sighting.appID, installationID: sighting.installationID)] else { continue }
            let (chunk, offset) = DeviceBitmap.position(of: number)
            offsets[DeviceChunkKey(campaignID: sighting.campaignID, test: sighting.test, kind: sighting.kind, day: sighting.day, chunk: chunk), default: []]
                .append(offset)
            apps[sighting.campaignID] = sighting.appID
        }
        try rows.lock(apps: [], days: Set(offsets.keys.map(\.sketchDay)))
        let keys = offsets.keys.sorted()
        let stored = try rows.chunks(keys)
        var writes: [(DeviceChunkKey, Data)] = []
        // A device new to a day's bitmap is new to its sketch too; one already in it was added before.
        var added: [DeviceSketches.Day: DeviceSketches.Added] = [:]
        for key in keys {
            guard let app = apps[key.campaignID], let chunkOffsets = offsets[key] else { continue }
            let blob = stored[key]
            var bitmap = blob.map(DeviceBitmap.init(blob:)) ?? DeviceBitmap()
            var new: [(app: Int64, number: Int64)] = []
            for offset in chunkOffsets where bitmap.insert(offset) { new.append((app, key.chunk * Int64(DeviceBitmap.bits) + Int64(offset))) }
            guard !new.isEmpty else { continue }
            added[key.sketchDay, default: DeviceSketches.Added()].devices += new
            if blob == nil { added[key.sketchDay, default: DeviceSketches.Added()].chunks += 1 }
            writes.append((key, bitmap.blob))
        }
        try rows.writeChunks(writes)
        try DeviceSketches.record(added, in: rows)
    }

    /// Sets each device's bit in its app's bitmap of the platform it sent from (`device_platforms`), which
    /// splits unique devices by platform. A device is new to its platform once, so most batches only read:
    /// only a batch with a new one takes its apps' locks, and reads again under them before it writes.
    private static func recordPlatforms(_ sightings: [Sighting], numbers: [DeviceInstallation: Int64], in rows: some DeviceRows) throws {
        var offsets: [DevicePlatformKey: Set<Int>] = [:]
        for sighting in sightings {
            guard let number = numbers[DeviceInstallation(appID: sighting.appID, installationID: sighting.installationID)] else { continue }
            let (chunk, offset) = DeviceBitmap.position(of: number)
            offsets[DevicePlatformKey(appID: sighting.appID, platform: sighting.platform, chunk: chunk), default: []].insert(offset)
        }
        func unset(in stored: [DevicePlatformKey: Data]) -> [DevicePlatformKey] {
            offsets.compactMap { key, wanted in
                let bitmap = stored[key].map(DeviceBitmap.init(blob:)) ?? DeviceBitmap()
                return wanted.allSatisfy(bitmap.contains) ? nil : key
            }
        }
        let keys = unset(in: try rows.platformChunks(Array(offsets.keys)))
        guard !keys.isEmpty else { return }
        try rows.lock(apps: Set(keys.map(\.appID)), days: [])
        let stored = try rows.platformChunks(keys)
        var writes: [(DevicePlatformKey, Data)] = []
        for key in keys {
            var bitmap = stored[key].map(DeviceBitmap.init(blob:)) ?? DeviceBitmap()
            let changed = (offsets[key] ?? []).reduce(false) { changed, offset in bitmap.insert(offset) || changed }
            if changed { writes.append((key, bitmap.blob)) }
        }
        try rows.writePlatformChunks(writes)
    }

    /// Each installation's number in its app, given out from the app's counter to those without one.
    private static func numbers(for installations: [DeviceInstallation], in rows: some DeviceRows) throws -> [DeviceInstallation: Int64] {
        var seen: Set<DeviceInstallation> = []
        let distinct = installations.filter { seen.insert($0).inserted }
        var numbers = try rows.numbers(of: distinct)
        var unnumbered = distinct.filter { numbers[$0] == nil }
        guard !unnumbered.isEmpty else { return numbers }
        // Another writer may have numbered some of them before this one held the apps' lock.
        try rows.lock(apps: Set(unnumbered.map(\.appID)), days: [])
        numbers.merge(try rows.numbers(of: unnumbered)) { first, _ in first }
        unnumbered = unnumbered.filter { numbers[$0] == nil }
        var counters: [Int64: Int64] = [:]
        var inserts: [(DeviceInstallation, Int64)] = []
        for key in unnumbered {
            let number = try counters[key.appID] ?? rows.nextNumber(appID: key.appID)
            inserts.append((key, number))
            numbers[key] = number
            counters[key.appID] = number + 1
        }
        try rows.insertNumbers(inserts)
        for (appID, next) in counters.sorted(by: { $0.key < $1.key }) { try rows.setNextNumber(appID: appID, next) }
        return numbers
    }

    /// Distinct devices of a kind of `campaignID` (every campaign when nil) from `from` to `to`, inclusive UTC days:
    /// counted from the bitmaps while the range has at most `exactChunkLimit` chunk rows, else estimated
    /// from the days' sketches (`estimated` true). Split by platform only when asked (`byPlatform`): the
    /// split reads every platform chunk of the apps, which a count alone does not need.
    package static func uniqueDevices(
        campaignID: Int64?, from: String, to: String, test: Bool, kind: DeviceKind = .seen, byPlatform splits: Bool,
        exactChunkLimit: Int = DeviceSketches.exactChunkLimit, in rows: some DeviceRows
    ) throws -> UniqueDevices {
        let range = DeviceRange(campaignID: campaignID, from: from, to: to, test: test, kind: kind)
        let chunks = try rows.chunkCount(range)
        // No chunk row, no device: nothing to read (most ranges of test devices).
        guard chunks > 0 else { return UniqueDevices(count: 0, estimated: false, byPlatform: [:]) }
        let apps = try rows.campaignApps(campaignID: range.campaignID)
        if chunks > exactChunkLimit {
            let count = try DeviceSketches.estimate(range, in: rows)
            let byPlatform = splits ? try apportion(count, byPlatformsOf: Set(apps.values), in: rows) : [:]
            return UniqueDevices(count: count, estimated: true, byPlatform: byPlatform)
        }
        let union = try self.union(range, apps: apps, in: rows)
        guard splits else { return UniqueDevices(count: union.count, estimated: false, byPlatform: [:]) }
        var byPlatform: [String: Int] = [:]
        try rows.forEachPlatformChunk(apps: Set(apps.values)) { key, bits in
            let common = union.countInBoth(app: key.appID, chunk: key.chunk, bits: bits)
            if common > 0 { byPlatform[key.platform, default: 0] += common }
        }
        return UniqueDevices(count: union.count, estimated: false, byPlatform: byPlatform)
    }

    /// A range's distinct devices, in all and, when asked, per platform (each device under the platforms it
    /// sent from; empty when not asked).
    package struct UniqueDevices: Equatable {
        package var count: Int
        /// Estimated from the days' sketches (about 1.6 % standard error), not counted; then `byPlatform`
        /// is the estimate shared out as the apps' devices are among platforms.
        package var estimated: Bool
        package var byPlatform: [String: Int]
    }

    /// The union of a range's bitmap chunks. Numbers are per app: chunks of different apps are different
    /// devices. `apps` (each campaign's) is read first, a row per campaign, so the chunk rows need no join.
    private static func union(_ range: DeviceRange, apps: [Int64: Int64], in rows: some DeviceRows) throws -> ChunkUnion {
        var union = ChunkUnion()
        try rows.forEachChunk(range) { campaignID, chunk, bits in
            guard let app = apps[campaignID] else { return }
            union.add(app: app, chunk: chunk, bits: bits)
        }
        return union
    }

    /// `total` shared out among platforms as the apps' devices are (rounded down; read from the platform
    /// bitmaps, a few rows per app and platform), for a range too large to count per platform.
    private static func apportion(_ total: Int, byPlatformsOf apps: Set<Int64>, in rows: some DeviceRows) throws -> [String: Int] {
        var devices: [String: Int] = [:]
        try rows.forEachPlatformChunk(apps: apps) { key, bits in
            var count = 0
            for index in 0..<(bits.count / 8) { count += bits.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self).nonzeroBitCount }
            devices[key.platform, default: 0] += count
        }
        let all = devices.values.reduce(0, +)
        guard all > 0 else { return [:] }
        return devices.mapValues { Int(Double(total) * Double($0) / Double(all)) }
    }

    /// The union of chunks by app and chunk number: each distinct chunk's 64 words in one flat array, so
    /// adding a stored chunk is a lookup and 64 ORs, with no allocation per row.
    package struct ChunkUnion {
        private struct Key: Hashable {
            let app: Int64
            let chunk: Int64
        }

        private var slots: [Key: Int] = [:]
        private var words: [UInt64] = []
        private static let wordsPerChunk = DeviceBitmap.bits / 64

        /// ORs a stored chunk in; a blob of another length (never written by Herald) adds as far as it goes.
        package mutating func add(app: Int64, chunk: Int64, bits: UnsafeRawBufferPointer) {
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

        package var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

        /// The devices both in the union and in a stored chunk of the app (0 when the union has none of it).
        package func countInBoth(app: Int64, chunk: Int64, bits: UnsafeRawBufferPointer) -> Int {
            guard let base = slots[Key(app: app, chunk: chunk)] else { return 0 }
            var count = 0
            for index in 0..<min(bits.count / 8, Self.wordsPerChunk) {
                count += (words[base + index] & UInt64(littleEndian: bits.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))).nonzeroBitCount
            }
            return count
        }
    }

    /// The chunks of an installation's app that have its bit set, and its number; read in a snapshot
    /// before an erasure's write (`erase`).
    package static func sightings(of installationID: String, appID: Int64, in rows: some DeviceRows) throws -> (number: Int64, chunks: [DeviceChunkKey])? {
        let installation = DeviceInstallation(appID: appID, installationID: installationID)
        guard let number = try rows.numbers(of: [installation])[installation] else { return nil }
        let (chunk, offset) = DeviceBitmap.position(of: number)
        let chunks = try rows.chunks(appID: appID, chunk: chunk).filter { DeviceBitmap(blob: $0.1).contains(offset) }.map(\.0)
        return (number, chunks)
    }

    /// Clears an installation's bit in the chunks found by `sightings` and in those of `recent` (the
    /// campaigns and days of events it sent since, of every kind), and forgets its number (never given out again).
    package static func erase(
        _ found: (number: Int64, chunks: [DeviceChunkKey])?, installationID: String, appID: Int64,
        recent: [(campaignID: Int64, test: Bool, day: String)], in rows: some DeviceRows
    ) throws {
        let installation = DeviceInstallation(appID: appID, installationID: installationID)
        try rows.lock(apps: [appID], days: [])
        let number: Int64
        if let found {
            number = found.number
        } else if let assigned = try rows.numbers(of: [installation])[installation] {
            number = assigned  // numbered while the snapshot was read
        } else {
            return
        }
        let (chunk, offset) = DeviceBitmap.position(of: number)
        var keys = Set(found?.chunks ?? [])
        keys.formUnion(recent.flatMap { day in
            DeviceKind.allCases.map { DeviceChunkKey(campaignID: day.campaignID, test: day.test, kind: $0, day: day.day, chunk: chunk) }
        })
        try rows.lock(apps: [], days: Set(keys.map(\.sketchDay)))
        let stored = try rows.chunks(Array(keys))
        var writes: [(DeviceChunkKey, Data)] = []
        var deletes: [DeviceChunkKey] = []
        // A sketch keeps the device (HyperLogLog cannot remove one); its day's chunk count follows the bitmaps.
        var removedChunks: [DeviceSketches.Day: DeviceSketches.Added] = [:]
        for (key, blob) in stored {
            var bitmap = DeviceBitmap(blob: blob)
            guard bitmap.remove(offset) else { continue }
            if bitmap.isEmpty {
                deletes.append(key)
                removedChunks[key.sketchDay, default: DeviceSketches.Added()].chunks -= 1
            } else {
                writes.append((key, bitmap.blob))
            }
        }
        try rows.writeChunks(writes)
        try rows.deleteChunks(deletes)
        try DeviceSketches.record(removedChunks, in: rows)
        // Its number is never given out again; its platform bit goes with it all the same.
        var platformWrites: [(DevicePlatformKey, Data)] = []
        try rows.forEachPlatformChunk(apps: [appID]) { key, bits in
            guard key.chunk == chunk else { return }
            var bitmap = DeviceBitmap(blob: Data(bits))
            if bitmap.remove(offset) { platformWrites.append((key, bitmap.blob)) }
        }
        try rows.writePlatformChunks(platformWrites)
        try rows.deleteNumber(installation)
    }
}
