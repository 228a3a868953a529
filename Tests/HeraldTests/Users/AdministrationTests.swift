import Foundation
import HeraldDomain
import HeraldHTTP
@testable import HeraldSQLite
import HeraldStorage
import Testing

@Suite("Users, apps, API keys and the audit log")
struct AdministrationTests {
    @Test("An admin adds a user who can then sign in with their role")
    func addUser() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        let invalid = try admin.submit("/users", from: "/users/new", ["name": "", "email": "x", "password": "short", "role": "owner"])
        #expect(invalid.status == 422)
        #expect(invalid.text.contains("Choose a role: viewer, editor or admin."))

        let created = try admin.submit("/users", from: "/users/new",
                                       ["name": "Eddie", "email": "eddie@example.com", "password": "0123456789ab", "role": "editor"])
        #expect(created.status == 303)
        #expect(admin.get("/users").text.contains("eddie@example.com"))
        let duplicate = try admin.submit("/users", from: "/users/new",
                                         ["name": "Eddie 2", "email": "EDDIE@example.com", "password": "0123456789ab", "role": "viewer"])
        #expect(duplicate.status == 422)
        #expect(duplicate.text.contains("A user with this email already exists."))

        let eddie = app.browser(address: "10.2.0.1")
        let login = try eddie.submit("/login", from: "/login", ["email": "eddie@example.com", "password": "0123456789ab"])
        #expect(login.status == 303)
        #expect(eddie.get("/campaigns").text.contains(#"<span class="badge">Editor</span>"#))
    }

    @Test("Changing a role, resetting a password and deactivating take effect at once")
    func changeUser() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        try app.createUser(email: "vera@example.com", role: .viewer)
        let vera = try #require(try app.database.users.find(email: "vera@example.com"))
        let id = try #require(vera.id)
        let veraBrowser = app.browser(address: "10.2.0.2")
        _ = try veraBrowser.submit("/login", from: "/login", ["email": "vera@example.com", "password": "correct horse battery"])
        #expect(veraBrowser.get("/users").status == 403)

        _ = try admin.submit("/users/\(id)/role", from: "/users/\(id)", ["role": "admin"])
        #expect(veraBrowser.get("/users").status == 200)

        let short = try admin.submit("/users/\(id)/password", from: "/users/\(id)", ["password": "short"])
        #expect(short.status == 422)
        _ = try admin.submit("/users/\(id)/password", from: "/users/\(id)", ["password": "a brand new secret"])
        let relogin = try app.browser(address: "10.2.0.3").submit(
            "/login", from: "/login", ["email": "vera@example.com", "password": "a brand new secret"])
        #expect(relogin.status == 303)

        let unconfirmed = try admin.submit("/users/\(id)/deactivate", from: "/users/\(id)", [:])
        #expect(unconfirmed.status == 422)
        #expect(unconfirmed.text.contains("Tick the box to confirm"))
        _ = try admin.submit("/users/\(id)/deactivate", from: "/users/\(id)", ["confirm": "yes"])
        #expect(veraBrowser.get("/campaigns").status == 303, "a deactivated user's session ends")
        let refused = try app.browser(address: "10.2.0.4").submit(
            "/login", from: "/login", ["email": "vera@example.com", "password": "a brand new secret"])
        #expect(refused.status == 401)
    }

    @Test("The last active admin cannot be demoted or deactivated")
    func lastAdmin() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        let id = try #require(try app.database.users.find(email: "admin@example.com")?.id)
        let demote = try admin.submit("/users/\(id)/role", from: "/users/\(id)", ["role": "viewer"])
        #expect(demote.status == 422)
        #expect(demote.text.contains("Herald needs at least one active admin."))
        let deactivate = try admin.submit("/users/\(id)/deactivate", from: "/users/\(id)", ["confirm": "yes"])
        #expect(deactivate.status == 422)
        #expect(try app.database.users.find(id: id)?.role == .admin)
        #expect(try app.database.users.find(id: id)?.active == true)
    }

    @Test("An admin's password reset and a deactivation end every session of that user at once")
    func resetAndDeactivationEndSessions() async throws {
        // Given a viewer signed in on two browsers
        let (app, admin) = try await TestApp.withAdmin()
        try app.createUser(email: "vera@example.com", role: .viewer)
        let id = try #require(try app.database.users.find(email: "vera@example.com")?.id)
        func signInTwice(password: String) throws -> [TestBrowser] {
            try ["10.2.1.1", "10.2.1.2"].map { address in
                let browser = app.browser(address: address)
                let login = try browser.submit("/login", from: "/login", ["email": "vera@example.com", "password": password])
                #expect(login.status == 303)
                return browser
            }
        }
        func sessions() async throws -> Int {
            try await app.database.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM sessions WHERE user_id = ?", arguments: [id]) ?? 0 }
        }
        var browsers = try signInTwice(password: "correct horse battery")
        #expect(try await sessions() == 2)

        // When an admin resets her password
        let reset = try admin.submit("/users/\(id)/password", from: "/users/\(id)", ["password": "a brand new secret"])
        #expect(reset.status == 303)
        // Then both sessions are gone at once, and both browsers are asked to sign in
        #expect(try await sessions() == 0)
        for browser in browsers { #expect(browser.get("/campaigns").headers["Location"] == "/login?next=%2Fcampaigns") }
        #expect(admin.get("/users/\(id)").text.contains("signed out everywhere"))

        // When she signs in again on both, and the admin deactivates her
        browsers = try signInTwice(password: "a brand new secret")
        #expect(try await sessions() == 2)
        _ = try admin.submit("/users/\(id)/deactivate", from: "/users/\(id)", ["confirm": "yes"])
        // Then both sessions are gone too
        #expect(try await sessions() == 0)
        for browser in browsers { #expect(browser.get("/campaigns").status == 303) }
    }

    @Test("An admin cannot deactivate themselves or reset their own password here (4xx, not 500); stepping down lands on campaigns")
    func actingOnYourself() async throws {
        // Given two admins
        let (app, admin) = try await TestApp.withAdmin()
        try app.createUser(email: "bob@example.com", role: .admin)
        let me = try #require(try app.database.users.find(email: "admin@example.com"))
        let id = try #require(me.id)

        // When the admin opens their own page, it offers neither deactivation nor a password reset
        let page = admin.get("/users/\(id)").text
        #expect(!page.contains(#"action="/users/\#(id)/deactivate""#))
        #expect(!page.contains(#"action="/users/\#(id)/password""#))
        #expect(page.contains("You cannot deactivate your own account"))
        #expect(page.contains("To change your own password, use the Change password page: it asks for your current one"))
        #expect(page.contains(#"<a href="/account/password">Change password</a>"#))

        // And a crafted deactivation or reset of themselves is refused with a message on the form
        let deactivate = try admin.submit("/users/\(id)/deactivate", from: "/users/\(id)", ["confirm": "yes"])
        #expect(deactivate.status == 422)
        #expect(deactivate.text.contains("You cannot deactivate your own account: you would be signed out at once. Ask another admin to do it."))
        let reset = try admin.submit("/users/\(id)/password", from: "/users/\(id)", ["password": "a brand new secret"])
        #expect(reset.status == 422)
        #expect(reset.text.contains("Change your own password on the Change password page"))
        #expect(try app.database.users.find(id: id) == me)
        #expect(admin.get("/campaigns").status == 200, "still signed in")

        // When they make themselves an editor (another admin remains), they land on a page they may see
        let stepDown = try admin.submit("/users/\(id)/role", from: "/users/\(id)", ["role": "editor"])
        #expect(stepDown.status == 303)
        #expect(stepDown.headers["Location"] == "/campaigns")
        let campaigns = admin.get("/campaigns")
        #expect(campaigns.status == 200)
        // The name is isolated inside the sentence (U+2068 … U+2069), as user text is in every translated one
        #expect(campaigns.text.contains("\u{2068}Ada Admin\u{2069} is now an editor."))
    }

    @Test("An app's key is shown once, stored hashed, authenticates with its scopes, and stops working when revoked")
    func apiKeys() async throws {
        // Given an app
        let (app, admin) = try await TestApp.withAdmin()
        #expect(admin.get("/apps").text.contains("No apps yet"))
        let noPlatform = try admin.submit("/apps", from: "/apps/new", pairs: [("name", "Shop")])
        #expect(noPlatform.status == 422)
        #expect(noPlatform.text.contains("Choose at least one platform"))
        let created = try admin.submit("/apps", from: "/apps/new", pairs: [("name", "Shop"), ("platforms", "ios"), ("platforms", "android")])
        let location = try #require(created.headers["Location"])
        let shop = try #require(try app.database.apps.all().first)
        #expect(location == "/apps/\(shop.id)")
        #expect(shop.platforms == [.ios, .android])

        // When a key is created with two scopes
        let keyPage = try admin.submit(location + "/keys", from: location,
                                       pairs: [("name", "iOS app"), ("scopes", "feed:read"), ("scopes", "events:write")])
        #expect(keyPage.status == 201)
        let secret = try #require(keyPage.text.firstMatch(of: /hrld_[A-Za-z0-9_-]{43}/).map { String($0.output) })
        // Then the secret is shown once, and never stored
        #expect(!admin.get(location).text.contains(secret))
        let stored = try await app.database.pool.read { try String.fetchAll($0, sql: "SELECT secret_hash FROM api_keys") }
        #expect(stored == [Secret.sha256(secret)])

        // And it authenticates API requests, carrying its app and scopes
        let info = app.respond(Request(method: "GET", target: "/api/v1/key", headers: HTTPHeaders([("Authorization", "Bearer \(secret)")])))
        #expect(info.status == 200)
        #expect(info.text.contains(#""scopes":["feed:read","events:write"]"#))
        #expect(info.text.contains(#""name":"Shop""#))
        #expect(try app.database.apiKeys.all(appID: shop.id).first { $0.name == "iOS app" }?.lastUsedAt == app.clock.now)
        let eventsOnly = try app.database.apiKeys.create(appID: shop.id, name: "events", scopes: [.eventsWrite], actor: .commandLine, now: app.clock.now)
        #expect(app.respond(Request(method: "GET", target: "/api/v1/key", headers: HTTPHeaders([("Authorization", "Bearer \(eventsOnly.secret)")]))).status == 200)
        #expect(app.respond(Request(method: "GET", target: "/api/v1/key")).status == 401)
        #expect(app.respond(Request(method: "GET", target: "/api/v1/key", headers: HTTPHeaders([("Authorization", "Bearer hrld_nope")]))).status == 401)

        // When it is revoked (after a confirmation page), it stops working
        let key = try #require(try app.database.apiKeys.all(appID: shop.id).first { $0.name == "iOS app" })
        let confirm = admin.get("\(location)/keys/\(key.id)/revoke")
        #expect(confirm.text.contains("This cannot be undone"))
        let revoked = try admin.submit("\(location)/keys/\(key.id)/revoke", from: "\(location)/keys/\(key.id)/revoke", [:])
        #expect(revoked.status == 303)
        let after = app.respond(Request(method: "GET", target: "/api/v1/key", headers: HTTPHeaders([("Authorization", "Bearer \(secret)")])))
        #expect(after.status == 401)
        #expect(after.text.contains(#""code":"unauthorized""#))
        #expect(admin.get(location).text.contains("Revoked"))
    }

    @Test("Every change is in the audit log with who made it")
    func auditLog() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        _ = try admin.submit("/apps", from: "/apps/new", pairs: [("name", "Shop"), ("platforms", "web")])
        let shop = try #require(try app.database.apps.all().first)
        _ = try admin.submit("/apps/\(shop.id)/keys", from: "/apps/\(shop.id)", pairs: [("name", "Web"), ("scopes", "feed:read")])
        _ = try admin.submit("/users", from: "/users/new", ["name": "Val", "email": "val@example.com", "password": "0123456789ab", "role": "viewer"])
        let entries = try app.database.auditLog.page(offset: 0, limit: 10)
        #expect(entries.map(\.action) == ["user.create", "key.create", "app.create", "user.create"])
        // The first admin made their own account at /setup
        #expect(entries.allSatisfy { $0.actor == "admin@example.com" })
        #expect(entries.last?.details == "role admin, first user, at setup")
        let page = admin.get("/audit").text
        #expect(page.contains("key.create"))
        #expect(page.contains("app.create"))
    }

    @Test("A user change and its audit line commit together: when the line cannot be written, nothing changes")
    func auditLineInTheChangesTransaction() async throws {
        // Given a viewer, and an audit log that refuses every new line
        let (app, admin) = try await TestApp.withAdmin()
        try app.createUser(email: "vera@example.com", role: .viewer)
        let vera = try #require(try app.database.users.find(email: "vera@example.com"))
        let id = try #require(vera.id)
        try await app.database.pool.write { db in
            try db.execute(sql: "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit refused'); END")
        }

        // When an admin adds a user, changes a role, resets a password and deactivates
        let attempts = [
            try admin.submit("/users", from: "/users/new", ["name": "Eddie", "email": "eddie@example.com", "password": "0123456789ab", "role": "editor"]),
            try admin.submit("/users/\(id)/role", from: "/users/\(id)", ["role": "admin"]),
            try admin.submit("/users/\(id)/password", from: "/users/\(id)", ["password": "a brand new secret"]),
            try admin.submit("/users/\(id)/deactivate", from: "/users/\(id)", ["confirm": "yes"]),
        ]

        // Then each one fails, and none of the changes is stored
        #expect(attempts.map(\.status) == [500, 500, 500, 500])
        #expect(try app.database.users.find(email: "eddie@example.com") == nil)
        #expect(try app.database.users.find(id: id) == vera)
    }

    @Test("Changes to apps, keys and installations commit their audit line with them, and a change that does nothing writes none")
    func auditInTheSameTransaction() async throws {
        let fixture = try await EventTests.fixture()
        let now = fixture.app.clock.now
        let audit = fixture.app.database.auditLog
        let before = try audit.count()
        let key = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "temp", scopes: [.feedRead], actor: .commandLine, now: now)
        #expect(try fixture.app.database.apiKeys.revoke(key.key, actor: .commandLine, now: now))
        #expect(try !fixture.app.database.apiKeys.revoke(key.key, actor: .commandLine, now: now))
        _ = try fixture.app.database.events.eraseInstallation("nobody", appID: fixture.shop, actor: .commandLine, now: now)
        let actions = try audit.page(offset: 0, limit: 10).map(\.action)
        #expect(try audit.count() == before + 3)
        #expect(Array(actions.prefix(3)) == ["installation.erase", "key.revoke", "key.create"])
    }

    @Test("The audit log pages through long histories")
    func auditPagination() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        for index in 0..<120 {
            try app.database.auditLog.record(.commandLine, action: "test.entry", subject: "entry \(index)", at: app.clock.now)
        }
        let first = admin.get("/audit").text
        #expect(first.contains("Page 1 of 3"))
        #expect(first.contains("entry 119"))
        #expect(!first.contains("entry 69<"))
        let third = admin.get("/audit?page=3").text
        #expect(third.contains("Page 3 of 3"))
        #expect(third.contains("entry 0<"))
    }
}
