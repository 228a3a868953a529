import Foundation
import HeraldConsole
import HeraldDomain
@testable import HeraldPostgres
@testable import HeraldSQLite
@testable import HeraldStorage
import Synchronization
import TestSupport
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

    /// Ids come from a sequence in the order registrations take them, not the order they commit. The push
    /// planner pages through installations by id, so a page read while an earlier id was still uncommitted
    /// would have been passed over for good: that page must wait for the registration instead.
    @Test func aPageOfInstallationsWaitsForARegistrationInFlight() throws {
        let database = try EngineDatabase(.postgres)
        let postgres = try #require(database.stores as? PostgresAppDatabase)
        let shop = try postgres.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Date())
        let (firstDevice, secondDevice) = (InstallationRegistration.sample(token: "tok-1"), InstallationRegistration.sample(token: "tok-2"))

        // The first registration takes its id and stays uncommitted until told to go on.
        let (registered, release, finished) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let failure = Mutex<String?>(nil)
        Thread.detachNewThread {
            do {
                try postgres.write { session in
                    _ = try PostgresInstallationStore.upsert(
                        appID: shop.id, installationID: "first", registration: firstDevice, now: Date(), in: session)
                    registered.signal()
                    release.wait()
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
                registered.signal()
            }
            finished.signal()
        }
        registered.wait()
        // A second one, with a later id, commits meanwhile (registrations do not wait for each other).
        let second = try postgres.installations.upsert(appID: shop.id, installationID: "second", registration: secondDevice, now: Date())

        let page = Mutex<InstallationPage?>(nil)
        let read = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            page.withLock { $0 = try? postgres.installations.withTokens(appID: shop.id, pageSize: 10) }
            read.signal()
        }
        let readWithoutWaiting = read.wait(timeout: .now() + 0.5) == .success
        release.signal()
        finished.wait()
        if !readWithoutWaiting { read.wait() }

        #expect(failure.withLock { $0 } == nil)
        #expect(!readWithoutWaiting, "the page was read while a registration with an earlier id was in flight")
        let listed = page.withLock { $0 }?.installations ?? []
        #expect(listed.map(\.installationID) == ["first", "second"])
        #expect(listed.first.map { $0.rowID < second.installation.rowID } == true)
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
        try first.read { try $0.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'herald listener' AND datname = current_database()") }
        #expect(waited(upTo: 3) { second.changes.current > before } != nil, "the reconnection counted as a change")
        let after = second.changes.current
        _ = try first.apps.create(name: "After", platforms: [.web], actor: .commandLine, now: Date())
        #expect(waited(upTo: 2) { second.changes.current > after } != nil, "changes are heard again")
    }

    /// A transaction that failed is rolled back and its connection lent again; a connection whose rollback
    /// failed too is closed instead, so no later caller runs inside what is left of that transaction.
    @Test(.timeLimit(.minutes(1))) func aConnectionWhoseRollbackFailedIsNotLentAgain() throws {
        let database = try EngineDatabase(.postgres)
        let stores = try #require(database.stores as? PostgresAppDatabase)
        func backend() throws -> Int32? { try stores.read { try $0.one("SELECT pg_backend_pid()", as: Int32.self) } }
        let first = try backend()

        #expect(throws: (any Error).self) { try stores.write { try $0.execute("SELECT 1 / 0") } }
        #expect(try backend() == first, "a rolled-back connection serves the next caller")

        // The rollback itself fails: the server ended the connection under the transaction (from another
        // connection), then the transaction failed for a reason of its own.
        #expect(throws: StorageUnavailable.busy) {
            try stores.write { session in
                let own = try session.one("SELECT pg_backend_pid()", as: Int32.self) ?? 0
                _ = try stores.read { try $0.execute("SELECT pg_terminate_backend(\(own))") }
                Thread.sleep(forTimeInterval: 0.2)
                throw StorageUnavailable.busy
            }
        }
        let second = try backend()
        #expect(second != first)
        // Thrown through the pool, `Unusable` closes a connection that is still open, and the caller is told the error inside.
        #expect(throws: StorageUnavailable.busy) {
            try stores.connections.withConnection { _ in throw PostgresConnections.Unusable(error: StorageUnavailable.busy) }
        }
        let third = try backend()
        #expect(third != second && third != first)

        // A statement sent after the server ended the connection fails at once: postgres-nio drops a query
        // written to a closed channel, and waiting for its answer used to block the worker for good.
        #expect(throws: (any Error).self) {
            try stores.read { session in
                let own = try session.one("SELECT pg_backend_pid()", as: Int32.self) ?? 0
                _ = try stores.read { try $0.execute("SELECT pg_terminate_backend(\(own))") }
                Thread.sleep(forTimeInterval: 0.2)
                try session.execute("SELECT 1")
            }
        }
        #expect(try backend() != third)
    }
}

