import Foundation
import Synchronization

/// How many installation registrations one API key, and one client address, may make a minute. A public
/// (web or app) key ships inside every client, so without a limit anyone holding it could fill the
/// installations table; the address limit keeps one client from using up its key's allowance for all.
public struct RegistrationLimitPolicy: Sendable, Equatable {
    /// Registrations a minute through one API key, from all its clients together.
    public var perKey = 600
    /// Registrations a minute from one client address (an IPv4 address or an IPv6 /64).
    public var perAddress = 60
    /// The window the limits count over.
    public var window: TimeInterval = 60
    /// Subjects each limit keeps counts for; past it the least recently seen is forgotten, so memory stays
    /// bounded whatever addresses a flood comes from.
    public var trackedSubjects = 10_000

    public static let allowedLimits = 1...1_000_000

    public init() {}
}

/// The registration limits of one running server: counts kept in memory (a restart forgets them, which
/// costs at most one window's allowance).
final class RegistrationLimits: Sendable {
    enum Subject: String {
        case key = "API key", address = "client address"
    }

    struct Refusal: Equatable {
        let subject: Subject
        let limit: Int
        /// Whole seconds until a registration would be counted again, at least 1.
        let retryAfter: Int
    }

    private let policy: RegistrationLimitPolicy
    private let limiters: Mutex<(key: SlidingWindowLimiter, address: SlidingWindowLimiter)>

    init(policy: RegistrationLimitPolicy) {
        self.policy = policy
        limiters = Mutex((
            SlidingWindowLimiter(limit: policy.perKey, window: policy.window, capacity: policy.trackedSubjects),
            SlidingWindowLimiter(limit: policy.perAddress, window: policy.window, capacity: policy.trackedSubjects)))
    }

    /// Counts a registration through key `keyID` from `address`, or, when either is at its limit, counts
    /// nothing and says which limit and how long to wait (the address's first: it is the narrower one).
    func admit(keyID: Int64, address: String, now: Date) -> Refusal? {
        let key = String(keyID)
        return limiters.withLock { limiters in
            if let wait = limiters.address.wait(for: address, now: now) {
                return Refusal(subject: .address, limit: policy.perAddress, retryAfter: SlidingWindowLimiter.retryAfter(wait))
            }
            if let wait = limiters.key.wait(for: key, now: now) {
                return Refusal(subject: .key, limit: policy.perKey, retryAfter: SlidingWindowLimiter.retryAfter(wait))
            }
            limiters.address.record(address, now: now)
            limiters.key.record(key, now: now)
            return nil
        }
    }
}

/// Admits at most `limit` requests per subject in any `window` of time, for at most `capacity` subjects.
///
/// Each subject's requests are counted in slices of a tenth of the window, and a request is admitted while
/// the current slice and the ten before it hold fewer than `limit`: any stretch of one window lies within
/// those eleven slices, so no stretch of one window ever holds more than `limit` admitted requests (a
/// plain fixed window would let twice the limit through around its edge). The price is a wait up to a
/// slice longer than strictly needed. Counts are 11 numbers a subject; subjects form a list from most
/// to least recently seen, and the least recently seen is forgotten to make room for a new one.
struct SlidingWindowLimiter: Sendable {
    static let slicesPerWindow = 10
    /// The slices a request is counted against: the current one and a whole window before it.
    private static let ring = slicesPerWindow + 1

    let limit: Int
    let window: TimeInterval
    let capacity: Int
    private let slice: TimeInterval

    private struct Entry {
        var subject: String
        /// The newest slice counted; `counts[s % ring]` holds slice `s` for the ring slices up to it.
        var lastSlice: Int64
        var counts: [Int]
        var newer: Int?
        var older: Int?
    }

    private var entries: [Entry] = []
    private var positions: [String: Int] = [:]
    private var newest: Int?
    private var oldest: Int?

    init(limit: Int, window: TimeInterval, capacity: Int) {
        self.limit = max(1, limit)
        self.window = window
        self.capacity = max(1, capacity)
        slice = window / Double(Self.slicesPerWindow)
    }

