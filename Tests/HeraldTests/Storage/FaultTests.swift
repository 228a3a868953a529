import Foundation
import GRDB
import HeraldDomain
@testable import HeraldSQLite
import HeraldStorage
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built server under faults, as an operator meets them: killed in the middle of mixed load, a disk
/// that takes no more bytes, a database file it may not write.
///
/// Clients run on real threads, not tasks: they block on sockets, and blocking the two threads of the
/// cooperative pool on this 2-core machine would stall the test itself.
@Suite("faults: crash, full disk, read-only database", .serialized)
struct FaultTests {
    enum Load: String, CaseIterable, CustomTestStringConvertible {
        /// Four clients sending event batches.
        case ingestion
        /// Event batches, feed polls and campaign edits through the management API at once.
        case mixed

        var testDescription: String { rawValue }
    }

    @Test("SIGKILL under load loses no acknowledged write, the database stays intact and serves again", arguments: Load.allCases)
    func crashUnderLoad(load: Load) throws {
        // Given a running server with a published campaign and a key for the feed, events and campaigns
        let herald = try Herald()
        let server = try herald.serve()
        let port = UInt16(server.port)

        // When clients load it and the server is killed in the middle
        let race = LoadRace()
        let clients = DispatchGroup()
        for _ in 0..<(load == .mixed ? 3 : 4) {
            DispatchQueue.global().async(group: clients) { race.sendEvents(port: port, key: herald.key, campaign: herald.campaign) }
        }
        if load == .mixed {
            DispatchQueue.global().async(group: clients) { race.pollFeed(port: port, key: herald.key) }
            DispatchQueue.global().async(group: clients) { race.editCampaigns(port: port, herald: herald) }
        }
        race.waitForProgress(campaignWrites: load == .mixed ? 3 : 0)
        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()
        race.stop.store(true, ordering: .relaxed)
        #expect(clients.wait(timeout: .now() + 30) == .success, "the clients stopped")
        let acknowledged = race.events.withLock { $0 }
        let edits = race.edits.withLock { $0 }
        #expect(acknowledged.count >= 200, "some batches were acknowledged before the kill")
        if load == .mixed {
            #expect(race.feedAnswers.load(ordering: .relaxed) > 0, "the feed answered during the load")
            #expect(edits.acknowledgedWrites >= 3, "some campaign writes were acknowledged before the kill")
        }

        // Then, reopened, the database is intact and holds every acknowledged event
        let reopened = try herald.open()
        let (integrity, stored, events, rolled, campaignIDs) = try reopened.pool.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check"), Set(try String.fetchAll(db, sql: "SELECT id FROM events")),
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM events") ?? 0,
             try Int.fetchOne(db, sql: "SELECT SUM(count) FROM event_rollups") ?? 0,
             try Int64.fetchAll(db, sql: "SELECT id FROM campaigns"))
        }
        #expect(integrity == "ok")
        #expect(acknowledged.isSubset(of: stored), "\(acknowledged.subtracting(stored).count) acknowledged events are missing")
        #expect(rolled == events, "rollups match the stored events")

        // And every acknowledged campaign write is there as acknowledged; only the write in flight may have landed too
        var published: Set<Int64> = []
        for id in campaignIDs {
            let campaign = try #require(try reopened.campaigns.find(id: id))
            if campaign.state == .published { published.insert(id) }
            if id == herald.campaign { continue }
            let seen = CampaignWrite(id: id, revision: campaign.revision, name: campaign.campaign.name, state: campaign.state.rawValue)
            #expect(edits.explains(seen), "campaign \(id) is \(seen); acknowledged: \(edits.acknowledged[id]?.description ?? "never")")
        }
        #expect(Set(edits.acknowledged.keys).isSubset(of: Set(campaignIDs)), "no acknowledged campaign is missing")
        try reopened.close()

        // And the server starts again on it and serves the feed of what is published
        let restarted = try herald.serve()
        let feed = try HTTP.call(port: UInt16(restarted.port), "GET", "/api/v1/feed", headers: ["Authorization": "Bearer \(herald.key)"])
        #expect(feed.status == 200)
        #expect(try FeedIDs.decode(feed.body) == published)
        #expect(restarted.stop() == 0)
    }

    @Test("A full disk: changes get a 503 that says so, reads keep working, nothing is corrupted, and it recovers")
    func diskFull() throws {
        // Given a running server with a published campaign, some events and a signed-in admin
        let herald = try Herald(admin: true)
        let server = try herald.serve()
        let port = UInt16(server.port)
        let api = HTTP.API(port: port, key: herald.key)
        let before = try api.sendEvents(campaign: herald.campaign, count: 50)
        #expect(before.reply.status == 200)
        let console = try HTTP.Console.signIn(port: port, email: Herald.adminEmail, password: Herald.adminPassword)
        let feedBefore = try api.get("/api/v1/feed")

        // When the disk takes no more bytes (a file-size limit of 0: every write fails, as on a full disk)
        try Self.limitFileSize(of: server.process.processIdentifier, to: "0")

        // Then changes from apps, scripts and the console are refused with 503 and a message saying why
        let refused = try api.sendEvents(campaign: herald.campaign, count: 50)
        Self.expectUnavailable(refused.reply)
        Self.expectUnavailable(try api.put("/api/v1/campaigns/\(herald.campaign)", ifMatch: "\"r1\"", json: herald.campaignJSON(name: "Never saved")))
        let page = try console.submit("/campaigns/\(herald.campaign)/pause", from: "/campaigns/\(herald.campaign)")
        #expect(page.status == 503)
        #expect(page.text.contains("Herald cannot save right now"), "\(page.text)")
        #expect(page.text.contains("Nothing was saved"))
        #expect(page.headers["retry-after"] != nil)

        // And reads keep working: the feed, the campaign list (API and console), reports
        let feedDuring = try api.get("/api/v1/feed")
        #expect(feedDuring.status == 200)
        #expect(feedDuring.headers["etag"] == feedBefore.headers["etag"])
        #expect(try api.get("/api/v1/campaigns").status == 200)
        let list = try console.get("/campaigns")
        #expect(list.status == 200)
        #expect(list.text.contains("Sale"))
        #expect(try console.get("/reports").status == 200)
        #expect(try console.get("/campaigns/\(herald.campaign)/report").status == 200)
        let ready = try HTTP.call(port: port, "GET", "/readyz")
        #expect(ready.status == 200)
        #expect(ready.text.contains("changes fail"))

        // When space is back, changes work again
        try Self.limitFileSize(of: server.process.processIdentifier, to: "unlimited")
        let after = try api.sendEvents(campaign: herald.campaign, count: 50)
        #expect(after.reply.status == 200)
        #expect(try console.submit("/campaigns/\(herald.campaign)/pause", from: "/campaigns/\(herald.campaign)").status == 303)
        #expect(server.stop() == 0)

        // Then nothing is corrupted: what was acknowledged is stored, what was refused is not
        let reopened = try herald.open()
        let (integrity, stored) = try reopened.pool.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check"), Set(try String.fetchAll(db, sql: "SELECT id FROM events")))
        }
        #expect(integrity == "ok")
        #expect(stored == before.ids.union(after.ids))
        #expect(try reopened.campaigns.find(id: herald.campaign)?.state == .paused)
        try reopened.close()
    }

    @Test("A read-only database file: reads and signed-in pages work, changes get a 503 naming it, a restart on a writable file recovers")
    func readOnlyDatabase() throws {
        // Given a database with a published campaign, events and an admin who signed in, then made read-only
        let herald = try Herald(admin: true)
        let first = try herald.serve()
        let api = HTTP.API(port: UInt16(first.port), key: herald.key)
        let acknowledged = try api.sendEvents(campaign: herald.campaign, count: 20)
        #expect(acknowledged.reply.status == 200)
        let signedIn = try HTTP.Console.signIn(port: UInt16(first.port), email: Herald.adminEmail, password: Herald.adminPassword)
        #expect(first.stop() == 0)
        try herald.setDatabaseWritable(false)

        // When Herald starts on it as a process that honours file permissions
        let server = try herald.serve(launcher: Self.withoutPermissionOverride)
        let port = UInt16(server.port)
        let readOnlyAPI = HTTP.API(port: port, key: herald.key)
        let console = signedIn.on(port: port)

        // Then changes are refused with a 503 that names the read-only database
        let refused = try readOnlyAPI.sendEvents(campaign: herald.campaign, count: 20)
        Self.expectUnavailable(refused.reply)
        #expect(refused.reply.text.contains("read-only"))
        let page = try console.submit("/campaigns/\(herald.campaign)/pause", from: "/campaigns/\(herald.campaign)")
        #expect(page.status == 503)
        #expect(page.text.contains("Herald cannot save right now: its database is read-only."), "\(page.text)")
        // A visitor gets the sign-in form, which stores nothing, but signing in stores a session: the page says why
        let (visitor, token) = try HTTP.Console.openLogin(port: port)
        let login = try visitor.post("/login", ["csrf_token": token, "email": Herald.adminEmail, "password": Herald.adminPassword])
        #expect(login.status == 503)
        #expect(login.text.contains("read-only"))

        // And reads keep working, for apps and for the admin already signed in
        let feed = try readOnlyAPI.get("/api/v1/feed")
        #expect(feed.status == 200)
        #expect(try FeedIDs.decode(feed.body) == [herald.campaign])
        #expect(try readOnlyAPI.get("/api/v1/campaigns").status == 200)
        #expect(try console.get("/campaigns").status == 200)
        #expect(try console.get("/reports").status == 200)
        let ready = try HTTP.call(port: port, "GET", "/readyz")
        #expect(ready.status == 200)
        #expect(ready.text.contains("read-only"))
        #expect(server.stop() == 0)

        // When the file is writable again and Herald restarts, changes work and nothing was lost or corrupted
        try herald.setDatabaseWritable(true)
        let restarted = try herald.serve(launcher: Self.withoutPermissionOverride)
        let later = try HTTP.API(port: UInt16(restarted.port), key: herald.key).sendEvents(campaign: herald.campaign, count: 20)
        #expect(later.reply.status == 200)
        #expect(restarted.stop() == 0)
        let reopened = try herald.open()
        let (integrity, stored) = try reopened.pool.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check"), Set(try String.fetchAll(db, sql: "SELECT id FROM events")))
        }
        try reopened.close()
        #expect(integrity == "ok")
        #expect(stored == acknowledged.ids.union(later.ids))
    }

    @Test("Herald refuses to start on a read-only folder, saying what to fix")
    func readOnlyFolder() throws {
        // Given a database copied alone (no -wal or -shm file beside it) into a folder nobody may write
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        let database = try SQLiteAppDatabase(path: db, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try database.migrate()
        try database.pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try database.close()
        for suffix in ["-wal", "-shm"] { try FileManager.default.removeItem(atPath: db + suffix) }
        chmod(db, 0o444)
        chmod(folder.url.path, 0o555)
        defer { chmod(folder.url.path, 0o755) }

        // When Herald starts on it
        let output = try CommandLineTests.run(["serve", "--db", db, "--port", "0"], launcher: Self.withoutPermissionOverride)

        // Then it exits with a message that names the file and the fix
        #expect(output.status != 0)
        #expect(output.stderr.contains("cannot open \(db) for writing: the file or its folder is read-only"), "\(output.stderr)")
        #expect(output.stderr.contains("give it write permission"))
    }

    @Test("SQLite's codes for a full disk, a read-only file, a failing disk, an unopenable file or a held lock mean: try later")
    func unavailableCodes() throws {
        let cases: [(ResultCode, StorageUnavailable?)] = [
            (.SQLITE_FULL, .diskFull), (.SQLITE_READONLY, .readOnly), (ResultCode(rawValue: 8 | (5 << 8)), .readOnly),
            (.SQLITE_IOERR, .diskError), (ResultCode(rawValue: 10 | (3 << 8)), .diskError), (.SQLITE_CANTOPEN, .cannotOpen),
            (.SQLITE_BUSY, .busy), (.SQLITE_CONSTRAINT, nil), (.SQLITE_CORRUPT, nil), (.SQLITE_ERROR, nil),
        ]
        for (code, expected) in cases {
            #expect(StorageUnavailable(DatabaseError(resultCode: code)) == expected, "\(code)")
        }
        #expect(StorageUnavailable(TestFailure("other")) == nil)
        #expect(StorageUnavailable.busy.retryAfterSeconds < StorageUnavailable.diskFull.retryAfterSeconds)
    }

    // MARK: Helpers

    /// Root ignores file permissions: as root, the server runs without the capabilities that let it, as any
    /// other user would (`setpriv` drops them; a container's root may do that without further privilege).
    static var withoutPermissionOverride: [String] {
        guard geteuid() == 0 else { return [] }
        let capabilities = "-dac_override,-dac_read_search"
        return ["/usr/bin/setpriv", "--bounding-set=\(capabilities)", "--inh-caps=\(capabilities)", "--"]
    }

    /// Sets the running server's file-size limit (RLIMIT_FSIZE), in bytes or `unlimited`; writes past it fail as
    /// on a full disk. Only the soft limit changes, so the same user may raise it back without privilege.
    static func limitFileSize(of pid: pid_t, to limit: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--pid", String(pid), "--fsize=\(limit):"]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("prlimit --fsize=\(limit): failed") }
    }

    static func expectUnavailable(_ reply: RawHTTPConnection.Reply, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == 503, "\(reply.text)", sourceLocation: sourceLocation)
        #expect(reply.headers["retry-after"] != nil, sourceLocation: sourceLocation)
        #expect(reply.text.contains(#""code":"unavailable""#), sourceLocation: sourceLocation)
        #expect(reply.text.contains("Herald cannot save right now"), sourceLocation: sourceLocation)
        #expect(reply.text.contains("Nothing was saved"), sourceLocation: sourceLocation)
    }
}

