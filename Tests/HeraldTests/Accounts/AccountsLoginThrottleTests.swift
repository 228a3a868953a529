import Foundation
@testable import HeraldConsole
import HeraldHTTP
@testable import HeraldSQLite
import HeraldStorage
import Synchronization
import TestSupport
import Testing

@Suite("Login throttling and client addresses")
struct AccountsLoginThrottleTests {
    static let admin = [("email", "admin@example.com"), ("password", "correct horse battery")]

    /// Posts the login form from `browser` (its token from a fresh look at the page), optionally as a proxy forwarding for someone.
    @discardableResult
    static func logIn(_ browser: TestBrowser, email: String, password: String, forwardedFor: String? = nil) throws -> Response {
        let token = try #require(TestBrowser.csrfToken(in: browser.get("/login").text))
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let forwardedFor { headers.append(("X-Forwarded-For", forwardedFor)) }
        let body = FormData([("csrf_token", token), ("email", email), ("password", password)]).urlencoded
        return browser.send(Request(method: "POST", target: "/login", headers: HTTPHeaders(headers), body: Array(body.utf8)))
    }

    @Test("An account gets 5 free failures, then each failure doubles its wait up to 15 minutes; the right password then works")
    func growingWait() async throws {
        // Given an admin, and someone trying their password from one address
        let (app, _) = try await TestApp.withAdmin()
        let attacker = app.browser(address: "10.0.0.66")
        for _ in 1...5 {
            let response = try Self.logIn(attacker, email: "admin@example.com", password: "wrong password")
            #expect(response.status == 401)
            #expect(response.text.contains("That email and password do not match an active account."))
            #expect(response.text.contains(#"value="admin@example.com""#))
        }

        // Then each further failure doubles the wait, for any browser without a sign-in of its own there
        for wait in [30, 60, 120, 240, 480, 900, 900] {
            let refused = try Self.logIn(app.browser(address: "10.0.0.7"), email: "ADMIN@example.com", password: "correct horse battery")
            #expect(refused.status == 429)
            #expect(refused.headers["Retry-After"] == String(wait))
            #expect(refused.text.contains("Too many attempts, try again in \(max(1, wait / 60)) minute"))
            app.clock.advance(TimeInterval(wait - 1))
            #expect(try Self.logIn(attacker, email: "admin@example.com", password: "wrong password").status == 429, "still waiting")
            app.clock.advance(1)
            #expect(try Self.logIn(attacker, email: "admin@example.com", password: "wrong password").status == 401)
        }

        // When the wait has passed, the right password works and the account starts afresh
        app.clock.advance(900)
        #expect(try Self.logIn(app.browser(address: "10.0.0.8"), email: "admin@example.com", password: "correct horse battery").status == 303)
        #expect(try Self.logIn(attacker, email: "admin@example.com", password: "wrong password").status == 401)
    }

    @Test("Failures against other accounts from one address never refuse another account's right password")
    func otherAccountsFailures() async throws {
        // Given an office behind one address where people mistype their passwords, and one account locked
        let (app, _) = try await TestApp.withAdmin()
        let office = app.browser(address: "10.0.0.50")
        for index in 0..<90 {
            #expect(try Self.logIn(office, email: "person\(index % 30)@example.com", password: "typo").status == 401)
        }
        for _ in 0..<5 { try Self.logIn(office, email: "locked@example.com", password: "guess") }
        #expect(try Self.logIn(office, email: "locked@example.com", password: "guess").status == 429)

        // When the admin signs in from a new browser at the same address, the right password works
        #expect(try Self.logIn(app.browser(address: "10.0.0.50"), email: "admin@example.com", password: "correct horse battery").status == 303)
    }

    @Test("A guessing run from one address hits its limit, and guessing an account slows it, but not in a browser its user signed in from")
    func knownBrowsers() async throws {
        // Given an admin who signed in at setup (at 10.0.0.1) and then signed out
        let (app, admin) = try await TestApp.withAdmin()
        #expect(admin.cookies["herald_browser"] != nil)
        #expect(try admin.submit("/logout", from: "/campaigns", [:]).status == 303)

        // When a guessing run from the same address tries 100 emails, and then the admin's account
        let run = app.browser(address: "10.0.0.1")
        for index in 0..<100 {
            #expect(try Self.logIn(run, email: "guess\(index)@example.com", password: "123456").status == 401)
        }
        let limited = try Self.logIn(run, email: "guess100@example.com", password: "123456")
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "900")
        let elsewhere = app.browser(address: "10.0.0.99")
        for _ in 0..<8 { try Self.logIn(elsewhere, email: "admin@example.com", password: "123456") }

