import Foundation
import HeraldConsole
import HeraldHTTP
import Testing

/// DNS rebinding: a page elsewhere points its own name at Herald's address, and its visitors' browsers then
/// treat Herald's pages as that site's. The console answers only hosts that cannot be rebound and the ones
/// configured; the API answers any.
@Suite("The console answers only its own hosts")
struct ConsoleHostTests {
    static func request(_ target: String, method: String = "GET", host: String?, from address: String = "192.0.2.10",
                        headers: [(String, String)] = []) -> Request {
        var request = Request(method: method, target: target, headers: HTTPHeaders((host.map { [("Host", $0)] } ?? []) + headers))
        request.remoteAddress = address
        return request
    }

    @Test("A fresh install's /setup is a 421 under a rebound name, and nothing is created; localhost, IP literals and no Host are answered")
    func setupUnderAReboundName() async throws {
        let app = try await TestApp()
        for method in ["GET", "POST"] {
            let refused = app.respond(Self.request("/setup", method: method, host: "rebound.example:8080", headers: [
                ("Content-Type", "application/x-www-form-urlencoded")]))
            #expect(refused.status == 421, "\(method): \(refused.status)")
            #expect(refused.text.contains("HERALD_CONSOLE_HOSTS"), "\(method)")
        }
        #expect(try app.database.users.count() == 0)
        for host in ["localhost:8080", "LOCALHOST", "127.0.0.1:8080", "[::1]:8080", "10.1.2.3", "[2001:db8::7]", nil] {
            #expect(app.respond(Self.request("/setup", host: host)).status == 200, "\(host ?? "no Host")")
        }
        // Not a console page: the API, health and static files answer any host.
        #expect(app.respond(Self.request("/api/v1/feed", host: "rebound.example")).status == 401)
        #expect(app.respond(Self.request("/healthz", host: "rebound.example")).status == 200)
        #expect(app.respond(Self.request("/public/css/herald.css", host: "rebound.example")).status == 200)
    }

    @Test("Configured names are answered in any case and with any port; a signed-in page under another name is a 421")
    func configuredNames() async throws {
        let (app, browser) = try await TestApp.withAdmin { $0.consoleHosts = ["herald.example.com"] }
        #expect(browser.send(Self.request("/campaigns", host: "Herald.Example.COM:443")).status == 200)
        for host in ["evil.example", "herald.example.com.evil.example", "xherald.example.com", "herald.example.com:x"] {
            #expect(browser.send(Self.request("/campaigns", host: host)).status == 421, "\(host)")
        }
        #expect(app.respond(Self.request("/login", host: "herald.example.com")).status == 200)
    }

    @Test("Behind a trusted proxy the host it forwards decides; from anyone else X-Forwarded-Host is ignored")
    func forwardedHost() async throws {
        let proxy = try #require(AddressRange("10.9.0.0/16"))
        let app = try await TestApp { $0.trustedProxies = [proxy] }
        #expect(app.respond(Self.request("/setup", host: "127.0.0.1:8080", from: "10.9.0.1",
                                         headers: [("X-Forwarded-Host", "rebound.example")])).status == 421)
        #expect(app.respond(Self.request("/setup", host: "rebound.example", from: "10.9.0.1",
                                         headers: [("X-Forwarded-Host", "localhost")])).status == 200)
        #expect(app.respond(Self.request("/setup", host: "localhost", from: "192.0.2.1",
                                         headers: [("X-Forwarded-Host", "rebound.example")])).status == 200)
    }
}