/// A database made with the command line, as an operator would, with a published campaign and one key of every scope.
struct Herald {
    static let adminEmail = "ops@example.com"
    static let adminPassword = "a long enough password"

    let folder: TemporaryFolder
    let database: String
    let app: Int64
    let key: String
    let campaign: Int64

    init(admin: Bool = false) throws {
        folder = try TemporaryFolder()
        database = folder.url.appendingPathComponent("herald.sqlite").path
        if admin {
            let user = try CommandLineTests.run(
                ["user", "create", "--db", database, "--email", Self.adminEmail, "--role", "admin", "--password-stdin"],
                input: Self.adminPassword + "\n")
            guard user.status == 0 else { throw TestFailure("user create: \(user.stderr)") }
        }
        guard let app = Int64(try CommandLineTests.run(["app", "create", "--db", database, "--name", "Shop", "--platform", "ios"]).lastWord) else {
            throw TestFailure("app create printed no id")
        }
        self.app = app
        key = try CommandLineTests.run([
            "key", "create", "--db", database, "--app", String(app),
            "--scope", "feed:read", "--scope", "events:write", "--scope", "campaigns:read", "--scope", "campaigns:write",
        ]).lastWord
        let setup = try Self.open(database)
        campaign = try setup.campaigns.create(
            Campaign(app: app, name: "Sale", triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "Hi"))),
            state: .published, actor: .commandLine, now: Date())
        try setup.close()
    }

    func serve(launcher: [String] = []) throws -> CommandLineTests.Server {
        try CommandLineTests.Server(database: database, launcher: launcher)
    }

    func open() throws -> SQLiteAppDatabase {
        try Self.open(database)
    }

    private static func open(_ path: String) throws -> SQLiteAppDatabase {
        let database = try SQLiteAppDatabase(path: path, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try database.migrate()
        return database
    }

    /// A campaign document for the management API: a modal, publishable as it is.
    func campaignJSON(name: String) -> String {
        #"{"app":\#(app),"name":"\#(name)","triggers":[{"event":"app_launch"}],"message":{"layout":"modal","title":{"text":"\#(name)"}}}"#
    }

    /// Makes the database and the files SQLite keeps beside it read-only, or writable again.
    func setDatabaseWritable(_ writable: Bool) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: database + suffix) {
            guard chmod(database + suffix, writable ? 0o644 : 0o444) == 0 else { throw TestFailure("chmod \(database + suffix) failed") }
        }
    }
}