        // Then a new browser is refused even with the right password, from that address or any other
        #expect(try Self.logIn(app.browser(address: "10.0.0.1"), email: "admin@example.com", password: "correct horse battery").status == 429)
        #expect(try Self.logIn(app.browser(address: "10.0.0.2"), email: "admin@example.com", password: "correct horse battery").status == 429)
        // But the admin signs in from the browser they used before
        #expect(try Self.logIn(admin, email: "admin@example.com", password: "correct horse battery").status == 303)
        #expect(admin.get("/campaigns").status == 200)

        // And that browser's cookie counts only for its own account, and only with the server's signature
        try app.createUser(email: "eve@example.com", role: .viewer)
        for _ in 0..<5 { try Self.logIn(elsewhere, email: "eve@example.com", password: "123456") }
        let borrowed = app.browser(address: "10.0.0.3")
        borrowed.setCookie("herald_browser", try #require(admin.cookies["herald_browser"]))
        #expect(try Self.logIn(borrowed, email: "eve@example.com", password: "correct horse battery").status == 429)
        let forged = app.browser(address: "10.0.0.4")
        let parts = try #require(admin.cookies["herald_browser"]).split(separator: ".")
        forged.setCookie("herald_browser", "\(parts[0]).\(parts[1]).\(Secret.random()).\(parts[3])")
        #expect(try Self.logIn(forged, email: "admin@example.com", password: "correct horse battery").status == 429)
    }

