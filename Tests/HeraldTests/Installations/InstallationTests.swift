import Foundation
import GRDB
import Synchronization
import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldMicroHTTPD
@testable import HeraldSQLite
import HeraldStorage
import TestSupport
import Testing

/// `PUT /api/v1/installations/{id}` on a real server on loopback, and the `installations` table behind it.
@Suite("Installations: registration, tokens, erasure")
struct InstallationTests {
    final class Fixture: Sendable {
        let app: TestApp
        let server: HTTPServer
        let shop: Int64
        let other: Int64
        let eventsKey: String
        let feedKey: String
        let privacyKey: String
        let otherKey: String

        init() async throws {
            app = try await TestApp()
            server = try app.serveOnLoopback()
            let now = app.clock.now
            shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: now).id
            other = try app.database.apps.create(name: "Other", platforms: [.ios], actor: .commandLine, now: now).id
            let keys = app.database.apiKeys
            eventsKey = try keys.create(appID: shop, name: "sdk", scopes: [.eventsWrite], actor: .commandLine, now: now).secret
            feedKey = try keys.create(appID: shop, name: "feed", scopes: [.feedRead], actor: .commandLine, now: now).secret
            privacyKey = try keys.create(appID: shop, name: "privacy", scopes: [.installationsDelete], actor: .commandLine, now: now).secret
            otherKey = try keys.create(appID: other, name: "other sdk", scopes: [.eventsWrite], actor: .commandLine, now: now).secret
        }

        deinit { server.shutdown(gracePeriod: .zero) }

        var store: any InstallationStore { app.database.installations }

        /// PUTs `body` (sent as it is) for installation `id` (already percent-encoded for the address).
        func put(_ id: String, _ body: String, key: String? = nil, contentType: String = "application/json") throws -> RawHTTPConnection.Reply {
            try HTTP.call(port: server.port, "PUT", "/api/v1/installations/\(id)",
                          headers: ["Authorization": "Bearer \(key ?? eventsKey)", "Content-Type": contentType], body: Array(body.utf8))
        }

