import Foundation
import HeraldHTTP
@testable import HeraldSQLite
import HeraldStorage
import Testing

@Suite("First run, sign-in and sessions")
struct AccountsTests {
    @Test("With no user, every page leads to /setup")
    func firstRunRedirectsToSetup() async throws {
        // Given a fresh database
        let app = try await TestApp()
        let browser = app.browser()
        // When a visitor opens pages
        for path in ["/", "/campaigns", "/login", "/users"] {
            let response = browser.get(path)
            // Then each one sends them to /setup
            #expect(response.status == 303, "\(path)")
            #expect(response.headers["Location"] == "/setup", "\(path)")
        }
        #expect(browser.get("/setup").status == 200)
    }

    @Test("Setup creates the first admin, signs them in, and creates nothing once a user exists")
    func setupCreatesFirstAdminOnce() async throws {
        // Given a fresh instance, when the first admin is created
        let (app, browser) = try await TestApp.withAdmin()
        // Then they are signed in and see the campaigns page
        let campaigns = browser.get("/campaigns")
        #expect(campaigns.status == 200)
        #expect(campaigns.text.contains("No campaigns yet"))
        #expect(campaigns.text.contains("Welcome to Herald, \u{2068}Ada Admin\u{2069}"))
        let admin = try #require(try app.database.users.find(email: "admin@example.com"))
        #expect(admin.role == .admin)
        #expect(admin.passwordHash.hasPrefix("$scrypt$ln=8,r=8,p=1$"))
        // And the audit log says the new admin made their own account, in the same transaction
        let created = try #require(try app.database.auditLog.page(offset: 0, limit: 1).first)
        #expect(created.action == "user.create")
        #expect(created.actor == "admin@example.com")
        #expect(try await app.database.pool.read { try Int64.fetchOne($0, sql: "SELECT actor_user_id FROM audit_log") } == admin.id)

        // When another visitor posts the setup form
        let intruder = app.browser(address: "10.0.0.9")
        let response = try intruder.submit(
            "/setup", from: "/login",
            ["name": "Mallory", "email": "mallory@example.com", "password": "0123456789ab", "password_confirmation": "0123456789ab"])
        // Then nothing is created, and the login page says why (from the address: visitors have no stored session)
        #expect(response.status == 303)
        #expect(response.headers["Location"] == "/login?already_set_up=1")
        #expect(intruder.get("/login?already_set_up=1").text.contains("Herald is already set up. Sign in with your account."))
        #expect(try app.database.users.count() == 1)
        #expect(intruder.get("/setup").headers["Location"] == "/login")
    }

    @Test("Setup shows each problem next to its field and keeps the input")
    func setupValidation() async throws {
        let app = try await TestApp()
        let browser = app.browser()
        let response = try browser.submit(
            "/setup", from: "/setup",
            ["name": "مریم رضایی", "email": "not-an-email", "password": "short", "password_confirmation": "other"])
        #expect(response.status == 422)
        #expect(response.text.contains(#"class="error-summary" role="alert""#))
        #expect(response.text.contains("Enter an email address like name@example.com."))
        #expect(response.text.contains("Use at least 10 characters for the password."))
        #expect(response.text.contains("The two passwords differ."))
        #expect(response.text.contains(#"value="مریم رضایی""#))
        #expect(response.text.contains(#"aria-invalid="true" aria-describedby="field-email-error""#))
        #expect(try app.database.users.count() == 0)
    }

