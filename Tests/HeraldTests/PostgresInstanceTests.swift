import Foundation
import HeraldDomain
@testable import HeraldStorage
import Testing

/// What several instances on one PostgreSQL get beyond the storage contract: each hears the others'
/// changes at once.
@Suite("PostgreSQL instances", .enabled(if: StorageEngine.postgresURL != nil))
struct PostgresInstanceTests {
    /// Waits until `condition` holds, up to `seconds`; answers how long it took, or nil.
    private func waited(upTo seconds: Double, _ condition: () -> Bool) -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            if condition() { return Date().timeIntervalSince(start) }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    @Test func anotherInstancesChangesAreHeardWithinASecond() throws {
        let database = try EngineDatabase(.postgres)
        let first = try #require(database.stores as? PostgresAppDatabase)
        let second = try #require(try database.open() as? PostgresAppDatabase)
        try second.startBackgroundWork()
        let before = second.changes.current

        // A new app (what feeds are built from) through the first instance.
        let shop = try first.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Date())
        let heard = waited(upTo: 1) { second.changes.current > before }
        #expect(heard != nil, "the second instance heard of the new app")
        #expect(try second.feedGeneration() == first.feedGeneration())

        // A key revoked through the first instance: the second one's key cache must rebuild.
        let (key, _) = try first.apiKeys.create(appID: shop.id, name: "k", scopes: [.feedRead], actor: .commandLine, now: Date())
        let beforeRevocation = second.changes.current
        #expect(try first.apiKeys.revoke(key, actor: .commandLine, now: Date()))
        #expect(waited(upTo: 1) { second.changes.current > beforeRevocation } != nil, "the second instance heard of the revocation")

        // An origin allowed through the first instance.
        let beforeOrigin = second.changes.current
        _ = try first.apps.addOrigin(appID: shop.id, origin: "https://shop.example", actor: .commandLine, now: Date())
        #expect(waited(upTo: 1) { second.changes.current > beforeOrigin } != nil, "the second instance heard of the origin")

        // A change that feeds are not built from (a user) moves nothing.
        let quiet = second.changes.current
        _ = try first.users.insert(
            User(email: "a@example.com", name: "A", role: .admin, passwordHash: "x", createdAt: Date(), updatedAt: Date()),
            actor: .commandLine, now: Date())
        Thread.sleep(forTimeInterval: 0.2)
        #expect(second.changes.current == quiet)
    }

    /// The listening connection killed by the server (a restart, a failover): the instance listens again
    /// and counts the gap as a change, since notifications sent meanwhile were lost.
    @Test func aLostListenerListensAgain() throws {
        let database = try EngineDatabase(.postgres)
        let first = try #require(database.stores as? PostgresAppDatabase)
        let second = try #require(try database.open() as? PostgresAppDatabase)
        try second.startBackgroundWork()
        let before = second.changes.current
        try first.read { try $0.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()") }
        #expect(waited(upTo: 3) { second.changes.current > before } != nil, "the reconnection counted as a change")
        let after = second.changes.current
        _ = try first.apps.create(name: "After", platforms: [.web], actor: .commandLine, now: Date())
        #expect(waited(upTo: 2) { second.changes.current > after } != nil, "changes are heard again")
    }
}
