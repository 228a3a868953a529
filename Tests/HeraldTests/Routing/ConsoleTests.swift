import Foundation
import HeraldHTTP
import HeraldStorage
import Testing

@Suite("Pages, headers, errors and static files")
struct ConsoleTests {
    @Test("HTML pages carry CSP without inline script, nosniff, frame-ancestors and Referrer-Policy")
    func securityHeaders() async throws {
        let (_, browser) = try await TestApp.withAdmin()
        for path in ["/campaigns", "/login", "/nowhere"] {
            let response = browser.get(path)
            let csp = try #require(response.headers["Content-Security-Policy"])
            #expect(csp.contains("script-src 'self'"))
            #expect(!csp.contains("unsafe-inline"))
            #expect(csp.contains("frame-ancestors 'none'"))
            #expect(response.headers["X-Content-Type-Options"] == "nosniff")
            #expect(response.headers["Referrer-Policy"] == "same-origin")
        }
        let page = browser.get("/campaigns").text
        #expect(!page.contains("<script>"))
        #expect(page.contains(#"<script src="/public/js/herald.js" defer></script>"#))
    }

    @Test("Unknown paths get a friendly 404, wrong methods a 405 with Allow")
    func notFoundAndMethodNotAllowed() async throws {
        let (_, browser) = try await TestApp.withAdmin()
        let missing = browser.get("/campaigns/nope/at/all")
        #expect(missing.status == 404)
        #expect(missing.text.contains("There is nothing at this address."))
        let wrongMethod = browser.send(Request(method: "DELETE", target: "/users"))
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["Allow"] == "GET, POST, HEAD")
        let apiMissing = browser.get("/api/v1/nothing")
        #expect(apiMissing.status == 404)
        #expect(apiMissing.headers["Content-Type"] == "application/json")
        #expect(apiMissing.text.contains(#""code":"not_found""#))
    }

    @Test("Viewers and editors get 403 on admin pages; viewers read campaigns")
    func roles() async throws {
        let (app, _) = try await TestApp.withAdmin()
        try app.createUser(email: "viewer@example.com", role: .viewer)
        try app.createUser(email: "editor@example.com", role: .editor)
        for email in ["viewer@example.com", "editor@example.com"] {
            let browser = app.browser(address: "10.1.0.\(email.count)")
            _ = try browser.submit("/login", from: "/login", ["email": email, "password": "correct horse battery"])
            #expect(browser.get("/campaigns").status == 200)
            for path in ["/users", "/users/new", "/apps", "/audit"] {
                let response = browser.get(path)
                #expect(response.status == 403, "\(email) \(path)")
                #expect(response.text.contains("Your role does not allow this."))
            }
            let page = browser.get("/campaigns").text
            #expect(!page.contains(#"href="/users""#))
        }
    }

    @Test("Static files are served with type, ETag and Last-Modified, and answer 304 when unchanged")
    func staticFiles() async throws {
        let app = try await TestApp()
        let browser = app.browser()
        let css = browser.get("/public/css/herald.css")
        #expect(css.status == 200)
        #expect(css.headers["Content-Type"] == "text/css; charset=utf-8")
        let etag = try #require(css.headers["ETag"])
        #expect(css.headers["Last-Modified"] != nil)
        let notModified = browser.get("/public/css/herald.css", headers: [("If-None-Match", etag)])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(browser.get("/public/js/herald.js").headers["Content-Type"] == "text/javascript; charset=utf-8")
    }

    @Test("No path under /public/ escapes the Public folder", arguments: [
        "/public/../Package.swift", "/public/%2e%2e/Package.swift", "/public/..%2fPackage.swift",
        "/public/css/..%2f..%2fmigrations/0001_foundation.sql", "/public/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/public/..\\Package.swift", "/public//etc/passwd",
    ])
    func noPathTraversal(target: String) async throws {
        let app = try await TestApp()
        let response = app.respond(Request(method: "GET", target: target))
        #expect(response.status == 404 || response.status == 400)
        #expect(!response.text.contains("swift-tools-version"))
        #expect(!response.text.contains("CREATE TABLE"))
    }

    @Test("/healthz and /readyz answer without a session")
    func health() async throws {
        let app = try await TestApp()
        #expect(app.respond(Request(method: "GET", target: "/healthz")).status == 200)
        #expect(app.respond(Request(method: "GET", target: "/readyz")).status == 200)
        try app.database.close()
        #expect(app.respond(Request(method: "GET", target: "/readyz")).status == 503)
        #expect(app.respond(Request(method: "GET", target: "/healthz")).status == 200)
    }

    @Test("A form body that is not UTF-8 is a 400, a JSON body to a form a 415")
    func badBodies() async throws {
        let (_, browser) = try await TestApp.withAdmin()
        let invalid = browser.send(Request(
            method: "POST", target: "/apps",
            headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")]), body: Array("name=%FF%FE".utf8)))
        #expect(invalid.status == 400)
        let json = browser.send(Request(
            method: "POST", target: "/apps", headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{}".utf8)))
        #expect(json.status == 415)
    }

    @Test("Values typed by users are escaped in every page")
    func escaping() async throws {
        let (_, browser) = try await TestApp.withAdmin()
        let response = try browser.submit("/apps", from: "/apps/new", pairs: [("name", "<script>alert(1)</script>"), ("platforms", "web")])
        #expect(response.status == 303)
        let list = browser.get("/apps").text
        #expect(!list.contains("<script>alert(1)</script>"))
        #expect(list.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
    }

    @Test("A quote followed by a combining mark cannot close the attribute it is written in")
    func escapingAQuoteWithACombiningMark() async throws {
        let (_, browser) = try await TestApp.withAdmin()
        // `"` and U+0301 are one character, which a character-by-character escaper does not recognize as a quote.
        let name = "q\"\u{301} data-injected=1 x"
        let created = try browser.submit("/apps", from: "/apps/new", pairs: [("name", name), ("platforms", "web")])
        #expect(created.status == 303)
        let page = browser.get(created.headers["Location"] ?? "/apps").text
        // Built outside `#expect`: its macro stumbles on the same combined character.
        let escaped = "q&quot;\u{301} data-injected=1 x", raw = "q\"\u{301}"
        #expect(page.contains(escaped))
        #expect(!page.contains(raw))
    }
}