/// `herald copy`: an SQLite installation moved into PostgreSQL with nothing lost.
@Suite("herald copy", .enabled(if: StorageEngine.postgresURL != nil))
struct PostgresCopyTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000.5)

    @Test func everyRowArrivesAndReadsBackTheSame() throws {
        let sqlite = try EngineDatabase(.sqlite)
        let source = try #require(sqlite.stores as? SQLiteAppDatabase)
        let admin = try #require(try source.users.insertFirst(
            User(email: "Admin@Example.com", name: "مدیر", role: .admin, passwordHash: "h", createdAt: Self.now, updatedAt: Self.now), now: Self.now))
        let session = try source.sessions.create(userID: admin.id!, now: Self.now, lifetime: 3600)
        try source.loginThrottles.update([LoginThrottleKey(.address, "192.0.2.1")], forgetBefore: .distantPast) {
            $0[LoginThrottleKey(.address, "192.0.2.1")] = LoginFailures(count: 2, first: Self.now, last: Self.now)
        }
        let shop = try source.apps.create(name: "Shop", platforms: [.ios, .web], actor: .user(id: admin.id!, email: admin.email), now: Self.now)
        try source.apps.setPushSettings(AppPushSettings(dailyCap: 5, refreshOnChange: true), appID: shop.id, actor: .commandLine, now: Self.now)
        let (key, secret) = try source.apiKeys.create(appID: shop.id, name: "CI", scopes: [.feedRead], actor: .commandLine, now: Self.now)
        let (revoked, _) = try source.apiKeys.create(appID: shop.id, name: "old", scopes: [.eventsWrite], actor: .commandLine, now: Self.now)
        _ = try source.apiKeys.revoke(revoked, actor: .key(id: key.id, name: key.name), now: Self.now)
        _ = try source.apps.addTestDevice(appID: shop.id, installationID: "install-1", name: "Phone", actor: .commandLine, now: Self.now)
        _ = try source.apps.addOrigin(appID: shop.id, origin: "https://shop.example", actor: .commandLine, now: Self.now)
        let box = SecretBox(key: .init(size: .bits256))
        try source.pushCredentials(box: box).setAPNs(
            APNsCredentials(keyPEM: "pem", keyID: "K", teamID: "T", topic: "com.example"), appID: shop.id, actor: .commandLine, now: Self.now)
        let signingKey = try source.serverSecrets.signingKey(now: Self.now)
        let sale = try source.campaigns.create(
            Campaign(app: shop.id, name: "Spring «sale»", message: Message(layout: .modal, title: .init(text: "سلام"))),
            state: .published, actor: .commandLine, now: Self.now)
        _ = try source.campaigns.create(
            Campaign(app: shop.id, name: "Draft", message: Message(layout: .banner, title: .init(text: "Draft"))),
            state: .draft, actor: .commandLine, now: Self.now)
        _ = try source.installations.upsert(
            appID: shop.id, installationID: "install-1",
            registration: InstallationRegistration(platform: .ios, pushProvider: .apns, pushToken: String(repeating: "ab", count: 32), notificationsAllowed: true),
            now: Self.now)
        // Events received in two months: two partitions on PostgreSQL.
        for (month, received) in [(8, Date(timeIntervalSince1970: 1_786_000_000)), (9, Self.now)] {
            let events = (0..<30).map { index in
                Event(id: "\(month)-\(index)", appID: shop.id, campaignID: sale, type: index.isMultiple(of: 3) ? .click : .impression,
                      occurredAt: received, platform: "ios", installationID: "install-\(index % 7)", detail: index.isMultiple(of: 3) ? "primary" : "",
                      url: index == 3 ? "https://example.com/\u{0}" : nil, test: false, language: index.isMultiple(of: 2) ? "fa" : nil)
            }
            _ = try source.events.ingest(events, now: received)
        }

        let postgres = try EngineDatabase(.postgres)
        let target = try #require(postgres.stores as? PostgresAppDatabase)
        let report = try PostgresCopy.copy(sqlitePath: source.path, sqliteMigrations: repositoryRoot.appendingPathComponent("migrations"), to: target)
        #expect(report.tables.first { $0.name == "api_keys" }?.rows == 2)
        let auditLines = try source.auditLog.count()
        #expect(report.tables.first { $0.name == "audit_log" }?.rows == auditLines)

        #expect(try target.users.all().asStored == source.users.all().asStored)
        #expect(try target.sessions.find(token: session.token)?.session.asStored == session.session.asStored)
        #expect(try target.loginThrottles.update([LoginThrottleKey(.address, "192.0.2.1")], forgetBefore: .distantPast) { $0 }.asStored
            == source.loginThrottles.update([LoginThrottleKey(.address, "192.0.2.1")], forgetBefore: .distantPast) { $0 }.asStored)
        #expect(try target.apps.all().map(\.name) == source.apps.all().map(\.name))
        #expect(try target.apps.pushSettings(appID: shop.id) == AppPushSettings(dailyCap: 5, refreshOnChange: true))
        #expect(try target.apiKeys.authenticate(secret: secret)?.id == key.id)
        #expect(try target.apiKeys.find(id: revoked.id)?.revokedAt != nil)
        #expect(try target.apps.testDevices(appID: shop.id).map(\.installationID) == ["install-1"])
        #expect(try target.apps.origins(appID: shop.id).map(\.origin) == ["https://shop.example"])
        #expect(try target.pushCredentials(box: box).credentials(appID: shop.id).apns?.topic == "com.example")
        #expect(try target.auditLog.page(offset: 0, limit: 100).map(\.action) == source.auditLog.page(offset: 0, limit: 100).map(\.action))
        #expect(try target.serverSecrets.signingKey(now: Self.now) == signingKey, "cookies signed before the move still verify")

        #expect(try target.campaigns.find(id: sale)?.campaign == source.campaigns.find(id: sale)?.campaign)
        #expect(try target.campaigns.revisions(id: sale).count == source.campaigns.revisions(id: sale).count)
        #expect(try target.installations.installation(appID: shop.id, id: "install-1")?.asStored
            == source.installations.installation(appID: shop.id, id: "install-1")?.asStored)
        #expect(try target.events.counts(campaignID: sale, from: "2026-01-01", to: "2026-12-31").inKeyOrder()
            == source.events.counts(campaignID: sale, from: "2026-01-01", to: "2026-12-31").inKeyOrder())
        #expect(report.tables.first { $0.name == "event_ids" }?.rows == 60)
        // Every exported campaign is the same, byte for byte.
        func exported(_ database: any HeraldDatabase) throws -> Data {
            let stream = CampaignTransfer(database: database).exportStream(CampaignQuery(), now: Self.now)
            var bytes = Data()
            while let piece = try stream.next() { bytes += piece }
            return bytes
        }
        #expect(try exported(target) == exported(source))
        // An event already stored counts once after the move too.
        let again = try target.events.ingest(
            [Event(id: "9-1", appID: shop.id, campaignID: sale, type: .impression, occurredAt: Self.now, platform: "ios",
                   installationID: nil, detail: "", url: nil, test: false)], now: Self.now)
        #expect(again.accepted == 0)

        // New rows continue after the copied ids.
        let blog = try target.apps.create(name: "Blog", platforms: [.web], actor: .commandLine, now: Self.now)
        #expect(blog.id > shop.id)

        // A second copy into a database that holds data is refused, and changes nothing.
        #expect(throws: PostgresCopy.CopyError.self) {
            try PostgresCopy.copy(sqlitePath: source.path, sqliteMigrations: repositoryRoot.appendingPathComponent("migrations"), to: target)
        }
        #expect(try target.apps.all().count == 2)
    }

    @Test func aSourceThisVersionHasNotMigratedIsRefused() throws {
        let folder = try TemporaryFolder()
        let old = folder.url.appendingPathComponent("migrations")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        for file in try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("migrations").path)
        where file.hasSuffix(".sql") && file < "0010" {
            try FileManager.default.copyItem(at: repositoryRoot.appendingPathComponent("migrations/\(file)"), to: old.appendingPathComponent(file))
        }
        let path = folder.url.appendingPathComponent("old.sqlite").path
        let database = try SQLiteAppDatabase(path: path, migrations: old)
        try database.migrate()
        try database.close()
        let postgres = try EngineDatabase(.postgres)
        let target = try #require(postgres.stores as? PostgresAppDatabase)
        let migrations = repositoryRoot.appendingPathComponent("migrations")
        let known = try FileManager.default.contentsOfDirectory(atPath: migrations.path).filter { $0.hasSuffix(".sql") }.count
        #expect(throws: PostgresCopy.CopyError.sourceNotCurrent(applied: 9, known: known)) {
            try PostgresCopy.copy(sqlitePath: path, sqliteMigrations: migrations, to: target)
        }
    }
}

