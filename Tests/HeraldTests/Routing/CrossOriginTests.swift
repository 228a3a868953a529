import Foundation
import GRDB
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
@testable import HeraldSQLite
import HeraldStorage
import Testing

/// Browsers calling the feed and events: CORS for the origins an app allows, refusal for pages elsewhere
/// (so they cannot spend an app's key through their visitors' browsers), Herald's own pages as they are,
/// and beacons, which carry the key in the address and the batch as text/plain.
@Suite("Browsers on other origins: CORS, refusals and beacons")
struct CrossOriginTests {
    static let shopOrigin = "https://shop.example.com"
    static let otherOrigin = "https://other.example"

    struct Fixture {
        let app: TestApp
        let logs: LogRecorder
        let shop: Int64
        let campaign: Int64
        /// feed:read and events:write of Shop.
        let key: String
        let feedOnlyKey: String

        func send(_ method: String, _ target: String, key: String? = nil, origin: String? = nil, headers: [(String, String)] = [],
                  body: [UInt8] = [], address: String = "192.0.2.10") -> Response {
            var all = headers
            if let key { all.append(("Authorization", "Bearer \(key)")) }
            if let origin { all.append(("Origin", origin)) }
            return app.respond(Request(method: method, target: target, headers: HTTPHeaders(all), body: body, remoteAddress: address))
        }

        func feed(origin: String?, key: String? = nil, headers: [(String, String)] = [], address: String = "192.0.2.10") -> Response {
            send("GET", "/api/v1/feed", key: key ?? self.key, origin: origin, headers: [("Host", "herald.example:8080")] + headers, address: address)
        }

        func batch(_ count: Int = 1) -> [UInt8] {
            let events = (0..<count).map { _ in EventTests.event("impression", campaign: campaign, at: app.clock.now, platform: "web") }
            return Array(try! JSONSerialization.data(withJSONObject: ["events": events]))
        }

        func impressions() throws -> Int {
            try app.database.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM events WHERE type = 'impression'") ?? 0 }
        }
    }