/// One campaign as a write left it.
struct CampaignWrite: Equatable, CustomStringConvertible {
    let id: Int64
    let revision: Int
    let name: String
    let state: String

    var description: String { "revision \(revision) “\(name)” \(state)" }
}

/// What the clients of a crash test share: what the server acknowledged, and when to stop.
final class LoadRace: Sendable {
    struct Edits {
        /// Each campaign as its last acknowledged write left it.
        var acknowledged: [Int64: CampaignWrite] = [:]
        var acknowledgedWrites = 0
        /// The write sent and not yet answered, as it would leave the campaign (id 0 for a create).
        var inFlight: CampaignWrite?

        /// Whether a campaign as stored is what its last acknowledged write left, or what the write in flight would.
        func explains(_ stored: CampaignWrite) -> Bool {
            if acknowledged[stored.id] == stored { return true }
            guard let inFlight else { return false }
            return inFlight == stored || (inFlight.id == 0 && inFlight == CampaignWrite(id: 0, revision: stored.revision, name: stored.name, state: stored.state))
        }
    }

    let events = Mutex<Set<String>>([])
    let edits = Mutex(Edits())
    let feedAnswers = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)

    /// Waits until at least 200 events (and `campaignWrites` campaign writes) are acknowledged, or 30 s.
    func waitForProgress(campaignWrites: Int) {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if events.withLock({ $0.count }) >= 200 && edits.withLock({ $0.acknowledgedWrites }) >= campaignWrites { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        // A little more load, so the kill lands in the middle of requests rather than between them
        Thread.sleep(forTimeInterval: 0.3)
    }

    func sendEvents(port: UInt16, key: String, campaign: Int64) {
        let api = HTTP.API(port: port, key: key)
        while !stop.load(ordering: .relaxed) {
            guard let sent = try? api.sendEvents(campaign: campaign, count: 200), sent.reply.status == 200,
                  sent.reply.text.contains(#""accepted":200"#) else { return }
            events.withLock { $0.formUnion(sent.ids) }
        }
    }

    func pollFeed(port: UInt16, key: String) {
        let api = HTTP.API(port: port, key: key)
        var etag: String?
        while !stop.load(ordering: .relaxed) {
            guard let reply = try? api.get("/api/v1/feed", headers: etag.map { ["If-None-Match": $0] } ?? [:]),
                  reply.status == 200 || reply.status == 304 else { return }
            feedAnswers.add(1, ordering: .relaxed)
            // Every other poll asks for the whole feed again
            etag = etag == nil ? reply.headers["etag"] : nil
        }
    }

    /// Creates campaigns and takes each through edits, publish and pause, one write at a time.
    func editCampaigns(port: UInt16, herald: Herald) {
        let api = HTTP.API(port: port, key: herald.key)
        let document = herald.campaignJSON(name:)
        var number = 0
        while !stop.load(ordering: .relaxed) {
            number += 1
            var name = "Edited \(number)"
            edits.withLock { $0.inFlight = CampaignWrite(id: 0, revision: 1, name: name, state: "draft") }
            guard let created = try? api.post("/api/v1/campaigns", json: document(name)), created.status == 201,
                  let id = (try? JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])?["id"] as? Int else { return }
            var current = CampaignWrite(id: Int64(id), revision: 1, name: name, state: "draft")
            acknowledge(current)
            for step in ["edit", "publish", "edit", "pause"] {
                let next: CampaignWrite
                let reply: RawHTTPConnection.Reply?
                if step == "edit" {
                    name += "+"
                    next = CampaignWrite(id: current.id, revision: current.revision + 1, name: name, state: current.state)
                    edits.withLock { $0.inFlight = next }
                    reply = try? api.put("/api/v1/campaigns/\(id)", ifMatch: "\"r\(current.revision)\"", json: document(name))
                } else {
                    next = CampaignWrite(id: current.id, revision: current.revision + 1, name: name, state: step == "publish" ? "published" : "paused")
                    edits.withLock { $0.inFlight = next }
                    reply = try? api.post("/api/v1/campaigns/\(id)/\(step)", json: nil)
                }
                guard let reply, reply.status == 200 else { return }
                current = next
                acknowledge(current)
            }
        }
    }

    private func acknowledge(_ write: CampaignWrite) {
        edits.withLock { edits in
            edits.acknowledged[write.id] = write
            edits.acknowledgedWrites += 1
            edits.inFlight = nil
        }
    }
}

/// The campaign ids of a feed.
enum FeedIDs {
    private struct Feed: Decodable {
        struct Campaign: Decodable { let id: Int64 }
        let campaigns: [Campaign]
    }

    static func decode(_ body: [UInt8]) throws -> Set<Int64> {
        Set(try JSONDecoder().decode(Feed.self, from: Data(body)).campaigns.map(\.id))
    }
}
