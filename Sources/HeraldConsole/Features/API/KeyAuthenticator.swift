import Crypto
import Foundation
import HeraldStorage

/// Finds the API key for a secret, keeping recent answers in memory so hot endpoints (the feed)
/// need no database read. Answers are dropped when keys change (revocation) or after `maxAge`.
///
/// Live keys and unknown secrets are remembered apart: live keys are as few as the keys an admin
/// made, while anyone can send unknown secrets, so a flood of random ones fills and clears only their
/// own memory and never evicts the keys real apps use.
final class KeyAuthenticator: Sendable {
    private struct Entry: Sendable {
        var key: APIKey?
        let generation: Int
        let fetchedAt: Date
    }

    static let maxAge: TimeInterval = 30
    /// Unknown secrets are remembered so that repeating a bad key does not hammer the database; past
    /// this many the memory of unknown secrets is cleared.
    static let maxUnknown = 10_000
    /// Live keys remembered at most: far more than an installation has, so only a runaway admin script
    /// could fill it, and then it is cleared like the unknown ones.
    static let maxLive = 10_000

    private let database: any HeraldDatabase
    // Keyed by the secret's SHA-256, as the store keys them, so no secret is kept in memory; by the digest's
    // bytes rather than its hex text, which cost as much again as the hash on every feed request.
    private let live = ReadMostly<[SHA256Digest: Entry]>([:])
    private let unknown = ReadMostly<[SHA256Digest: Entry]>([:])

    init(database: any HeraldDatabase) {
        self.database = database
    }

    /// The live key for `secret`, or nil. Records its use at most once a minute.
    func authenticate(secret: String, now: Date) throws -> APIKey? {
        let hash = SHA256.hash(data: Array(secret.utf8))
        let generation = database.changes.current
        func fresh(_ entry: Entry?) -> Entry? {
            entry.flatMap { $0.generation == generation && now.timeIntervalSince($0.fetchedAt) < Self.maxAge ? $0 : nil }
        }
        // The hot path (a known key, used within the minute) only reads the cache:
        // every feed request of every thread comes through here.
        var found: Entry
        var changed = false
        if let cached = fresh(live.read({ $0[hash] })) ?? fresh(unknown.read({ $0[hash] })) {
            found = cached
        } else {
            found = Entry(key: try database.apiKeys.authenticate(secret: secret), generation: generation, fetchedAt: now)
            changed = true
        }
        if var key = found.key, key.lastUsedAt.map({ now.timeIntervalSince($0) > 60 }) ?? true {
            try database.apiKeys.markUsed(key, now: now)
            key.lastUsedAt = now
            found.key = key
            changed = true
        }
        if changed { remember(hash, found) }
        return found.key
    }

    private func remember(_ hash: SHA256Digest, _ entry: Entry) {
        let (memory, limit) = entry.key == nil ? (unknown, Self.maxUnknown) : (live, Self.maxLive)
        memory.write { entries in
            if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
            entries[hash] = entry
        }
    }

    /// How many live keys and unknown secrets are remembered (for tests).
    var remembered: (live: Int, unknown: Int) {
        (live.read { $0.count }, unknown.read { $0.count })
    }
}
