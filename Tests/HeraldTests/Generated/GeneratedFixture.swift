import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// The real application with what generated requests need: an app with a key of every scope, a test
/// device, another app with a campaign of its own, and a signed-in admin's browser.
struct GeneratedFixture {
    let app: TestApp
    let browser: TestBrowser
    let shop: Int64
    let key: String
    /// A campaign of another app, which this app's key must not reach.
    let otherCampaign: Int64
    let testDevice = "iid-test-device"

    static func make() async throws -> GeneratedFixture {
        let (app, browser) = try await TestApp.withAdmin { $0.liftRegistrationLimits() }
        let now = app.clock.now
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .android, .web], actor: .commandLine, now: now).id
        let key = try app.database.apiKeys.create(appID: shop, name: "generated", scopes: APIScope.allCases, actor: .commandLine, now: now).secret
        let other = try app.database.apps.create(name: "Other", platforms: [.ios], actor: .commandLine, now: now).id
        let otherCampaign = try app.database.campaigns.create(
            Campaign(app: other, name: "Elsewhere", message: Message(layout: .modal, title: .init(text: "hi"))),
            state: .published, actor: .commandLine, now: now)
        let fixture = GeneratedFixture(app: app, browser: browser, shop: shop, key: key, otherCampaign: otherCampaign)
        _ = try app.database.apps.addTestDevice(appID: shop, installationID: fixture.testDevice, name: "QA phone", actor: .commandLine, now: now)
        return fixture
    }

    /// A request to the API with the key of every scope.
    func api(_ method: String, _ target: String, body: [UInt8] = [], contentType: String? = "application/json",
             headers: [(String, String)] = []) -> Response {
        var all = headers + [("Authorization", "Bearer \(key)")]
        if let contentType, method != "GET" { all.append(("Content-Type", contentType)) }
        return app.respond(Request(method: method, target: target, headers: HTTPHeaders(all), body: body))
    }

    /// Posts a file to the console's import form, as the browser would; `dryRun` only checks it.
    func importFile(_ file: [UInt8], app appID: Int64, dryRun: Bool = false) -> Response {
        let form = browser.get("/campaigns/import")
        let token = TestBrowser.csrfToken(in: form.text) ?? ""
        let boundary = "----HeraldGenerated\(UInt64.random(in: 0...UInt64.max))"
        var body: [UInt8] = []
        var fields = [("csrf_token", token), ("app", String(appID))]
        if dryRun { fields.append(("dryRun", "true")) }
        for (name, value) in fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"campaigns.json\"\r\nContent-Type: application/json\r\n\r\n".utf8)
        body += file + Array("\r\n--\(boundary)--\r\n".utf8)
        return browser.send(Request(
            method: "POST", target: "/campaigns/import",
            headers: HTTPHeaders([("Content-Type", "multipart/form-data; boundary=\(boundary)")]), body: body))
    }

    /// The newest campaign's id (the clock stands still, so the list's tie-break puts the highest id first).
    func newestCampaign() throws -> Int64? {
        let page = try JSONValue.parse(api("GET", "/api/v1/campaigns?pageSize=1").body)
        guard case .array(let campaigns)? = page["campaigns"], let id = campaigns.first?["id"]?.numberValue else { return nil }
        return Int64(id)
    }
}

extension JSONValue {
    /// The document without the given top-level members.
    func removing(_ keys: Set<String>) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.filter { !keys.contains($0.key) })
    }

    /// The document with its `data` pairs sorted by key, for a `data` sent as an object.
    var sortingData: JSONValue {
        guard case .array(let pairs)? = self["data"] else { return self }
        func key(_ pair: JSONValue) -> String { if case .string(let key)? = pair["key"] { key } else { "" } }
        return setting("data", .array(pairs.sorted { key($0).unicodeScalars.lexicographicallyPrecedes(key($1).unicodeScalars) }))
    }

    /// A time Campaign JSON wrote.
    var date: Date? {
        guard case .string(let text) = self else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
