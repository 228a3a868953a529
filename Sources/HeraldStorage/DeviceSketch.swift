import Foundation
import HeraldDomain

/// A HyperLogLog sketch of the devices of one campaign on one day (migration 0017): 4096 one-byte
/// registers, so estimating a range reads 4 KB a day however many devices there were; the standard error
/// is 1.04 / √4096 ≈ 1.6 %. Devices are added by their app and number, the same pair the bitmaps use,
/// so the sketches of two campaigns of one app union without counting a device twice.
package struct DeviceSketch: Equatable {
    package static let precision = 12
    package static let registerCount = 1 << precision

    private(set) var registers: [UInt8]

    package init() {
        registers = Array(repeating: 0, count: Self.registerCount)
    }

    /// Reads stored registers; a blob of another length (never written by Herald) reads as far as it goes.
    package init(blob: Data) {
        self.init()
        blob.withUnsafeBytes { formUnion($0) }
    }

    package var blob: Data { Data(registers) }

    /// Adds a device; answers whether a register changed (the sketch must be written again).
    @discardableResult
    package mutating func insert(app: Int64, number: Int64) -> Bool {
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
    package mutating func formUnion(_ stored: UnsafeRawBufferPointer) {
        let stored = stored.assumingMemoryBound(to: UInt8.self).prefix(Self.registerCount)
        registers.withUnsafeMutableBufferPointer { registers in
            for index in stored.indices {
                registers[index] = max(registers[index], stored[index])
            }
        }
    }

    /// The estimated number of distinct devices: HyperLogLog's harmonic mean, with linear counting while
    /// registers are still empty (small ranges). A 64-bit hash needs no correction at the large end.
    package var estimate: Int {
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
    package static func hash(app: Int64, number: Int64) -> UInt64 {
        var value = UInt64(bitPattern: app) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: number)
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// The sketches of campaigns' days and how many bitmap chunks each day has (`device_sketches`), kept by
/// ingestion beside the bitmaps; a range's unique devices are estimated from them when counting its
/// chunks exactly would read more than `exactChunkLimit` of them.
///
/// Each week, Monday to Sunday, has the same beside its days (`device_week_sketches`, migration 0018): the
/// union of its days' sketches and the sum of their chunk counts, written with them. A range reads its
/// whole weeks from the weeks' rows and only the days around them from the days' (`Split`): 90 days are
/// at most 12 weeks and 12 days, 96 KB instead of 368.
package enum DeviceSketches {
    /// Chunk rows a range may have and still be counted exactly: 512 KB of bitmaps, about what the
    /// sketches of a 90-day range weigh (368 KB). At 4096 (2 MB) a 30-day report of 100,000 devices a day
    /// read 2,940 chunks, 1.5 MB through PostgreSQL's connection, and took 3 ms longer than 90 days of sketches.
    package static let exactChunkLimit = 1024

    /// A sketch row's key: a campaign, test flag, kind and day, or (`Period.week`) the Monday of a week.
    package struct Day: Hashable {
        package let campaignID: Int64, test: Bool, kind: DeviceKind, day: String

        package init(campaignID: Int64, test: Bool, kind: DeviceKind, day: String) {
            self.campaignID = campaignID
            self.test = test
            self.kind = kind
            self.day = day
        }

        /// The key of the week the day is in; nil for a text that is not a day (never written by Herald).
        package var week: Day? { DeviceSketches.monday(of: day).map { Day(campaignID: campaignID, test: test, kind: kind, day: $0) } }

    }

    /// Which rows a sketch is kept in: a day's, or a week's.
    package enum Period {
        case day, week

        package var table: String { self == .day ? "device_sketches" : "device_week_sketches" }
        package var keyColumn: String { self == .day ? "day" : "week" }
    }

    /// What one batch added to a day: the devices new to it (by app and number) and its new chunk rows.
    package struct Added {
        var devices: [(app: Int64, number: Int64)] = []
        var chunks = 0
    }

    /// Adds a batch's new devices and chunks to their days' sketches and their weeks'; one read and at most
    /// one write a day and a week.
    package static func record(_ added: [Day: Added], in rows: some DeviceRows) throws {
        let changed = added.filter { !$0.value.devices.isEmpty || $0.value.chunks != 0 }
        guard !changed.isEmpty else { return }
        // A week gets what its days get: the same devices raise the same registers, and the chunks add up.
        var weeks: [Day: Added] = [:]
        for (day, additions) in changed {
            guard let week = day.week else { continue }
            weeks[week, default: Added()].devices += additions.devices
            weeks[week, default: Added()].chunks += additions.chunks
        }
        try add(changed, to: .day, in: rows)
        try add(weeks, to: .week, in: rows)
    }

    private static func add(_ added: [Day: Added], to period: Period, in rows: some DeviceRows) throws {
        let keys = added.keys.sorted()
        let stored = try rows.sketches(keys, of: period)
        var writes: [(Day, chunks: Int, registers: Data)] = []
        for key in keys {
            guard let additions = added[key] else { continue }
            let row = stored[key]
            var sketch = row.map { DeviceSketch(blob: $0.registers) } ?? DeviceSketch()
            var changed = additions.chunks != 0 || row == nil
            for device in additions.devices where sketch.insert(app: device.app, number: device.number) { changed = true }
            let chunks = max(0, (row?.chunks ?? 0) + additions.chunks)
            if changed { writes.append((key, chunks, sketch.blob)) }
        }
        try rows.writeSketches(writes, of: period)
    }

    /// The estimated distinct devices of a range: the union of its weeks' and days' sketches.
    package static func estimate(_ range: DeviceRange, in rows: some DeviceRows) throws -> Int {
        var union = DeviceSketch()
        try rows.forEachSketch(range) { union.formUnion($0) }
        return union.estimate
    }

    /// A range of days as the sketch rows that cover it: its whole weeks, and the days before and after them.
    /// Each part is an inclusive range of keys, empty when its first key sorts after its last (`none`).
    package struct Split: Equatable {
        /// Days from the range's first through `beforeTo`.
        package let beforeTo: String
        /// The Mondays of the whole weeks.
        package let firstWeek: String, lastWeek: String
        /// Days from `afterFrom` through the range's last.
        package let afterFrom: String

        /// Sorts after every day, and "" before every day: a part from `none` to "" holds no row.
        static let none = "~"

        /// The parts as (period, first key, last key), for engines that read them one after another.
        package func parts(from: String, to: String) -> [(Period, String, String)] {
            [(.day, from, beforeTo), (.week, firstWeek, lastWeek), (.day, afterFrom, to)]
        }
    }

    package static func split(from: String, to: String) -> Split {
        let whole = Split(beforeTo: to, firstWeek: Split.none, lastWeek: "", afterFrom: Split.none)
        guard let first = days(from), let last = days(to) else { return whole }
        let firstMonday = monday(first + 6), lastMonday = monday(last - 6)
        guard firstMonday <= lastMonday else { return whole }
        return Split(beforeTo: day(firstMonday - 1), firstWeek: day(firstMonday), lastWeek: day(lastMonday), afterFrom: day(lastMonday + 7))
    }

    /// The Monday of the week `day` is in; nil for a text that is not a day.
    package static func monday(of day: String) -> String? {
        days(day).map { self.day(monday($0)) }
    }

    /// The Monday on or before a day, both as days since 1970-01-01 (a Thursday).
    private static func monday(_ days: Int) -> Int {
        days - ((days % 7) + 7 + 3) % 7
    }

    private static func days(_ day: String) -> Int? {
        UTCTime.date(day: day).map { Int(($0.timeIntervalSince1970 / 86_400).rounded(.down)) }
    }

    private static func day(_ days: Int) -> String {
        UTCTime.day(Date(timeIntervalSince1970: Double(days) * 86_400))
    }

    /// Folds days' rows, given in key order (campaign, test flag, kind, day), into their weeks' rows, passing each
    /// week to `write` once its last row is in: what migration 0018 writes for the days stored before it, on
    /// either engine. Memory holds one week.
    package struct WeekFolder {
        private var current: (week: Day, chunks: Int, sketch: DeviceSketch)?
        private let write: (Day, _ chunks: Int, DeviceSketch) throws -> Void

        package init(write: @escaping (Day, _ chunks: Int, DeviceSketch) throws -> Void) {
            self.write = write
        }

        package mutating func add(_ day: Day, chunks: Int, registers: UnsafeRawBufferPointer) throws {
            guard let week = day.week else { return }
            if let finished = current, finished.week != week {
                try write(finished.week, finished.chunks, finished.sketch)
                current = nil
            }
            var entry = current ?? (week, 0, DeviceSketch())
            entry.chunks += chunks
            entry.sketch.formUnion(registers)
            current = entry
        }

        package mutating func finish() throws {
            if let finished = current { try write(finished.week, finished.chunks, finished.sketch) }
            current = nil
        }
    }

}

/// Key order: campaign, test flag, kind, day, as the rows' primary key sorts them. Locks and writes go
/// in this order, so two writers never wait on each other's rows in turn.
extension DeviceSketches.Day: Comparable {
    package static func < (a: Self, b: Self) -> Bool {
        (a.campaignID, a.test ? 1 : 0, a.kind, a.day) < (b.campaignID, b.test ? 1 : 0, b.kind, b.day)
    }
}