    /// The subjects counts are kept for.
    var trackedCount: Int { positions.count }

    func isTracked(_ subject: String) -> Bool { positions[subject] != nil }

    /// How long `subject` must wait before a request would be admitted, or nil when one would be now.
    /// At most a window and a slice, more than zero. Asking counts as seeing the subject: one that keeps
    /// knocking while refused stays tracked.
    mutating func wait(for subject: String, now: Date) -> TimeInterval? {
        guard let position = positions[subject] else { return nil }
        unlink(position)
        linkAsNewest(position)
        var entry = entries[position]
        let current = Self.advance(&entry, to: sliceIndex(now))
        var remaining = entry.counts.reduce(0, +)
        guard remaining >= limit else { return nil }
        // The oldest slices leave the count first; the request waits until enough of them have.
        var leaving = current - Int64(Self.slicesPerWindow)
        while leaving < current {
            remaining -= entry.counts[Self.place(leaving)]
            if remaining < limit { break }
            leaving += 1
        }
        let freed = Double(leaving + Int64(Self.ring)) * slice - now.timeIntervalSinceReferenceDate
        return min(max(freed, .ulpOfOne), window + slice)
    }

    /// Counts a request from `subject` now, tracking it first (and forgetting the least recently seen
    /// subject when the table is full).
    mutating func record(_ subject: String, now: Date) {
        let current = sliceIndex(now)
        let position: Int
        if let known = positions[subject] {
            position = known
            unlink(position)
        } else if entries.count < capacity {
            position = entries.count
            entries.append(Entry(subject: subject, lastSlice: current, counts: Array(repeating: 0, count: Self.ring)))
        } else {
            // The table is full (capacity ≥ 1, so there is an oldest): its least recently seen entry makes room.
            guard let evicted = oldest else { return }
            unlink(evicted)
            positions[entries[evicted].subject] = nil
            entries[evicted] = Entry(subject: subject, lastSlice: current, counts: Array(repeating: 0, count: Self.ring))
            position = evicted
        }
        positions[subject] = position
        let counted = Self.advance(&entries[position], to: current)
        entries[position].counts[Self.place(counted)] += 1
        linkAsNewest(position)
    }

    /// `Retry-After` for a wait: whole seconds, rounded up, at least one.
    static func retryAfter(_ wait: TimeInterval) -> Int {
        max(1, Int(wait.rounded(.up)))
    }

    /// Moves `entry` on to slice `current`, zeroing the slices passed; returns the slice counted as now,
    /// which stays the entry's newest when the clock went back.
    private static func advance(_ entry: inout Entry, to current: Int64) -> Int64 {
        guard current > entry.lastSlice else { return entry.lastSlice }
        var cleared = entry.lastSlice + 1
        while cleared <= current && cleared <= entry.lastSlice + Int64(ring) {
            entry.counts[place(cleared)] = 0
            cleared += 1
        }
        entry.lastSlice = current
        return current
    }

    private static func place(_ slice: Int64) -> Int {
        Int(((slice % Int64(ring)) + Int64(ring)) % Int64(ring))
    }

    /// The slice `date` falls in; dates beyond any clock's reach are held to a finite slice.
    private func sliceIndex(_ date: Date) -> Int64 {
        let index = (date.timeIntervalSinceReferenceDate / slice).rounded(.down)
        return index.isFinite ? Int64(min(max(index, -1e15), 1e15)) : 0
    }

    private mutating func unlink(_ position: Int) {
        let (newer, older) = (entries[position].newer, entries[position].older)
        if let newer { entries[newer].older = older } else { newest = older }
        if let older { entries[older].newer = newer } else { oldest = newer }
        entries[position].newer = nil
        entries[position].older = nil
    }

    private mutating func linkAsNewest(_ position: Int) {
        entries[position].older = newest
        if let newest { entries[newest].newer = position }
        newest = position
        if oldest == nil { oldest = position }
    }
}