    @Test("Cookies are HttpOnly and SameSite=Lax; sign-in always makes a new session, whatever the browser brought")
    func sessionCookieFlags() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        let browser = app.browser()
        // A visitor gets only a visitor cookie
        let login = browser.get("/login")
        let cookie = try #require(login.headers["Set-Cookie"])
        #expect(cookie.hasPrefix("herald_visitor="))
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.contains("SameSite=Lax"))
        #expect(!cookie.contains("Secure"))
        #expect(browser.get("/login").headers["Set-Cookie"] == nil, "the visitor keeps their cookie")

        // When a session id was planted in the browser beforehand, signing in replaces it
        browser.setCookie("herald_session", "planted-by-someone-else")
        let response = try browser.submit("/login", from: "/login", ["email": "admin@example.com", "password": "correct horse battery"])
        #expect(response.status == 303)
        #expect(response.headers["Location"] == "/campaigns")
        let session = try #require(browser.cookies["herald_session"])
        #expect(session != "planted-by-someone-else")
        #expect(try app.database.sessions.find(token: session) != nil)

        // And signing in again from a signed-in browser ends the session it had
        let first = try #require(admin.cookies["herald_session"])
        #expect(try admin.submit("/login", from: "/campaigns", ["email": "admin@example.com", "password": "correct horse battery"]).status == 303)
        #expect(admin.cookies["herald_session"] != first)
        #expect(try app.database.sessions.find(token: first) == nil)
    }

    @Test("1,000 cookieless views of /login and /setup store nothing: no session row until sign-in")
    func visitorsStoreNothing() async throws {
        // Given a fresh instance
        let fresh = try await TestApp()
        func sessionRows(_ app: TestApp) async throws -> Int {
            try await app.database.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM sessions") ?? 0 }
        }
        // When 1,000 visitors without cookies open the setup and login pages
        for _ in 0..<500 {
            #expect(fresh.respond(Request(method: "GET", target: "/setup")).status == 200)
            #expect(fresh.respond(Request(method: "GET", target: "/login")).status == 303)
        }
        // Then no session is stored
        #expect(try await sessionRows(fresh) == 0)

        // Given an instance with a signed-in admin
        let (app, _) = try await TestApp.withAdmin()
        let before = try await sessionRows(app)
        #expect(before == 1)
        // When 1,000 visitors without cookies open each page
        for _ in 0..<1000 {
            let login = app.respond(Request(method: "GET", target: "/login"))
            #expect(login.status == 200)
            #expect(login.headers.values("Set-Cookie").allSatisfy { $0.hasPrefix("herald_visitor=") })
            #expect(app.respond(Request(method: "GET", target: "/setup")).status == 303)
        }
        // Then the sessions table is unchanged
        #expect(try await sessionRows(app) == before)
    }

    @Test("A visitor's form token matches only their own cookie: forged and swapped tokens are refused")
    func visitorTokens() async throws {
        let (app, _) = try await TestApp.withAdmin()
        let credentials = [("email", "admin@example.com"), ("password", "correct horse battery")]
        let alice = app.browser(address: "10.4.0.1"), mallory = app.browser(address: "10.4.0.2")
        let aliceToken = try #require(TestBrowser.csrfToken(in: alice.get("/login").text))
        let malloryToken = try #require(TestBrowser.csrfToken(in: mallory.get("/login").text))
        #expect(aliceToken != malloryToken)

        // A form from another site carries Alice's cookie but not her token
        #expect(alice.post("/login", credentials).status == 403)
        #expect(alice.post("/login", [("csrf_token", malloryToken)] + credentials).status == 403)
        #expect(alice.post("/login", [("csrf_token", "forged")] + credentials).status == 403)
        // A token without its cookie is refused too
        #expect(app.browser(address: "10.4.0.3").post("/login", [("csrf_token", aliceToken)] + credentials).status == 403)
        #expect(try app.database.sessions.find(token: alice.cookies["herald_session"] ?? "") == nil)

        // Her own token works
        #expect(alice.post("/login", [("csrf_token", aliceToken)] + credentials).status == 303)
    }

    @Test("A form POST without a valid CSRF token is refused with 403")
    func csrfRequired() async throws {
        let (app, browser) = try await TestApp.withAdmin()
        let withoutToken = browser.post("/apps", [("name", "Shop"), ("platforms", "ios")])
        #expect(withoutToken.status == 403)
        #expect(withoutToken.text.contains("This form expired or came from another site"))
        let wrongToken = browser.post("/apps", [("csrf_token", "forged"), ("name", "Shop"), ("platforms", "ios")])
        #expect(wrongToken.status == 403)
        let anonymous = app.browser(address: "10.0.0.2")
        #expect(anonymous.post("/login", [("email", "admin@example.com"), ("password", "correct horse battery")]).status == 403)
        #expect(try app.database.apps.all().isEmpty)
    }

    @Test("Sign out ends the session")
    func logout() async throws {
        let (app, browser) = try await TestApp.withAdmin()
        let token = try #require(browser.cookies["herald_session"])
        let response = try browser.submit("/logout", from: "/campaigns", [:])
        #expect(response.headers["Location"] == "/login?signed_out=1")
        #expect(try app.database.sessions.find(token: token) == nil)
        #expect(browser.cookies["herald_session"] == nil)
        #expect(browser.get("/campaigns").headers["Location"] == "/login?next=%2Fcampaigns")
        #expect(browser.get("/login?signed_out=1").text.contains("You have signed out."))
    }

    @Test("Everyone changes their own password from the user menu: this session stays, their other sessions end")
    func changeOwnPassword() async throws {
        // Given an editor signed in on two browsers
        let (app, _) = try await TestApp.withAdmin()
        try app.createUser(email: "eddie@example.com", role: .editor)
        let here = app.browser(address: "10.3.0.1"), elsewhere = app.browser(address: "10.3.0.2")
        for browser in [here, elsewhere] {
            #expect(try browser.submit("/login", from: "/login", ["email": "eddie@example.com", "password": "correct horse battery"]).status == 303)
        }
        // The page is linked from the settings the user menu leads to
        #expect(here.get("/campaigns").text.contains(#"<a href="/account">Settings</a>"#))
        #expect(here.get("/account").text.contains(#"<a href="/account/password">Change your password</a>"#))
        let form = here.get("/account/password")
        #expect(form.status == 200)
        #expect(form.text.contains(#"autocomplete="current-password""#))

        // When the current password is wrong and the new one is typed differently twice
        let wrong = try here.submit("/account/password", from: "/account/password",
                                    ["current_password": "not my password", "password": "a brand new secret", "password_confirmation": "a brand new secrt"])
        // Then each problem is announced and shown next to its field, and nothing changes
        #expect(wrong.status == 422)
        #expect(wrong.text.contains(#"class="error-summary" role="alert""#))
        #expect(wrong.text.contains(#"<p class="field-error" id="field-current-password-error">This is not your current password. Type the password you sign in with.</p>"#))
        #expect(wrong.text.contains(#"id="field-password-confirmation-error">The two passwords differ. Type the same password twice.</p>"#))
        #expect(wrong.text.contains(#"aria-invalid="true" aria-describedby="field-current-password-error""#))
        #expect(!wrong.text.contains("a brand new secret"), "typed passwords are not sent back")
        let short = try here.submit("/account/password", from: "/account/password",
                                    ["current_password": "correct horse battery", "password": "short", "password_confirmation": "short"])
        #expect(short.text.contains("Use at least 10 characters for the password."))

        // When it is right
        let changed = try here.submit("/account/password", from: "/account/password",
                                      ["current_password": "correct horse battery", "password": "a brand new secret", "password_confirmation": "a brand new secret"])
        #expect(changed.status == 303)
        // Then this browser stays signed in and says so, and the other one is signed out
        let after = here.get("/account/password")
        #expect(after.status == 200)
        #expect(after.text.contains("Your password is changed. Your other sessions are signed out; this one stays signed in."))
        #expect(elsewhere.get("/campaigns").headers["Location"] == "/login?next=%2Fcampaigns")
        // And only the new password signs in; the change is in the audit log under their name
        let old = try app.browser(address: "10.3.0.3").submit("/login", from: "/login", ["email": "eddie@example.com", "password": "correct horse battery"])
        #expect(old.status == 401)
        let new = try app.browser(address: "10.3.0.4").submit("/login", from: "/login", ["email": "eddie@example.com", "password": "a brand new secret"])
        #expect(new.status == 303)
        let entry = try #require(try app.database.auditLog.page(offset: 0, limit: 1).first)
        #expect(entry.action == "user.password_change")
        #expect(entry.actor == "eddie@example.com")
    }

    @Test("Sessions end after the idle timeout")
    func idleTimeout() async throws {
        let (app, browser) = try await TestApp.withAdmin()
        #expect(browser.get("/campaigns").status == 200)
        app.clock.advance(2 * 3600 + 1)
        #expect(browser.get("/campaigns").status == 303)
    }

    @Test("A failed sign-in says so once, above the form: the fields keep what was typed and are not each marked wrong")
    func failedLoginSaysItOnce() async throws {
        let (app, _) = try await TestApp.withAdmin()
        let failed = try app.browser().submit("/login", from: "/login", ["email": "admin@example.com", "password": "not the password"])
        #expect(failed.status == 401)
        #expect(failed.text.ranges(of: "That email and password do not match an active account.").count == 1)
        #expect(failed.text.contains(#"role="alert" id="login-error""#))
        #expect(!failed.text.contains("field-invalid") && !failed.text.contains("aria-invalid"))
        #expect(failed.text.contains(#"value="admin@example.com""#))
    }

    @Test("After login the user lands on the page they asked for, never on another site")
    func loginNext() async throws {
        let (app, _) = try await TestApp.withAdmin()
        let browser = app.browser()
        let redirect = browser.get("/users")
        #expect(redirect.headers["Location"] == "/login?next=%2Fusers")
        let back = try browser.submit("/login", from: "/login?next=%2Fusers",
                                      ["email": "admin@example.com", "password": "correct horse battery", "next": "/users"])
        #expect(back.headers["Location"] == "/users")
        let other = app.browser(address: "10.0.0.3")
        let offsite = try other.submit("/login", from: "/login",
                                       ["email": "admin@example.com", "password": "correct horse battery", "next": "//evil.example"])
        #expect(offsite.headers["Location"] == "/campaigns")
    }

    @Test("A next path with a tab or newline never leads off-site: browsers drop them from a Location")
    func loginNextWithControlCharacters() async throws {
        // Given a signed-in admin
        let (_, browser) = try await TestApp.withAdmin()
        // When a link sends them to the login page with a next path hiding "//" behind a tab, newline or DEL
        for next in ["%2F%09%2Fevil.example", "%2F%0A%2Fevil.example", "%2F%0D%0ASet-Cookie:%20x=y", "%2F%7F%2Fevil.example"] {
            let response = browser.get("/login?next=\(next)")
            // Then they land on the campaigns, not on the other site
            #expect(response.status == 303)
            #expect(response.headers["Location"] == "/campaigns", "next=\(next)")
        }
        // And an ordinary local path still works
        #expect(browser.get("/login?next=%2Fusers%3Fpage%3D2").headers["Location"] == "/users?page=2")
    }
}
