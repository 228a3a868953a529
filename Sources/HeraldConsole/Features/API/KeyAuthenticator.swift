import Foundation
import HeraldStorage

/// Finds the API key for a secret, keeping recent answers in memory so hot endpoints (the feed)
/// need no database read. Answers are dropped when keys change (revocation) or after `maxAge`.
final class KeyAuthenticator: Sendable {
    private struct Entry: Sendable {
        var key: APIKey?
        let generation: Int
        let fetchedAt: Date
    }

    static let maxAge: TimeInterval = 30
    /// Unknown secrets are remembered too, so a flood of bad keys cannot hammer the database; past
    /// this many entries the memory is cleared.
    static let maxEntries = 10_000

    private let database: AppDatabase
    private let entries = ReadMostly<[String: Entry]>([:])

    init(database: AppDatabase) {
        self.database = database
    }

    /// The live key for `secret`, or nil. Records its use at most once a minute.
    func authenticate(secret: String, now: Date) throws -> APIKey? {
        let hash = Secret.sha256(secret)
        let generation = database.changes.current
        // The hot path (a known key, used within the minute) only reads the cache:
        // every feed request of every thread comes through here.
        var found: Entry
        var changed = false
        if let cached = entries.read({ $0[hash] }), cached.generation == generation, now.timeIntervalSince(cached.fetchedAt) < Self.maxAge {
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

    private func remember(_ hash: String, _ entry: Entry) {
        entries.write { entries in
            if entries.count >= Self.maxEntries { entries.removeAll(keepingCapacity: true) }
            entries[hash] = entry
        }
    }
}