        func put(_ id: String, _ fields: [String: Any], key: String? = nil) throws -> RawHTTPConnection.Reply {
            try put(id, String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self), key: key)
        }
    }

    static let apnsToken = String(repeating: "A1b2", count: 16)
    static var iphone: [String: Any] {
        ["platform": "ios", "pushProvider": "apns", "pushToken": apnsToken, "appVersion": "2.4.0", "language": "pt-br",
         "country": "br", "timeZone": "America/Sao_Paulo", "notificationsAllowed": true]
    }

    static func json(_ reply: RawHTTPConnection.Reply) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any], "\(reply.text)")
    }

    @Test("A registration is created (201) as Herald stores it, then replaced (200): the answer is the row")
    func createThenReplace() async throws {
        let fixture = try await Fixture()
        // When a device registers
        let created = try fixture.put("iid-1", Self.iphone)
        // Then it is created, normalized as documented
        #expect(created.status == 201, "\(created.text)")
        let answer = try Self.json(created)
        #expect(answer["installationId"] as? String == "iid-1")
        #expect(answer["pushToken"] as? String == Self.apnsToken.lowercased())
        #expect(answer["language"] as? String == "pt-BR")
        #expect(answer["country"] as? String == "BR")
        #expect(answer["timeZone"] as? String == "America/Sao_Paulo")
        #expect(answer["notificationsAllowed"] as? Bool == true)
        #expect(answer["createdAt"] as? String == UTCTime.rfc3339(fixture.app.clock.now))
        let stored = try #require(try fixture.store.installation(appID: fixture.shop, id: "iid-1"))
        #expect(stored.pushProvider == .apns && stored.pushToken == Self.apnsToken.lowercased() && stored.platform == .ios)
        #expect(stored.appVersion == "2.4.0" && stored.language == "pt-BR" && stored.country == "BR")

        // When it registers again with another version, no permission and no token
        fixture.app.clock.advance(60)
        let replaced = try fixture.put("iid-1", ["platform": "ios", "appVersion": "2.5.0", "notificationsAllowed": false])
        // Then the whole registration is replaced: absent fields are no longer known
        #expect(replaced.status == 200, "\(replaced.text)")
        let again = try Self.json(replaced)
        #expect(again["appVersion"] as? String == "2.5.0")
        #expect(again["pushToken"] == nil && again["pushProvider"] == nil && again["language"] == nil && again["country"] == nil)
        #expect(again["createdAt"] as? String == answer["createdAt"] as? String)
        #expect(again["updatedAt"] as? String == UTCTime.rfc3339(fixture.app.clock.now))
        let row = try #require(try fixture.store.installation(appID: fixture.shop, id: "iid-1"))
        #expect(row.pushToken == nil && row.notificationsAllowed == false && row.timeZone == nil)

        // And an installation id is one path segment, percent-decoded; another app's same id is another installation
        #expect(try fixture.put("a%2Fb%20%F0%9F%93%B1", Self.iphone).status == 201)
        #expect(try fixture.store.installation(appID: fixture.shop, id: "a/b 📱") != nil)
        #expect(try fixture.put("iid-1", Self.iphone, key: fixture.otherKey).status == 201)
        #expect(try fixture.store.counts(appID: fixture.shop).installations == 2)
    }

    @Test("Every field is checked and bounded: each broken rule is a 4xx naming its field, and nothing is saved", arguments: [
        (#"{"platform": "windows", "notificationsAllowed": true}"#, 400, "platform"),
        (#"{"notificationsAllowed": true}"#, 400, "platform"),
        (#"{"platform": "ios"}"#, 400, "notificationsAllowed"),
        (#"{"platform": "ios", "notificationsAllowed": 1}"#, 400, "notificationsAllowed"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushToken": "abcd"}"#, 422, "pushProvider"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushProvider": "apns"}"#, 422, "pushToken"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushProvider": "apns", "pushToken": null}"#, 422, "pushToken"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushProvider": "webpush", "pushToken": "ab"}"#, 400, "pushProvider"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushProvider": "apns", "pushToken": "abc"}"#, 422, "pushToken"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushProvider": "apns", "pushToken": "zz"}"#, 422, "pushToken"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushProvider": "fcm", "pushToken": "has space"}"#, 422, "pushToken"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushProvider": "fcm", "pushToken": "tök"}"#, 422, "pushToken"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushProvider": "fcm", "pushToken": ""}"#, 422, "pushToken"),
        (#"{"platform": "ios", "notificationsAllowed": true, "appVersion": ""}"#, 422, "appVersion"),
        (#"{"platform": "ios", "notificationsAllowed": true, "appVersion": "2.4\n"}"#, 422, "appVersion"),
        (#"{"platform": "ios", "notificationsAllowed": true, "appVersion": "\#(String(repeating: "é", count: 33))"}"#, 422, "appVersion"),
        (#"{"platform": "ios", "notificationsAllowed": true, "language": "english"}"#, 422, "language"),
        (#"{"platform": "ios", "notificationsAllowed": true, "language": "en_US"}"#, 422, "language"),
        (#"{"platform": "ios", "notificationsAllowed": true, "country": "USA"}"#, 422, "country"),
        (#"{"platform": "ios", "notificationsAllowed": true, "country": "١٢"}"#, 422, "country"),
        (#"{"platform": "ios", "notificationsAllowed": true, "timeZone": "Mars/Olympus_Mons"}"#, 422, "timeZone"),
        (#"{"platform": "ios", "notificationsAllowed": true, "timeZone": "\#(String(repeating: "A", count: 65))"}"#, 422, "timeZone"),
        (#"{"platform": "ios", "notificationsAllowed": true, "pushTokn": "ab"}"#, 422, "pushTokn"),
        (#"{"platform": "ios", "notificationsAllowed": true, "aps": {"nested": [1]}}"#, 422, "aps"),
        // APNs reaches Apple devices only; and a platform the app does not ship on is reached by nothing.
        (#"{"platform": "android", "notificationsAllowed": true, "pushProvider": "apns", "pushToken": "\#(String(repeating: "ab", count: 32))"}"#, 422, "pushProvider"),
        (#"{"platform": "web", "notificationsAllowed": true, "pushProvider": "fcm", "pushToken": "abcd"}"#, 422, "platform"),
        (#"{"platform": "web", "notificationsAllowed": true}"#, 422, "platform"),
    ])
    func refused(body: String, status: Int, field: String) async throws {
        let fixture = try await Fixture()
        let reply = try fixture.put("iid-1", body)
        #expect(reply.status == status, "\(reply.text)")
        let error = try #require(try Self.json(reply)["error"] as? [String: Any])
        let fields = (error["fields"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(fields == [field], "\(reply.text)")
        #expect((error["message"] as? String)?.contains(field) == true, "\(reply.text)")
        #expect(try fixture.store.installation(appID: fixture.shop, id: "iid-1") == nil)
    }

    /// Counts committed transactions that changed the `installations` table.
    final class InstallationCommits: TransactionObserver, @unchecked Sendable {
        private let state = Mutex((changed: false, commits: 0))
        var count: Int { state.withLock { $0.commits } }
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "installations" }
        func databaseDidChange(with event: DatabaseEvent) { state.withLock { $0.changed = true } }
        func databaseDidCommit(_ db: Database) {
            state.withLock { state in
                if state.changed { state.commits += 1 }
                state.changed = false
            }
        }
        func databaseDidRollback(_ db: Database) { state.withLock { $0.changed = false } }
    }

    @Test("A burst of registrations goes through the group commit: those arriving while a write is under way share one transaction")
    func burstSharesTransactions() async throws {
        // Given the writer busy while 24 registrations arrive at once (from threads: the server's request
        // threads bound how many arrive together over HTTP)
        let fixture = try await Fixture()
        let commits = InstallationCommits()
        fixture.app.database.pool.add(transactionObserver: commits, extent: .databaseLifetime)
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? fixture.app.database.pool.write { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        let created = Mutex<[Bool]>([])
        let registrations = DispatchGroup()
        let burst = 24, now = fixture.app.clock.now
        for index in 0..<burst {
            registrations.enter()
            // A thread each: GCD's pool grows slowly while its threads block, and the burst must arrive at once.
            Thread {
                defer { registrations.leave() }
                let registration = InstallationRegistration(
                    platform: .ios, pushProvider: .apns, pushToken: String(format: "%064x", index), notificationsAllowed: true)
                do {
                    let outcome = try fixture.store.upsert(appID: fixture.shop, installationID: "iid-\(index)", registration: registration, now: now)
                    created.withLock { $0.append(outcome.created) }
                } catch {
                    Issue.record("registration \(index): \(error)")
                }
            }.start()
        }
        // Blocking, not Task.sleep: a suspended test may wait long for a cooperative thread the others hold.
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 1)
        release.signal()
        #expect(registrations.wait(timeout: .now() + 60) == .success)

        // Then each is created and stored, in a handful of transactions rather than one per registration
        #expect(created.withLock { $0 } == Array(repeating: true, count: burst))
        #expect(try fixture.store.counts(appID: fixture.shop).installations == burst)
        #expect(commits.count <= 3, "\(commits.count) transactions for \(burst) registrations")
    }

    @Test("Tokens are bounded to what providers issue: APNs 64 to 200 hex digits, FCM at most 1024 of its alphabet; several broken rules are named together")
    func bounds() async throws {
        let fixture = try await Fixture()
        let largest = String(repeating: "f", count: InstallationRegistration.maxFCMTokenLength)
        #expect(try fixture.put("iid-1", ["platform": "android", "pushProvider": "fcm", "pushToken": largest, "notificationsAllowed": true]).status == 201)
        #expect(try fixture.put("iid-2", ["platform": "android", "pushProvider": "fcm", "pushToken": largest + "f", "notificationsAllowed": true]).status == 422)
        #expect(try fixture.put("iid-2", ["platform": "android", "pushProvider": "fcm", "pushToken": "dXNl.cjpm", "notificationsAllowed": true]).status == 422)
        #expect(try fixture.put("iid-5", ["platform": "ios", "pushProvider": "apns", "pushToken": String(repeating: "ab", count: 100), "notificationsAllowed": true]).status == 201)
        for outOfBounds in [String(repeating: "ab", count: 31), String(repeating: "ab", count: 101), String(repeating: "f", count: 4096)] {
            #expect(try fixture.put("iid-6", ["platform": "ios", "pushProvider": "apns", "pushToken": outOfBounds, "notificationsAllowed": true]).status == 422)
        }
        #expect(try fixture.store.installation(appID: fixture.shop, id: "iid-2") == nil)
        #expect(try fixture.store.installation(appID: fixture.shop, id: "iid-6") == nil)
        #expect(try fixture.put("iid-3", ["platform": "ios", "appVersion": String(repeating: "9", count: 64), "notificationsAllowed": true]).status == 201)
        let several = try fixture.put("iid-4", ["platform": "ios", "language": "x", "country": "x", "timeZone": "x", "notificationsAllowed": true])
        #expect(several.status == 422)
        let error = try #require(try Self.json(several)["error"] as? [String: Any])
        #expect((error["fields"] as? [[String: Any]])?.compactMap { $0["path"] as? String } == ["language", "country", "timeZone"])
        #expect((error["message"] as? String)?.hasPrefix("3 fields are invalid") == true)
        #expect(try fixture.store.installation(appID: fixture.shop, id: "iid-4") == nil)
    }

    @Test("The key needs events:write; the body must be JSON, and the installation id one")
    func access() async throws {
        let fixture = try await Fixture()
        #expect(try fixture.put("iid-1", Self.iphone, key: fixture.feedKey).status == 403)
        #expect(try fixture.put("iid-1", Self.iphone, key: "hrld_unknown").status == 401)
        let body = String(decoding: try JSONSerialization.data(withJSONObject: Self.iphone), as: UTF8.self)
        #expect(try fixture.put("iid-1", body, contentType: "text/plain").status == 415)
        #expect(try fixture.put("iid-1", #"{"platform": "ios","#).status == 400)
        #expect(try fixture.put("iid-1", "[]").status == 400)
        #expect(try fixture.put("iid-1", #"{"platform": "ios", "notificationsAllowed": true,}"#).status == 400)
        let controls = try fixture.put("iid%01", Self.iphone)
        #expect(controls.status == 422 && controls.text.contains("installationId"))
        #expect(try fixture.put(String(repeating: "i", count: 201), Self.iphone).status == 422)
        #expect(try fixture.put(String(repeating: "i", count: 200), Self.iphone).status == 201)
        #expect(try fixture.store.counts(appID: fixture.shop).installations == 1)
    }

    @Test("A token belongs to one installation of an app: a reinstall takes it over; another app's same token is its own")
    func reinstallTakesTheToken() async throws {
        let fixture = try await Fixture()
        #expect(try fixture.put("old-install", Self.iphone).status == 201)
        #expect(try fixture.put("old-install", Self.iphone, key: fixture.otherKey).status == 201)
        // When the app is reinstalled and the provider gives the new installation the same token (upper case this time)
        var reinstalled = Self.iphone
        reinstalled["pushToken"] = Self.apnsToken.uppercased()
        #expect(try fixture.put("new-install", reinstalled).status == 201)
        // Then the token is the new installation's, and the old one has none; the other app keeps its own
        let old = try #require(try fixture.store.installation(appID: fixture.shop, id: "old-install"))
        let new = try #require(try fixture.store.installation(appID: fixture.shop, id: "new-install"))
        #expect(old.pushToken == nil && old.pushProvider == nil && old.tokenRemovedAt == nil)
        #expect(new.pushToken == Self.apnsToken.lowercased())
        #expect(try fixture.store.installation(appID: fixture.other, id: "old-install")?.pushToken == Self.apnsToken.lowercased())
        #expect(try fixture.store.counts(appID: fixture.shop).withToken == [.apns: 1, .fcm: 0])
    }

    @Test("A dead token is pruned only while the installation still holds it; a new token makes it live again")
    func deadTokens() async throws {
        let fixture = try await Fixture()
        #expect(try fixture.put("iid-1", Self.iphone).status == 201)
        let token = Self.apnsToken.lowercased()
        // A provider's answer for another app, provider or token changes nothing
        #expect(try fixture.store.removeToken(appID: fixture.other, provider: .apns, token: token, reason: "Unregistered", now: fixture.app.clock.now) == false)
        #expect(try fixture.store.removeToken(appID: fixture.shop, provider: .fcm, token: token, reason: "UNREGISTERED", now: fixture.app.clock.now) == false)
        // When APNs says the token is dead
        fixture.app.clock.advance(10)
        let prunedAt = fixture.app.clock.now
        #expect(try fixture.store.removeToken(appID: fixture.shop, provider: .apns, token: token, reason: "Unregistered", now: prunedAt))
        // Then the installation keeps no token, and says when and why
        let pruned = try #require(try fixture.store.installation(appID: fixture.shop, id: "iid-1"))
        #expect(pruned.pushToken == nil && pruned.pushProvider == .apns && pruned.tokenRemovedAt == prunedAt && pruned.tokenRemovedReason == "Unregistered")
        #expect(try fixture.store.removeToken(appID: fixture.shop, provider: .apns, token: token, reason: "Unregistered", now: prunedAt) == false)
        var counts = InstallationCounts()
        counts.installations = 1
        counts.withToken = [.apns: 0, .fcm: 0]
        counts.notificationsAllowed = 1
        counts.tokensRemoved = 1
        #expect(try fixture.store.counts(appID: fixture.shop) == counts)
        // And a registration without a token keeps that record; the answer shows it
        var noToken = Self.iphone
        noToken["pushProvider"] = nil
        noToken["pushToken"] = nil
        let kept = try Self.json(try fixture.put("iid-1", noToken))
        #expect(kept["tokenRemovedReason"] as? String == "Unregistered" && kept["pushProvider"] as? String == "apns" && kept["pushToken"] == nil)

        // When the app registers a new token, and a late answer about the old one arrives
        var renewed = Self.iphone
        renewed["pushToken"] = String(repeating: "cd", count: 32)
        let live = try Self.json(try fixture.put("iid-1", renewed))
        #expect(live["tokenRemovedAt"] == nil && live["tokenRemovedReason"] == nil && live["pushToken"] as? String == String(repeating: "cd", count: 32))
        #expect(try fixture.store.removeToken(appID: fixture.shop, provider: .apns, token: token, reason: "Unregistered", now: fixture.app.clock.now) == false)
        #expect(try fixture.store.installation(appID: fixture.shop, id: "iid-1")?.pushToken == String(repeating: "cd", count: 32))
        // A provider's long reason is kept short
        #expect(try fixture.store.removeToken(
            appID: fixture.shop, provider: .apns, token: String(repeating: "cd", count: 32), reason: String(repeating: "x", count: 5000), now: prunedAt))
        #expect(try fixture.store.installation(appID: fixture.shop, id: "iid-1")?.tokenRemovedReason?.count == Installation.maxReasonLength)
    }

    @Test("The sender's pages: an app's live tokens of one provider, in rowid order, bounded, by an index range")
    func pages() async throws {
        let fixture = try await Fixture()
        for index in 0..<25 {
            let provider = index.isMultiple(of: 5) ? "fcm" : "apns"
            let token = provider == "apns" ? String(format: "%064x", index) : "fcm-\(index)"
            #expect(try fixture.put("iid-\(index)", ["platform": "ios", "pushProvider": provider, "pushToken": token, "notificationsAllowed": true]).status == 201)
        }
        #expect(try fixture.put("iid-other", ["platform": "ios", "pushProvider": "apns", "pushToken": String(repeating: "e", count: 64), "notificationsAllowed": true],
                                key: fixture.otherKey).status == 201)
        try fixture.store.removeToken(appID: fixture.shop, provider: .apns, token: String(format: "%064x", 3), reason: "Unregistered", now: fixture.app.clock.now)
        #expect(try fixture.put("iid-7", ["platform": "ios", "notificationsAllowed": true]).status == 200)

        var pages: [[String]] = []
        var after: Int64?
        repeat {
            let page = try fixture.store.withTokens(appID: fixture.shop, provider: .apns, after: after, pageSize: 6)
            pages.append(page.installations.map(\.installationID))
            after = page.next
        } while after != nil && pages.count < 10
        let expected = (0..<25).filter { !$0.isMultiple(of: 5) && $0 != 3 && $0 != 7 }.map { "iid-\($0)" }
        #expect(pages.flatMap { $0 } == expected)
        #expect(pages.map(\.count) == [6, 6, 6, 0], "a full page is followed by one more, which comes back empty")
        #expect(try fixture.store.withTokens(appID: fixture.shop, provider: .fcm, pageSize: 100).installations.map(\.installationID)
                == ["iid-0", "iid-5", "iid-10", "iid-15", "iid-20"])
        #expect(try fixture.store.withTokens(appID: fixture.shop, provider: .fcm, pageSize: 0).installations.count == 1, "a page holds at least one")
        #expect(try fixture.store.withTokens(appID: fixture.shop, provider: .apns, pageSize: .max).installations.count == 18)

        // Each page is one range of the partial index, in its order: no scan of the table, no sort
        let plan = try await fixture.app.database.pool.read { db in
            try Row.fetchAll(db, sql: """
                EXPLAIN QUERY PLAN SELECT * FROM installations
                WHERE app_id = ? AND push_provider = ? AND push_token IS NOT NULL AND id > ? ORDER BY id LIMIT ?
                """, arguments: [fixture.shop, "apns", 0, 10]).map { $0["detail"] as String }
        }
        #expect(plan.count == 1 && plan[0].contains("installations_with_tokens") && plan[0].contains(">?)"), "\(plan)")
    }

    @Test("Erasing an installation erases its registration with its events, in one transaction, audited")
    func erasure() async throws {
        let fixture = try await Fixture()
        #expect(try fixture.put("iid-1", Self.iphone).status == 201)
        #expect(try fixture.put("iid-1", Self.iphone, key: fixture.otherKey).status == 201)
        let erased = try HTTP.call(port: fixture.server.port, "DELETE", "/api/v1/installations/iid-1", headers: ["Authorization": "Bearer \(fixture.privacyKey)"])
        #expect(erased.status == 200)
        let answer = try Self.json(erased)
        #expect(answer["erasedEvents"] as? Int == 0 && answer["erasedRegistration"] as? Bool == true)
        #expect(try fixture.store.installation(appID: fixture.shop, id: "iid-1") == nil)
        #expect(try fixture.store.installation(appID: fixture.other, id: "iid-1") != nil, "only the key's app's installation")
        let audit = try #require(try fixture.app.database.auditLog.page(offset: 0, limit: 1).first)
        #expect(audit.action == "installation.erase" && audit.details == "0 events and its registration")
        let again = try Self.json(try HTTP.call(port: fixture.server.port, "DELETE", "/api/v1/installations/iid-1", headers: ["Authorization": "Bearer \(fixture.privacyKey)"]))
        #expect(again["erasedRegistration"] as? Bool == false)
    }

    @Test("Deleting an app deletes its installations")
    func appDeletionCascades() async throws {
        let fixture = try await Fixture()
        #expect(try fixture.put("iid-1", Self.iphone, key: fixture.otherKey).status == 201)
        try await fixture.app.database.pool.write { try $0.execute(sql: "DELETE FROM apps WHERE id = ?", arguments: [fixture.other]) }
        #expect(try fixture.store.installation(appID: fixture.other, id: "iid-1") == nil)
    }

    @Test("push_received and push_open are stored with the push campaign's id and rolled up per campaign and day, with the other events")
    func pushEvents() async throws {
        let fixture = try await Fixture()
        let now = fixture.app.clock.now
        let push = try fixture.app.database.campaigns.create(
            Campaign(app: fixture.shop, name: "Sale push", push: PushNotification(title: "Sale")),
            state: .published, actor: .commandLine, now: now)
        let time = UTCTime.rfc3339(now)
        func event(_ type: String, _ installation: String) -> String {
            #"{"id": "\#(UUID().uuidString)", "type": "\#(type)", "campaignId": \#(push), "occurredAt": "\#(time)", "platform": "ios", "installationId": "\#(installation)"}"#
        }
        let body = #"{"events": [\#(event("push_received", "a")), \#(event("push_received", "b")), \#(event("push_open", "a")), \#(event("push_opened", "a"))]}"#
        let reply = try HTTP.call(port: fixture.server.port, "POST", "/api/v1/events",
                                  headers: ["Authorization": "Bearer \(fixture.eventsKey)", "Content-Type": "application/json"], body: Array(body.utf8))
        #expect(reply.status == 200)
        let answer = try Self.json(reply)
        #expect(answer["accepted"] as? Int == 3)
        let rejected = try #require(answer["rejected"] as? [[String: Any]])
        #expect(rejected.count == 1 && (rejected[0]["error"] as? String)?.contains("push_received or push_open") == true)

        let counts = try fixture.app.database.events.counts(campaignID: push, from: UTCTime.day(now), to: UTCTime.day(now))
        #expect(counts.rows.map { "\($0.type.rawValue) \($0.day) \($0.count)" }.sorted() == ["push_open \(UTCTime.day(now)) 1", "push_received \(UTCTime.day(now)) 2"])
        #expect(counts.uniqueDevices == 2)
    }

    @Test("Migrating to 0010 keeps every event, and the events table takes the push types and nothing else")
    func migration() async throws {
        // Given a database migrated before 0010, with events of every earlier type
        let folder = try TemporaryFolder()
        let (before, path) = try TestApp.database(migratedBefore: "0010", in: folder)
        let earlier = ["impression", "click", "dismiss", "error", "conversion"]
        try await before.pool.write { db in
            for (index, type) in earlier.enumerated() {
                try db.execute(sql: """
                    INSERT INTO events (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at, language)
                    VALUES (?, 1, 7, ?, '2026-09-20 10:00:00.000', '2026-09-20', 'ios', 'iid-1', 'd', NULL, 0, '2026-09-20 10:00:01.000', ?)
                    """, arguments: ["e\(index)", type, index == 0 ? "fa" : nil])
            }
        }
        try before.close()

        // When this Herald migrates it
        let after = try SQLiteAppDatabase(path: path, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try after.migrate()

        // Then every event is there as it was, push events go in, and a type nobody knows does not
        let kept = try await after.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, type, language FROM events ORDER BY id").map { "\($0["id"] as String) \($0["type"] as String) \(($0["language"] as String?) ?? "-")" }
        }
        #expect(kept == ["e0 impression fa", "e1 click -", "e2 dismiss -", "e3 error -", "e4 conversion -"])
        let pushes = [Event(id: "p1", appID: 1, campaignID: 7, type: .pushReceived, occurredAt: Date(timeIntervalSince1970: 1_790_000_000), platform: "ios",
                            installationID: "iid-1", detail: "", url: nil, test: false),
                      Event(id: "p2", appID: 1, campaignID: 7, type: .pushOpen, occurredAt: Date(timeIntervalSince1970: 1_790_000_000), platform: "ios",
                            installationID: "iid-1", detail: "", url: nil, test: false)]
        #expect(try after.events.ingest(pushes, now: Date()).accepted == 2)
        await #expect(throws: DatabaseError.self) {
            try await after.pool.write { db in
                try db.execute(sql: """
                    INSERT INTO events (id, app_id, campaign_id, type, occurred_at, day, platform, detail, test, received_at)
                    VALUES ('x', 1, 7, 'push_opened', '', '', 'ios', '', 0, '')
                    """)
            }
        }
        let indexes = try await after.pool.read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL") }
        #expect(indexes == ["events_by_received_at"], "0012 adds the retention's index; 0013 drops the one by installation")
        try after.close()
    }

    @Test("Registrations past a key's or an address's limit are refused with 429, Retry-After and the limit named; nothing is saved")
    func registrationLimits() async throws {
        let app = try await TestApp { configuration in
            configuration.registrationLimits.perKey = 3
            configuration.registrationLimits.perAddress = 2
        }
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now).id
        let key = try app.database.apiKeys.create(appID: shop, name: "sdk", scopes: [.eventsWrite], actor: .commandLine, now: app.clock.now).secret
        func put(_ id: String, from address: String) throws -> Response {
            let body = Array(try JSONSerialization.data(withJSONObject: Self.iphone))
            return app.respond(Request(
                method: "PUT", target: "/api/v1/installations/\(id)",
                headers: HTTPHeaders([("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")]), body: body, remoteAddress: address))
        }
        func refusal(_ response: Response) throws -> (message: String, retryAfter: Int) {
            #expect(response.status == 429, "\(response.text)")
            let answer = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            let error = try #require(answer?["error"] as? [String: Any], "\(response.text)")
            #expect(error["code"] as? String == "too_many_requests")
            let retryAfter = try #require(response.headers["Retry-After"].flatMap { Int($0) }, "\(response.headers)")
            // The window is 60 s, counted in slices of 6 s: the wait ends at most a slice past the window.
            #expect((1...66).contains(retryAfter))
            return (error["message"] as? String ?? "", retryAfter)
        }

        // When one address registers up to its limit, it is served
        #expect(try put("iid-1", from: "192.0.2.1").status == 201)
        app.clock.advance(1)
        #expect(try put("iid-1", from: "192.0.2.1").status == 200)
        // Then one more from it is refused naming the address's limit, and not saved
        let overAddress = try refusal(try put("iid-2", from: "192.0.2.1"))
        #expect(overAddress.message.contains("client address") && overAddress.message.contains("limit of 2"), "\(overAddress.message)")
        #expect(try app.database.installations.installation(appID: shop, id: "iid-2") == nil)

        // When another address registers, it is served until the key's own limit
        #expect(try put("iid-2", from: "198.51.100.7").status == 201)
        let overKey = try refusal(try put("iid-3", from: "198.51.100.7"))
        #expect(overKey.message.contains("API key") && overKey.message.contains("limit of 3"), "\(overKey.message)")
        let thirdAddress = try refusal(try put("iid-3", from: "2001:db8::1"))
        #expect(thirdAddress.message.contains("API key"))
        #expect(try app.database.installations.installation(appID: shop, id: "iid-3") == nil)

        // When the wait it was told has passed, the first address is served again
        app.clock.advance(TimeInterval(overAddress.retryAfter))
        #expect(try put("iid-3", from: "192.0.2.1").status == 201)
    }
}