    static func fixture(trustedProxies: [String] = []) async throws -> Fixture {
        let logs = LogRecorder()
        let app = try await TestApp(logger: logs.logger) { configuration in
            configuration.trustedProxies = trustedProxies.compactMap(AddressRange.init)
        }
        let now = app.clock.now
        let shop = try app.database.apps.create(name: "Shop", platforms: [.web], actor: .commandLine, now: now)
        let other = try app.database.apps.create(name: "Other", platforms: [.web], actor: .commandLine, now: now)
        _ = try app.database.apps.addOrigin(appID: shop.id, origin: shopOrigin, actor: .commandLine, now: now)
        _ = try app.database.apps.addOrigin(appID: other.id, origin: otherOrigin, actor: .commandLine, now: now)
        let campaign = try app.database.campaigns.create(
            Campaign(app: shop.id, name: "Sale", triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "Hi"))),
            state: .published, actor: .commandLine, now: now)
        let key = try app.database.apiKeys.create(appID: shop.id, name: "web", scopes: [.feedRead, .eventsWrite], actor: .commandLine, now: now)
        let feedOnly = try app.database.apiKeys.create(appID: shop.id, name: "feed", scopes: [.feedRead], actor: .commandLine, now: now)
        return Fixture(app: app, logs: logs, shop: shop.id, campaign: campaign, key: key.secret, feedOnlyKey: feedOnly.secret)
    }

    static func corsHeaders(_ response: Response) -> [String] {
        response.headers.fields.map(\.name).filter { $0.lowercased().hasPrefix("access-control-") }
    }

    @Test("A preflight from an origin some app allows gets the CORS answer; from any other origin a 403 without CORS headers")
    func preflight() async throws {
        let fixture = try await Self.fixture()
        let asked = [("Access-Control-Request-Method", "GET"), ("Access-Control-Request-Headers", "authorization,if-none-match,x-installation-id")]

        // Given a page on Shop's origin asking before its feed request (a preflight carries no key)
        let feed = fixture.send("OPTIONS", "/api/v1/feed", origin: Self.shopOrigin, headers: asked)
        #expect(feed.status == 204)
        #expect(feed.body.isEmpty)
        #expect(feed.headers["Access-Control-Allow-Origin"] == Self.shopOrigin)
        #expect(feed.headers["Access-Control-Allow-Methods"] == "GET")
        #expect(feed.headers["Access-Control-Allow-Headers"] == "Authorization, Content-Type, If-None-Match, X-Installation-Id")
        #expect(feed.headers["Access-Control-Max-Age"] == "600")
        #expect(feed.headers["Vary"] == "Origin")

        // And one on another app's origin, before an events batch: allowed by some app, so answered
        let events = fixture.send("OPTIONS", "/api/v1/events", origin: Self.otherOrigin, headers: [("Access-Control-Request-Method", "POST")])
        #expect(events.status == 204)
        #expect(events.headers["Access-Control-Allow-Origin"] == Self.otherOrigin)
        #expect(events.headers["Access-Control-Allow-Methods"] == "POST")

        // When the origin is allowed by no app, or is the opaque "null", there are no CORS headers
        for origin in ["https://evil.example", "null", "https://shop.example.com.evil.example", "http://shop.example.com"] {
            let refused = fixture.send("OPTIONS", "/api/v1/feed", origin: origin, headers: asked)
            #expect(refused.status == 403, "\(origin)")
            #expect(Self.corsHeaders(refused).isEmpty, "\(origin)")
            #expect(refused.headers["Vary"] == "Origin")
            #expect(refused.text.contains(#""code":"forbidden""#))
            #expect(refused.text.contains("herald app origin add"))
        }

        // And an OPTIONS that is no preflight says which methods the address takes
        let plain = fixture.send("OPTIONS", "/api/v1/events")
        #expect(plain.status == 204)
        #expect(plain.headers["Allow"] == "POST, OPTIONS")
        #expect(Self.corsHeaders(plain).isEmpty)

        // And the rest of the API answers no preflight
        let campaigns = fixture.send("OPTIONS", "/api/v1/campaigns", origin: Self.shopOrigin, headers: asked)
        #expect(campaigns.status == 405)
        #expect(Self.corsHeaders(campaigns).isEmpty)
    }

    @Test("The key's app decides: its origins get the feed with CORS headers, 304s included; other pages get a 403 saying where to allow them")
    func actualRequests() async throws {
        let fixture = try await Self.fixture()

        // Given a page on Shop's origin: the feed, with the headers its script may read
        let allowed = fixture.feed(origin: Self.shopOrigin)
        #expect(allowed.status == 200)
        #expect(allowed.headers["Access-Control-Allow-Origin"] == Self.shopOrigin)
        #expect(allowed.headers["Access-Control-Expose-Headers"] == "ETag, Retry-After")
        #expect(allowed.headers["Vary"] == "Authorization, X-Installation-Id, Accept-Encoding, Origin")
        let etag = try #require(allowed.headers["ETag"])
        let unchanged = fixture.feed(origin: Self.shopOrigin, headers: [("If-None-Match", etag)])
        #expect(unchanged.status == 304)
        #expect(unchanged.headers["Access-Control-Allow-Origin"] == Self.shopOrigin)

        // When a page on another app's origin uses Shop's key: refused, and readable to its script
        let borrowed = fixture.feed(origin: Self.otherOrigin)
        #expect(borrowed.status == 403)
        #expect(borrowed.text.contains("Pages on https://other.example may not use this app's keys"))
        #expect(borrowed.text.contains("herald app origin add --app \(fixture.shop) <origin>"))
        #expect(borrowed.headers["Access-Control-Allow-Origin"] == Self.otherOrigin)
        #expect(!borrowed.text.contains(#""campaigns""#))

        // When a page no app allows does the same: refused, and nothing for its script to read
        for origin in ["https://evil.example", "null", "https://SHOP.example.com"] {
            let refused = fixture.feed(origin: origin)
            #expect(refused.status == 403, "\(origin)")
            #expect(Self.corsHeaders(refused).isEmpty, "\(origin)")
        }
        let junk = fixture.feed(origin: String(repeating: "<script>", count: 100))
        #expect(junk.status == 403)
        #expect(junk.text.contains("Pages on this page's origin may not use"))

        // And apps and scripts (no Origin) get the feed as always, without CORS headers
        let native = fixture.feed(origin: nil)
        #expect(native.status == 200)
        #expect(Self.corsHeaders(native).isEmpty)
        #expect(native.headers["Vary"] == "Authorization, X-Installation-Id, Accept-Encoding, Origin")

        // And a key Herald does not know, from an allowed origin, is a 401 the client's script can read
        let unknown = fixture.feed(origin: Self.shopOrigin, key: "hrld_unknown")
        #expect(unknown.status == 401)
        #expect(unknown.headers["Access-Control-Allow-Origin"] == Self.shopOrigin)

        // And events follow the same rule
        let posted = fixture.send("POST", "/api/v1/events", key: fixture.key, origin: Self.shopOrigin,
                                  headers: [("Content-Type", "application/json")], body: fixture.batch())
        #expect(posted.status == 200)
        #expect(posted.headers["Access-Control-Allow-Origin"] == Self.shopOrigin)
        let elsewhere = fixture.send("POST", "/api/v1/events", key: fixture.key, origin: "https://evil.example",
                                     headers: [("Content-Type", "application/json")], body: fixture.batch())
        #expect(elsewhere.status == 403)
        #expect(try fixture.impressions() == 1)

        // And the rest of the API neither checks nor answers origins
        let info = fixture.send("GET", "/api/v1/key", key: fixture.key, origin: "https://evil.example")
        #expect(info.status == 200)
        #expect(Self.corsHeaders(info).isEmpty)
    }

    @Test("Herald's own pages (the demo) are not another origin: compared with the request's scheme and Host, or a trusted proxy's forwarded ones")
    func sameOrigin() async throws {
        let fixture = try await Self.fixture(trustedProxies: ["10.0.0.0/8"])
        // Given the page's own origin, with the port written or the default one left out
        for (host, origin) in [("herald.example:8080", "http://herald.example:8080"), ("Herald.Example", "http://herald.example"),
                               ("herald.example:80", "http://herald.example"), ("[::1]:8080", "http://[::1]:8080")] {
            let response = fixture.send("GET", "/api/v1/feed", key: fixture.key, origin: origin, headers: [("Host", host)])
            #expect(response.status == 200, "\(host) \(origin)")
            #expect(Self.corsHeaders(response).isEmpty)
        }
        // When the scheme or port differs, it is another origin
        #expect(fixture.send("GET", "/api/v1/feed", key: fixture.key, origin: "https://herald.example", headers: [("Host", "herald.example")]).status == 403)
        #expect(fixture.send("GET", "/api/v1/feed", key: fixture.key, origin: "http://herald.example:8081", headers: [("Host", "herald.example:8080")]).status == 403)

        // Behind a trusted proxy that ends TLS, the origin browsers reached is the forwarded one
        let forwarded = [("Host", "127.0.0.1:8080"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "console.example.com, 127.0.0.1:8080")]
        let proxied = fixture.send("GET", "/api/v1/feed", key: fixture.key, origin: "https://console.example.com", headers: forwarded, address: "10.1.2.3")
        #expect(proxied.status == 200)
        let beacon = fixture.send("POST", "/api/v1/events?key=\(fixture.key)", origin: "https://console.example.com:443",
                                  headers: forwarded + [("Content-Type", "text/plain")], body: fixture.batch(), address: "10.1.2.3")
        #expect(beacon.status == 403, "https://console.example.com:443 is no browser's Origin (it never writes the default port)")
        // And from anyone else the same headers prove nothing
        let claimed = fixture.send("GET", "/api/v1/feed", key: fixture.key, origin: "https://console.example.com", headers: forwarded, address: "192.0.2.99")
        #expect(claimed.status == 403)
    }

    @Test("Adding or removing an origin takes effect at once in this process, and within 30 s when another process made it")
    func originsChange() async throws {
        let fixture = try await Self.fixture()
        let app = fixture.app
        let newcomer = "https://new.example"
        #expect(fixture.feed(origin: newcomer).status == 403)
        let added = try AppRegistry(database: app.database).addOrigin(appID: fixture.shop, origin: newcomer, actor: .commandLine, now: app.clock.now)
        #expect(fixture.feed(origin: newcomer).status == 200)
        #expect(fixture.send("OPTIONS", "/api/v1/feed", origin: newcomer).status == 204)
        try app.database.apps.removeOrigin(id: added.id, appID: fixture.shop, actor: .commandLine, now: app.clock.now)
        #expect(fixture.feed(origin: newcomer).status == 403)
        #expect(fixture.send("OPTIONS", "/api/v1/feed", origin: newcomer).status == 403)

        // Given a change written by another process (`herald app origin add` on the same file)
        let elsewhere = try DatabaseQueue(path: app.folder.url.appendingPathComponent("herald.sqlite").path)
        try await elsewhere.write { db in
            try db.execute(sql: "INSERT INTO app_origins (app_id, origin, created_at) VALUES (?, ?, ?)", arguments: [fixture.shop, newcomer, Date()])
        }
        try elsewhere.close()
        // Then the cached origins hold until they are 30 s old
        #expect(fixture.feed(origin: newcomer).status == 403)
        app.clock.advance(31)
        #expect(fixture.feed(origin: newcomer).status == 200)
    }

    @Test("A beacon: events as text/plain with the key in the query (Authorization wins), from allowed origins only; the key is never logged")
    func beacons() async throws {
        let fixture = try await Self.fixture()

        // Given what navigator.sendBeacon sends: a string body, the key in the address, the page's origin
        for contentType in ["text/plain;charset=UTF-8", "text/plain", "Text/Plain; charset=iso-8859-1"] {
            let beacon = fixture.send("POST", "/api/v1/events?key=\(fixture.key)", origin: Self.shopOrigin,
                                      headers: [("Content-Type", contentType)], body: fixture.batch(2))
            #expect(beacon.status == 200, "\(contentType): \(beacon.text)")
            #expect(beacon.text.contains(#""accepted":2"#))
        }
        #expect(try fixture.impressions() == 6)

        // When both are sent, the header's key is the one used (this one lacks events:write)
        let both = fixture.send("POST", "/api/v1/events?key=\(fixture.key)", key: fixture.feedOnlyKey,
                                headers: [("Content-Type", "text/plain")], body: fixture.batch())
        #expect(both.status == 403)
        #expect(both.text.contains("events:write"))

        // When a page elsewhere sends a beacon with the key it found, nothing is stored
        let stolen = fixture.send("POST", "/api/v1/events?key=\(fixture.key)", origin: "https://evil.example",
                                  headers: [("Content-Type", "text/plain")], body: fixture.batch())
        #expect(stolen.status == 403)
        #expect(try fixture.impressions() == 6)

        // And only events take the key from the query, and only JSON or text bodies
        #expect(fixture.send("GET", "/api/v1/feed?key=\(fixture.key)").status == 401)
        let noKey = fixture.send("POST", "/api/v1/events", headers: [("Content-Type", "text/plain")], body: fixture.batch())
        #expect(noKey.status == 401)
        #expect(noKey.text.contains("the `key` query parameter"))
        #expect(fixture.send("POST", "/api/v1/events?key=\(fixture.key)", headers: [("Content-Type", "text/html")], body: fixture.batch()).status == 415)

        // And the log names the path, never the key: on answers, refusals and unreadable addresses alike
        _ = fixture.send("POST", "/api/v1/%FF?key=\(fixture.key)", headers: [("Content-Type", "text/plain")], body: fixture.batch())
        let lines = fixture.logs.all
        #expect(lines.contains { $0.contains("msg=request method=POST") && $0.contains(" path=/api/v1/events ") && $0.hasSuffix(" status=200") })
        #expect(lines.contains { $0.contains("msg=request method=POST") && $0.contains(" path=/api/v1/%FF ") && $0.hasSuffix(" status=400") })
        #expect(!lines.contains { $0.contains(fixture.key) || $0.contains("key=") }, "\(lines)")
    }
}