    @Test("30 racing logins against one account get no more password checks than its 5 free failures")
    func racingLogins() async throws {
        // Given 30 browsers with the login form open, on other addresses
        let (app, _) = try await TestApp.withAdmin()
        let browsers = (0..<30).map { app.browser(address: "10.6.0.\($0)") }
        let tokens = try browsers.map { try #require(TestBrowser.csrfToken(in: $0.get("/login").text)) }

        // When they all post a wrong password at once, each on its own thread
        let statuses = Mutex<[Int]>([])
        let start = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        for (browser, token) in zip(browsers, tokens) {
            finished.enter()
            Thread.detachNewThread {
                start.wait()
                let response = browser.post("/login", [("csrf_token", token), ("email", "admin@example.com"), ("password", "wrong password")])
                statuses.withLock { $0.append(response.status) }
                finished.leave()
            }
        }
        for _ in browsers { start.signal() }
        await withCheckedContinuation { continuation in finished.notify(queue: .global()) { continuation.resume() } }

        // Then exactly 5 had their password checked (401), and 25 were refused before it (429)
        let counted = statuses.withLock { $0 }
        #expect(counted.filter { $0 == 401 }.count == 5)
        #expect(counted.filter { $0 == 429 }.count == 25)
    }

    @Test("Throttling keeps one row per account, address or browser, and sweeps them once forgotten")
    func boundedStorage() async throws {
        let (app, _) = try await TestApp.withAdmin()
        func rows() async throws -> Int {
            try await app.database.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM login_throttles") ?? 0 }
        }
        // When one address fails 50 times against one account, it is two rows
        let browser = app.browser(address: "10.7.0.1")
        for _ in 0..<50 { try Self.logIn(browser, email: "admin@example.com", password: "wrong") }
        #expect(try await rows() == 2)
        // When 40 addresses fail against 40 accounts, each is a row
        for index in 0..<40 { try Self.logIn(app.browser(address: "10.7.1.\(index)"), email: "u\(index)@example.com", password: "wrong") }
        #expect(try await rows() == 82)
        // When an hour passes, the next attempt sweeps the forgotten rows
        app.clock.advance(3601)
        try Self.logIn(app.browser(address: "10.7.2.1"), email: "new@example.com", password: "wrong")
        #expect(try await rows() == 2)
    }

    @Test("A wrong current password on the password page is throttled like a sign-in")
    func passwordChangeThrottled() async throws {
        let (_, admin) = try await TestApp.withAdmin()
        let attempt = ["current_password": "a guess at it", "password": "a brand new secret", "password_confirmation": "a brand new secret"]
        for _ in 0..<5 { #expect(try admin.submit("/account/password", from: "/account/password", attempt).status == 422) }
        let refused = try admin.submit("/account/password", from: "/account/password", attempt)
        #expect(refused.status == 429)
        #expect(refused.headers["Retry-After"] == "30")
        #expect(refused.text.contains(#"id="field-current-password-error">Too many attempts, try again in 1 minute.</p>"#))
    }

    @Test("X-Forwarded-For names the client only when a trusted proxy sends it: its right-most untrusted address")
    func forwardedFor() async throws {
        // Given Herald behind proxies in 10.9.0.0/16, and an address limit of 3 failures
        let proxies = try #require(AddressRange("10.9.0.0/16"))
        let (app, _) = try await TestApp.withAdmin {
            $0.trustedProxies = [proxies]
            $0.loginThrottle.addressFailures = 3
        }
        let proxy = app.browser(address: "10.9.0.1")
        // When a client behind the proxy fails 3 times, against other accounts each time
        for index in 0..<3 {
            #expect(try Self.logIn(proxy, email: "a\(index)@example.com", password: "x", forwardedFor: "198.51.100.7").status == 401)
        }
        // Then that client is limited, whatever it writes to the left, and through a second proxy
        #expect(try Self.logIn(proxy, email: "b@example.com", password: "x", forwardedFor: "198.51.100.7").status == 429)
        #expect(try Self.logIn(proxy, email: "b@example.com", password: "x", forwardedFor: "203.0.113.1, 198.51.100.7").status == 429)
        #expect(try Self.logIn(proxy, email: "b@example.com", password: "x", forwardedFor: "198.51.100.7, 10.9.0.2").status == 429)
        // And other clients behind the same proxy are not
        #expect(try Self.logIn(proxy, email: "admin@example.com", password: "correct horse battery", forwardedFor: "198.51.100.8").status == 303)

        // When a client connects directly, the header it sends is ignored: its socket address counts
        let direct = app.browser(address: "192.0.2.50")
        for index in 0..<3 {
            #expect(try Self.logIn(direct, email: "c\(index)@example.com", password: "x", forwardedFor: "198.51.100.\(20 + index)").status == 401)
        }
        #expect(try Self.logIn(direct, email: "d@example.com", password: "x", forwardedFor: "198.51.100.30").status == 429)
    }

    @Test("Client addresses: IPv4-mapped, ports and brackets, chains of proxies, garbage; ranges in CIDR")
    func clientAddressRules() throws {
        let proxies = try ["10.0.0.0/8", "fd00::/8", "192.0.2.7"].map { try #require(AddressRange($0)) }
        func client(_ socket: String, _ forwardedFor: String...) -> String? {
            let headers = HTTPHeaders(forwardedFor.map { ("X-Forwarded-For", $0) })
            return Request(method: "GET", target: "/", headers: headers, remoteAddress: socket)
                .clientAddress(trustedProxies: proxies)?.description
        }
        #expect(client("203.0.113.9", "198.51.100.1") == "203.0.113.9", "not a proxy: the header is ignored")
        #expect(client("::ffff:10.1.2.3", "198.51.100.1") == "198.51.100.1", "an IPv4-mapped socket address is IPv4")
        #expect(client("192.0.2.7", "198.51.100.1:4711") == "198.51.100.1")
        #expect(client("fd00::1", "[2001:db8::5]:443") == "2001:db8::5")
        #expect(client("10.0.0.1", "203.0.113.1, 198.51.100.1", "10.2.2.2") == "198.51.100.1", "repeated headers read as one list")
        #expect(client("10.0.0.1", "10.3.3.3, 10.4.4.4") == "10.3.3.3", "all proxies: the farthest one")
        #expect(client("10.0.0.1", "198.51.100.1, not-an-address") == "10.0.0.1", "garbage: the proxy that sent it")
        #expect(client("10.0.0.1") == "10.0.0.1")
        #expect(client("") == nil)

        #expect(AddressRange("192.0.2.0/24")?.contains(try #require(IPAddress("192.0.2.200"))) == true)
        #expect(AddressRange("192.0.2.0/25")?.contains(try #require(IPAddress("192.0.2.200"))) == false)
        #expect(AddressRange("0.0.0.0/0")?.contains(try #require(IPAddress("8.8.8.8"))) == true)
        #expect(AddressRange("10.0.0.0/8")?.contains(try #require(IPAddress("fd00::1"))) == false)
        for bad in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/", "example.com", "10.0.0.0/-1", ""] {
            #expect(AddressRange(bad) == nil, "\(bad)")
        }
        #expect(IPAddress("2001:db8:1:2:3:4:5:6")?.throttleSubject == "2001:db8:1:2::/64")
        #expect(IPAddress("192.0.2.1")?.throttleSubject == "192.0.2.1")
    }

    @Test("serve refuses a trusted proxy that is no address or range, saying what it takes")
    func trustedProxyOption() throws {
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        let output = try CommandLineTests.run(["serve", "--db", db, "--port", "0", "--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "proxy.internal"])
        #expect(output.status != 0)
        #expect(output.stderr.contains("A trusted proxy is an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8, not proxy.internal."))
    }
}