/// A PostgreSQL server that does not answer is a 503 with Retry-After, never a crash or a 500.
@Suite("PostgreSQL unreachable")
struct PostgresUnreachableTests {
    @Test func aServerThatDoesNotAnswerIsUnavailable() throws {
        // A loopback port nobody listens on: bound, never listened on.
        let socket = try #require(boundButNotListening())
        defer { close(socket.descriptor) }
        let database = try PostgresAppDatabase(
            location: PostgresLocation(host: "127.0.0.1", port: socket.port, user: "nobody", database: "none", tls: .disable),
            migrations: EngineDatabase.postgresMigrations, connections: 2)
        defer { database.close() }
        #expect(database.isReachable() == false)
        do {
            _ = try database.users.count()
            Issue.record("a query to no server answered")
        } catch {
            #expect(StorageUnavailable(error) == .unreachable, "\(error)")
        }
        // At start, the operator is told which server could not be reached, without its password.
        do {
            try database.migrate()
            Issue.record("migrated a database on no server")
        } catch let StorageError.cannotReach(location, reason) {
            #expect(location == "postgres://nobody@127.0.0.1:\(socket.port)/none?sslmode=disable")
            #expect(reason.contains("refused"), "\(reason)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago and that nothing listens on (bound without listen).
private func boundButNotListening() -> (descriptor: Int32, port: Int)? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else { close(descriptor); return nil }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}
