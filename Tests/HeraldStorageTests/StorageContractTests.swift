import Foundation
import HeraldDomain
@testable import HeraldStorage
import PropertyBased
import Synchronization
import TestSupport
import Testing

/// The storage contract: what every store does, checked the same way on every engine (SQLite and
/// PostgreSQL), so the two cannot drift. A test here takes the engine as its argument and never asks
/// which one it has.
@Suite("Storage contract")
struct StorageContractTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000.123)

    private static func user(_ email: String, role: Role = .editor, name: String = "Someone") -> User {
        User(email: email, name: name, role: role, passwordHash: "hash-of-\(email)", createdAt: start, updatedAt: start)
    }

    @Test("PostgreSQL is there when CI runs the tests")
    func postgresInCI() {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            #expect(StorageEngine.postgresURL != nil, "make test runs the suite through Tools/with-postgres.sh")
        }
    }

    // MARK: Users

    @Test(arguments: StorageEngine.available)
    func usersStoreAndReadBack(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let users = database.stores.users
        #expect(try users.count() == 0)
        var admin = Self.user("Admin@Example.com", role: .admin, name: "سارا")
        admin.language = "fa"
        admin.timeZone = "Asia/Tehran"
        let first = try #require(try users.insertFirst(admin, now: Self.start))
        #expect(first.id != nil)
        #expect(try users.insertFirst(Self.user("second@example.com"), now: Self.start) == nil)
        let editor = try users.insert(Self.user("b@example.com"), actor: .user(id: first.id!, email: first.email), now: Self.start)

        let found = try #require(try users.find(id: first.id!))
        #expect(found.asStored == first.asStored)
        #expect(found.createdAt.asStored == Date(timeIntervalSince1970: 1_790_000_000.123).asStored)
        // ASCII letters fold, as SQLite's NOCASE does; nothing else does.
        #expect(try users.find(email: "admin@EXAMPLE.com")?.asStored == first.asStored)
        #expect(try users.find(email: "b@example.com")?.id == editor.id)
        #expect(throws: UserStoreError.emailTaken) { try users.insert(Self.user("B@EXAMPLE.COM"), actor: .commandLine, now: Self.start) }
        #expect(try users.count() == 2)

        let audit = try database.stores.auditLog.page(offset: 0, limit: 10)
        #expect(audit.map(\.action) == ["user.create", "user.create"])
        #expect(audit.map(\.actor) == ["Admin@Example.com", "Admin@Example.com"])
        #expect(audit.last?.details == "role admin, first user, at setup")
    }

    @Test(arguments: StorageEngine.available)
    func emailsCompareWithOnlyASCIILettersFolded(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let users = database.stores.users
        for email in ["émile@example.com", "ÉMILE@example.com", "zed@example.com", "Zed2@example.com", "ali@example.com", "σ@example.com",
                      "Σ@example.com", "ß@example.com", "SS@example.com"] {
            _ = try users.insert(Self.user(email), actor: .commandLine, now: Self.start)
        }
        // Byte order after folding A–Z: what SQLite's `COLLATE NOCASE` sorts by.
        #expect(try users.all().map(\.email) == [
            "ali@example.com", "SS@example.com", "Zed2@example.com", "zed@example.com", "ÉMILE@example.com", "ß@example.com",
            "émile@example.com", "Σ@example.com", "σ@example.com",
        ])
        #expect(try users.find(email: "Émile@example.com")?.email == "ÉMILE@example.com")
        #expect(try users.find(email: "ÉMILE@EXAMPLE.COM")?.email == "ÉMILE@example.com")
        #expect(try users.find(email: "ss@EXAMPLE.com")?.email == "SS@example.com")
    }

    @Test(arguments: StorageEngine.available)
    func userUpdatesEndSessionsAndRefuseToLeaveNoAdmin(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let users = database.stores.users
        let sessions = database.stores.sessions
        let admin = try #require(try users.insertFirst(Self.user("admin@example.com", role: .admin), now: Self.start))
        var editor = try users.insert(Self.user("editor@example.com"), actor: .commandLine, now: Self.start)
        let kept = try sessions.create(userID: editor.id!, now: Self.start, lifetime: 3600)
        let ended = try sessions.create(userID: editor.id!, now: Self.start, lifetime: 3600)
        let adminSession = try sessions.create(userID: admin.id!, now: Self.start, lifetime: 3600)

        editor.name = "Renamed ویرایشگر"
        editor.language = "ja"
        try users.update(
            editor, ending: .allExcept(tokenHash: kept.session.tokenHash), line: .userChanged("user.update", email: editor.email),
            actor: .user(id: admin.id!, email: admin.email), now: Self.start)
        #expect(try users.find(id: editor.id!)?.name == "Renamed ویرایشگر")
        #expect(try users.find(id: editor.id!)?.language == "ja")
        // A session is read with its user's row as it is now.
        #expect(try sessions.find(token: kept.token)?.user.asStored == users.find(id: editor.id!)?.asStored)
        #expect(try sessions.find(token: kept.token)?.user.name == "Renamed ویرایشگر")
        #expect(try sessions.find(token: ended.token) == nil)

        // The last admin demoted: refused, and nothing of it saved: not the role, not the audit line, not the sessions.
        let auditBefore = try database.stores.auditLog.count()
        var demoted = admin
        demoted.role = .viewer
        #expect(throws: UserStoreError.lastAdmin) {
            try users.update(demoted, ending: .all, line: .userRoleChanged(email: demoted.email, from: .admin, to: .viewer), actor: .commandLine, now: Self.start)
        }
        #expect(try users.find(id: admin.id!)?.role == .admin)
        #expect(try sessions.find(token: adminSession.token)?.user.role == .admin)
        #expect(try database.stores.auditLog.count() == auditBefore)

        var missing = editor
        missing.id = 9_999
        #expect(throws: UserStoreError.notFound) {
            try users.update(missing, ending: .none, line: .userChanged("user.update", email: missing.email), actor: .commandLine, now: Self.start)
        }
    }

    /// Generated names, emails, languages and instants are stored and read back unchanged.
    @Test(arguments: StorageEngine.available)
    func generatedUsersReadBackUnchanged(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let users = database.stores.users
        var run = GeneratedRun("storage contract: users on \(engine.rawValue)", cases: 60)
        var seen = Set<String>()
        run.run(Generated.cases { draw -> User in
            let local = GeneratedText.valid(&draw, maxPieces: 3, maxCharacters: 40).replacingOccurrences(of: "@", with: "")
            let milliseconds = GeneratedTime.instant(&draw)
            let instant = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            var user = User(
                email: local + "@example.com", name: GeneratedText.valid(&draw, multiline: true), role: draw.pick(Role.allCases),
                passwordHash: GeneratedText.valid(&draw, maxPieces: 2), active: draw.chance(0.8), createdAt: instant, updatedAt: instant)
            user.language = draw.chance(0.5) ? draw.pick(["en", "de", "fa", "ar", "ja"]) : nil
            user.timeZone = draw.chance(0.5) ? GeneratedText.valid(&draw, maxPieces: 2) : nil
            return user
        }) { user, run in
            let folded = String(user.email.unicodeScalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }.map(Character.init))
            if seen.contains(folded) {
                run.expect((try? users.insert(user, actor: .commandLine, now: Self.start)) == nil, "a folded duplicate was taken", input: user)
                run.note("duplicate")
                return
            }
            seen.insert(folded)
            let inserted = try users.insert(user, actor: .commandLine, now: Self.start)
            let read = try users.find(id: try #require(inserted.id))
            var expected = inserted
            expected.createdAt = user.createdAt.storedPrecision
            expected.updatedAt = user.updatedAt.storedPrecision
            run.expect(read?.asStored == expected.asStored, "read back \(String(describing: read))", input: user)
            run.note("stored")
        }
        #expect(run.failures == 0)
    }

    // MARK: Sessions

    @Test(arguments: StorageEngine.available)
    func sessionsLiveUntilTheyExpireOrEnd(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let user = try #require(try database.stores.users.insertFirst(Self.user("a@example.com", role: .admin), now: Self.start))
        let sessions = database.stores.sessions
        let short = try sessions.create(userID: user.id!, now: Self.start, lifetime: 60)
        var long = try sessions.create(userID: user.id!, now: Self.start, lifetime: 86_400)
        #expect(try sessions.find(token: long.token)?.session.asStored == long.session.asStored)
        #expect(try sessions.find(token: long.token)?.user.asStored == user.asStored)
        #expect(try sessions.find(token: long.session.tokenHash) == nil, "the hash is not a token")

        long.session.flashKind = "notice"
        long.session.flashMessage = "Gespeichert ✓ «ذخیره شد»"
        long.session.lastSeenAt = Self.start.addingTimeInterval(30.0009)
        try sessions.save(long.session)
        let saved = try #require(try sessions.find(token: long.token)?.session)
        #expect(saved.flashMessage == "Gespeichert ✓ «ذخیره شد»")
        #expect(saved.lastSeenAt.asStored == Self.start.addingTimeInterval(30.0009).storedPrecision.asStored)

        // A new session sweeps the expired ones.
        _ = try sessions.create(userID: user.id!, now: Self.start.addingTimeInterval(61), lifetime: 60)
        #expect(try sessions.find(token: short.token) == nil)
        #expect(try sessions.find(token: long.token) != nil)

        // Ended elsewhere, then saved by a request still in flight: it stays ended.
        try sessions.delete(tokenHash: long.session.tokenHash)
        try sessions.save(long.session)
        #expect(try sessions.find(token: long.token) == nil)
    }

    /// What the done-when of several instances asks: a session made through one handle (one instance)
    /// works through another on the same database, and a change through either is seen by both.
    @Test(arguments: StorageEngine.available)
    func aSessionMadeThroughOneInstanceWorksThroughAnother(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let other = try database.open()
        let user = try #require(try database.stores.users.insertFirst(Self.user("a@example.com", role: .admin), now: Self.start))
        let made = try database.stores.sessions.create(userID: user.id!, now: Self.start, lifetime: 3600)
        #expect(try other.sessions.find(token: made.token)?.session.asStored == made.session.asStored)
        #expect(try other.serverSecrets.signingKey(now: Self.start) == database.stores.serverSecrets.signingKey(now: Self.start))
        try other.sessions.delete(tokenHash: made.session.tokenHash)
        #expect(try database.stores.sessions.find(token: made.token) == nil)
    }

    // MARK: Login throttles

    @Test(arguments: StorageEngine.available)
    func loginFailuresAreCountedForgottenAndNeverHalfSaved(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let throttles = database.stores.loginThrottles
        let account = LoginThrottleKey(.account, "Someone@Example.com")
        let address = LoginThrottleKey(.address, "2001:db8::/64")
        let forget = Self.start.addingTimeInterval(-3600)
        try throttles.update([account, address], forgetBefore: forget) { failures in
            #expect(failures.isEmpty)
            failures[account] = LoginFailures(count: 3, first: Self.start, last: Self.start.addingTimeInterval(5))
            failures[address] = LoginFailures(count: 1, first: Self.start, last: Self.start)
        }
        let read = try throttles.update([account, address, LoginThrottleKey(.browser, "unknown")], forgetBefore: forget) { $0 }
        #expect(read.asStored == [account: LoginFailures(count: 3, first: Self.start.storedPrecision, last: Self.start.addingTimeInterval(5).storedPrecision),
                         address: LoginFailures(count: 1, first: Self.start.storedPrecision, last: Self.start.storedPrecision)].asStored)

        // A decision that throws saves nothing.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try throttles.update([account], forgetBefore: forget) { failures in
                failures[account]?.count = 99
                throw Refused()
            }
        }
        #expect(try throttles.update([account], forgetBefore: forget) { $0[account]?.count } == 3)

        // A zero count deletes; an old last failure is forgotten.
        try throttles.update([address], forgetBefore: forget) { $0[address]?.count = 0 }
        #expect(try throttles.update([address], forgetBefore: forget) { $0[address] } == nil)
        #expect(try throttles.update([account], forgetBefore: Self.start.addingTimeInterval(6)) { $0[account] } == nil)
    }

    /// Failures counted at once from many threads, through two handles (two instances): none is lost.
    @Test(arguments: StorageEngine.available)
    func racingFailuresAreAllCounted(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let handles = [database.stores, try database.open()]
        let key = LoginThrottleKey(.account, "raced@example.com")
        let other = LoginThrottleKey(.address, "192.0.2.1")
        let attempts = 40
        DispatchQueue.concurrentPerform(iterations: attempts) { index in
            // Keys in both orders: the store's locking must not deadlock on them.
            let keys = index.isMultiple(of: 2) ? [key, other] : [other, key]
            _ = try? handles[index % 2].loginThrottles.update(keys, forgetBefore: Self.start.addingTimeInterval(-60)) { failures in
                for key in keys {
                    let before = failures[key] ?? LoginFailures(count: 0, first: Self.start, last: Self.start)
                    failures[key] = LoginFailures(count: before.count + 1, first: before.first, last: Self.start)
                }
            }
        }
        let counted = try database.stores.loginThrottles.update([key, other], forgetBefore: Self.start.addingTimeInterval(-60)) { $0 }
        #expect(counted[key]?.count == attempts)
        #expect(counted[other]?.count == attempts)
    }

    // MARK: Server secrets and the audit log

    @Test(arguments: StorageEngine.available)
    func theSigningKeyIsMadeOnceForEveryone(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let handles = [database.stores, try database.open(), try database.open()]
        let keys = Mutex<[[UInt8]]>([])
        DispatchQueue.concurrentPerform(iterations: 12) { index in
            if let key = try? handles[index % 3].serverSecrets.signingKey(now: Self.start) { keys.withLock { $0.append(key) } }
        }
        let all = keys.withLock { $0 }
        #expect(all.count == 12)
        #expect(Set(all).count == 1)
        #expect(all.first?.count == 32)
    }

    @Test(arguments: StorageEngine.available)
    func theAuditLogPagesNewestFirst(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let log = database.stores.auditLog
        let writer = try #require(try database.stores.users.insertFirst(Self.user("«writer»@example.com", role: .admin), now: Self.start))
        for index in 0..<25 {
            try log.record(
                index.isMultiple(of: 2) ? .commandLine : .user(id: writer.id!, email: "«writer»@example.com"), action: index == 20 ? "database.backup" : "test.\(index)",
                subject: "subject \(index)", details: index.isMultiple(of: 5) ? "" : "details \(index) ✓", at: Self.start.addingTimeInterval(Double(index)))
        }
        #expect(try log.count() == 26)
        let first = try log.page(offset: 0, limit: 10)
        #expect(first.map(\.subject) == (15..<25).reversed().map { "subject \($0)" })
        #expect(first.first?.actor == "command line")
        #expect(first[1].actor == "«writer»@example.com")
        #expect(try log.page(offset: 20, limit: 10).count == 6)
        #expect(try log.page(offset: 30, limit: 10).isEmpty)
        let backup = try #require(try log.latest(action: "database.backup"))
        #expect(backup.subject == "subject 20")
        #expect(backup.occurredAt.asStored == Self.start.addingTimeInterval(20).storedPrecision.asStored)
        #expect(try log.latest(action: "nothing") == nil)
    }
}

extension EngineDatabase {
    /// A published campaign of `appID`, for the event contract.
    func makeCampaign(appID: Int64, name: String, now: Date = StorageContractTests.start) throws -> Int64 {
        try stores.campaigns.create(
            Campaign(app: appID, name: name, message: Message(layout: .modal, title: .init(text: name))),
            state: .published, actor: .commandLine, now: now)
    }
}
