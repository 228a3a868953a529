import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldPush
import HeraldStorage
import PushMock

@testable import HeraldConsole

/// A console in the pseudo-language, seeded with an app, keys, test devices, campaigns in every state and
/// layout with language versions, events, users and audit entries. Every name and text the test seeds is
/// marked (starting with Ẓ, or written in Persian) or listed in `seeded`, so the checker can tell it from UI text.
final class PseudoConsole {
    static let language = "en-XA"
    static let acceptLanguage = ("Accept-Language", "en-XA")
    static let password = "correct horse battery"

    let app: TestApp
    let admin: TestBrowser
    var seeded: Set<String> = [
        "Ẓada", "Ẓshop", "Ẓleer", "Ẓwriter", "Ẓreader", "Ẓpixel", "iid-zq-qa", "iid-zq-2", "zq_sku", "zq_level_up", "zq_tier",
        "zq_purchase", "Ẓgold", "Ẓsku1", "Ẓpromo", "Ẓcode", "IR", "DE", "کمپین تابستانه", "someday",
    ]
    private(set) var shop: Int64 = 0
    private(set) var emptyApp: Int64 = 0
    private(set) var campaigns: [String: Int64] = [:]
    private(set) var keyIDs: [Int64] = []
    private(set) var originIDs: [Int64] = []
    private(set) var userIDs: [Int64] = []
    private var writerKey = ""
    /// What was fetched, in order: a label (`GET /campaigns`, `POST /users → GET /users`) and the answer.
    private(set) var visited: [(label: String, response: Response, expectsLanguage: Bool)] = []
    /// What the test could not do (a route it cannot fill, a form that would not load): a failure of its own.
    var problems: [String] = []
    /// Where the last redirect that `follow` saw led.
    var lastLocation: String?
    /// The report CSV's first line.
    var csvHeader = ""

    var pages: Int { visited.filter { $0.response.headers["Content-Type"]?.hasPrefix("text/html") == true }.count }

    init() async throws {
        app = try await TestApp { $0.pseudoLocale = true }
        // The first visitor sets Herald up, and is then the admin.
        admin = app.browser(address: "10.7.0.1")
        let visitor = admin
        record("GET /setup", visitor.get("/setup", headers: [Self.acceptLanguage]))
        record("POST /setup (invalid)", try Self.submit(visitor, "/setup", from: "/setup", [
            ("name", ""), ("email", "not an address"), ("password", "short"), ("password_confirmation", "other"), ("time_zone", "Mars/Base"),
        ]))
        let setUp = try Self.submit(visitor, "/setup", from: "/setup", [
            ("name", "Ẓada"), ("email", "admin@example.com"), ("password", Self.password), ("password_confirmation", Self.password),
            ("time_zone", "Asia/Tehran"),
        ])
        precondition(setUp.status == 303, "setup failed: \(setUp.status) \(setUp.text)")
        let chosen = try Self.submit(admin, "/account", from: "/account", [("language", Self.language), ("time_zone", "Asia/Tehran")])
        precondition(chosen.status == 303, "the settings page does not offer \(Self.language): \(chosen.status)")
        follow("POST /account", chosen, admin)
        try seed()
    }

    // MARK: Requests

    /// Loads `page` (in the pseudo-language) for its CSRF token, then posts `fields` to `target` with it.
    static func submit(_ browser: TestBrowser, _ target: String, from page: String, _ fields: [(String, String)]) throws -> Response {
        let form = browser.get(page, headers: [acceptLanguage])
        guard let token = TestBrowser.csrfToken(in: form.text) else { throw TestFailure("no csrf_token on \(page) (status \(form.status))") }
        return post(browser, target, [("csrf_token", token)] + fields)
    }

    static func post(_ browser: TestBrowser, _ target: String, _ fields: [(String, String)]) -> Response {
        browser.send(Request(
            method: "POST", target: target,
            headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded"), acceptLanguage]),
            body: Array(FormData(fields).urlencoded.utf8)))
    }

    func record(_ label: String, _ response: Response, expectsLanguage: Bool = true) {
        visited.append((label, response, expectsLanguage))
    }

    /// Records `response`, and the page its redirect leads to (where a flash message shows).
    @discardableResult
    func follow(_ label: String, _ response: Response, _ browser: TestBrowser) -> Response {
        record("\(label) (\(response.status))", response)
        guard (300..<400).contains(response.status), let location = response.headers["Location"], location.hasPrefix("/") else { return response }
        lastLocation = location
        let landed = browser.get(location, headers: [Self.acceptLanguage])
        record("\(label) → GET \(location)", landed)
        return landed
    }

    @discardableResult
    func submit(_ label: String, _ browser: TestBrowser, _ target: String, from page: String, _ fields: [(String, String)]) -> Response {
        do {
            return follow(label, try Self.submit(browser, target, from: page, fields), browser)
        } catch {
            problems.append("\(label): \(error)")
            return Response(status: 500)
        }
    }

    func api(_ method: String, _ target: String, _ document: Any? = nil, ifMatch: String? = nil) throws -> Response {
        var headers = [("Authorization", "Bearer \(writerKey)")]
        var body: [UInt8] = []
        if let document {
            headers.append(("Content-Type", "application/json"))
            body = Array(try JSONSerialization.data(withJSONObject: document))
        }
        if let ifMatch { headers.append(("If-Match", ifMatch)) }
        let response = app.respond(Request(method: method, target: target, headers: HTTPHeaders(headers), body: body))
        guard (200..<300).contains(response.status) else { throw TestFailure("\(method) \(target): \(response.status) \(response.text)") }
        return response
    }

    // MARK: Seeding

    private func seed() throws {
        let now = app.clock.now
        let database = app.database
        let adminUser = try Self.required(try database.users.find(email: "admin@example.com"), "the admin")
        let actor = AuditActor.user(id: adminUser.id ?? 0, email: adminUser.email)
        shop = try database.apps.create(name: "Ẓshop", platforms: [.ios, .android, .web], actor: actor, now: now).id
        emptyApp = try database.apps.create(name: "Ẓleer", platforms: [.web], actor: actor, now: now).id
        let writer = try database.apiKeys.create(appID: shop, name: "Ẓwriter", scopes: APIScope.allCases, actor: actor, now: now)
        writerKey = writer.secret
        let reader = try database.apiKeys.create(appID: shop, name: "Ẓreader", scopes: [.feedRead, .eventsWrite], actor: actor, now: now)
        keyIDs = [writer.key.id, reader.key.id]
        seeded.formUnion([writer.key.prefix, reader.key.prefix])  // random letters the pages show to tell keys apart
        _ = try database.apps.addTestDevice(appID: shop, installationID: "iid-zq-qa", name: "Ẓpixel", actor: actor, now: now)
        originIDs = [try database.apps.addOrigin(appID: shop, origin: "https://shop.zq.example", actor: actor, now: now).id]
        // Push set up, so the app page shows what is stored and the removal pages exist.
        let credentials = try MockCredentials.generate(tokenURI: "https://oauth2.zq.example/token")
        let push = app.application.services.push.editor
        try push.setAPNs(appID: shop, keyPEM: credentials.apnsKeyPEM, keyID: credentials.apnsKeyID, teamID: credentials.apnsTeamID,
                         topic: "com.zq.shop", url: nil, actor: actor, now: now)
        try push.setFCM(appID: shop, serviceAccountJSON: credentials.fcmServiceAccountJSON, url: nil, actor: actor, now: now)
        seeded.formUnion([credentials.apnsKeyID, credentials.apnsTeamID, "com.zq.shop", credentials.fcmProjectID, credentials.fcmClientEmail,
                          APNsConfiguration.productionURL.absoluteString, FCMConfiguration.productionURL.absoluteString])

        // Users: an editor and a viewer made on the command line, a deactivated one; the viewer reads the pseudo-language.
        try app.createUser(email: "editor@example.com", role: .editor)
        try app.createUser(email: "viewer@example.com", role: .viewer)
        try app.createUser(email: "gone@example.com", role: .viewer)
        for email in ["viewer@example.com", "gone@example.com"] {
            var user = try Self.required(try database.users.find(email: email), email)
            user.language = Self.language
            user.active = email != "gone@example.com"
            try database.users.update(
                user, ending: .none, line: .userSettings(email: user.email, language: user.language, timeZone: user.timeZone ?? "UTC"), actor: actor, now: now)
        }
        userIDs = try database.users.all().compactMap(\.id)

        // Campaigns in every layout and state, through the API (its audit lines name the key).
        func card(_ name: String) -> [String: Any] {
            [
                "app": shop, "name": name, "description": "Ẓbeschreibung", "priority": 3,
                "schedule": ["start": NSNull(), "end": "2026-12-01T08:00:00Z", "timeZone": "Europe/Berlin"],
                "triggers": [
                    ["event": "app_launch"],
                    ["event": "purchase", "filters": [
                        ["property": "zq_sku", "op": "eq", "value": "Ẓsku1"], ["property": "value", "op": "gte", "value": 9.99],
                    ]],
                    ["event": "zq_level_up", "filters": [["property": "zq_tier", "op": "exists"]]],
                ],
                "frequency": ["type": "every_n_days", "days": 7],
                "targeting": [
                    "platforms": ["ios", "android"], "appVersion": ["op": "contains", "value": "2.1"], "languages": ["en", "fa", "pt-BR"],
                    "countries": ["IR", "DE"], "userProperties": [["property": "zq_tier", "op": "eq", "value": "Ẓgold"]],
                    "daysSinceFirstOpen": ["min": 1, "max": 30], "percentage": 50,
                ],
                "message": [
                    "layout": "card", "title": ["text": "Ẓtitel \(name)", "color": "#1A73E8"], "body": ["text": "Ẓtext"],
                    "imageUrl": "https://example.com/portrait.png", "landscapeImageUrl": "https://example.com/landscape.png",
                    "backgroundColor": "#FFFFFF",
                    "primaryAction": ["text": "Ẓkaufen", "buttonColor": "#CC1A73E8", "url": "https://example.com/shop"],
                    "secondaryAction": ["text": "Ẓspäter"],
                    "translations": [
                        "fa": ["title": ["text": "حراج بهاره"], "body": ["text": "۲۰٪ تخفیف"], "primaryAction": ["text": "خرید"]],
                        "ar": ["title": ["text": "تخفيضات الربيع"], "primaryAction": ["text": "تسوق الآن"]],
                        "ja": ["title": ["text": "春のセール"], "body": ["text": "全品20％オフ"]],
                        "de": ["title": ["text": "Ẓfrühlingsangebot"], "imageUrl": "https://example.com/de.png"],
                    ],
                ],
                "data": [["key": "Ẓpromo", "value": "Ẓcode"]],
            ]
        }
        func message(_ layout: String) -> [String: Any] {
            switch layout {
            case "modal": ["layout": "modal", "title": ["text": "Ẓmodal"], "body": ["text": "Ẓtext"],
                           "primaryAction": ["text": "Ẓok", "url": "myapp://zq"], "translations": ["fa": ["title": ["text": "سلام"]]]]
            case "banner": ["layout": "banner", "title": ["text": "Ẓbanner"], "action": ["url": "myapp://zq"], "dismiss": ["seconds": 8]]
            case "slideup": ["layout": "slideup", "body": ["text": "Ẓslideup"], "slideFrom": "top", "imageUrl": "https://example.com/i.png"]
            case "fullscreen": ["layout": "fullscreen", "title": ["text": "Ẓvoll"], "imageUrl": "https://example.com/f.png",
                                "orientation": "portrait", "primaryAction": ["text": "Ẓja", "url": "https://example.com"]]
            default: ["layout": "image_only", "imageUrl": "https://example.com/poster.png", "action": ["url": "https://example.com"]]
            }
        }
        func create(_ name: String, _ document: [String: Any]) throws -> Int64 {
            seeded.insert(name)
            let created = try api("POST", "/api/v1/campaigns", document)
            let body = try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any]
            guard let id = (body?["id"] as? NSNumber)?.int64Value else { throw TestFailure("no id in \(created.text)") }
            campaigns[name] = id
            return id
        }
        func simple(_ name: String, _ layout: String, start: String? = nil, testOnDevice: Bool = false) throws -> Int64 {
            try create(name, [
                "app": shop, "name": name, "triggers": [["event": "session_start"]], "message": message(layout),
                "schedule": ["start": start.map { $0 as Any } ?? NSNull(), "end": NSNull(), "timeZone": "Asia/Tokyo"],
                "frequency": ["type": "always"], "testOnDevice": testOnDevice,
            ])
        }
        for name in ["Ẓcard", "Ẓtitel", "Ẓtext", "Ẓbeschreibung", "Ẓkaufen", "Ẓspäter", "Ẓfrühlingsangebot", "Ẓmodal",
                     "Ẓok", "Ẓbanner", "Ẓslideup", "Ẓvoll", "Ẓja", "Ẓbild", "Ẓentwurf", "Ẓkaputt", "Ẓkopie", "Ẓplan", "Ẓpause", "Ẓende",
                     "Ẓarchiv", "Ẓgerät", "Ẓneu", "Ẓpush"] {
            seeded.insert(name)
        }
        let running = try create("Ẓcard", card("Ẓcard"))
        // Two more revisions, for the history page's differences.
        var edited = card("Ẓcard")
        edited["priority"] = 2
        edited["message"] = (edited["message"] as? [String: Any] ?? [:]).merging(["body": ["text": "Ẓtext 2"]]) { $1 }
        _ = try api("PUT", "/api/v1/campaigns/\(running)", edited, ifMatch: "\"r1\"")
        edited["frequency"] = ["type": "once"]
        edited["targeting"] = ["platforms": ["web"]]
        edited["data"] = [] as [Any]
        _ = try api("PUT", "/api/v1/campaigns/\(running)", edited, ifMatch: "\"r2\"")
        _ = try api("POST", "/api/v1/campaigns/\(running)/publish")
        let scheduled = try simple("Ẓplan", "modal", start: "2026-12-24T09:00:00Z")
        _ = try api("POST", "/api/v1/campaigns/\(scheduled)/publish")
        let paused = try simple("Ẓpause", "banner")
        _ = try api("POST", "/api/v1/campaigns/\(paused)/publish")
        _ = try api("POST", "/api/v1/campaigns/\(paused)/pause")
        let ended = try simple("Ẓende", "slideup")
        _ = try api("POST", "/api/v1/campaigns/\(ended)/publish")
        _ = try api("POST", "/api/v1/campaigns/\(ended)/stop")
        let archived = try simple("Ẓarchiv", "image_only")
        _ = try api("POST", "/api/v1/campaigns/\(archived)/archive")
        _ = try simple("Ẓvoll", "fullscreen")
        _ = try simple("کمپین تابستانه", "modal", testOnDevice: true)
        _ = try simple("Ẓgerät", "modal", testOnDevice: true)
        _ = try api("POST", "/api/v1/campaigns/\(try Self.required(campaigns["Ẓgerät"], "Ẓgerät"))/publish")
        // A draft devices would refuse (a card without image, button or background): its problems show.
        _ = try create("Ẓkaputt", ["app": shop, "name": "Ẓkaputt", "message": ["layout": "card", "title": ["text": "Ẓkaputt"]]])
        _ = try simple("Ẓentwurf", "banner")
        // A push draft of an app no device has a token of yet: publishing it asks first.
        _ = try create("Ẓpush", ["app": shop, "name": "Ẓpush", "channel": "push", "push": ["title": "Ẓtitel", "body": "Ẓtext"]])

        // Events over the last days, in every type and detail, on every platform, and a test device's.
        var events: [Event] = []
        let details: [(EventType, String)] = [
            (.impression, ""), (.click, "primary"), (.click, "secondary"), (.click, "body"), (.dismiss, "auto"), (.dismiss, "click"),
            (.dismiss, "swipe"), (.dismiss, "unknown"), (.error, "image_fetch"), (.error, "image_display"), (.error, "image_format"),
            (.error, "unspecified"), (.conversion, "zq_purchase"),
        ]
        for (day, platform) in [(1, "ios"), (2, "android"), (4, "web"), (9, "ios")] {
            for (offset, (type, detail)) in details.enumerated() {
                for campaign in [running, paused] {
                    events.append(Event(
                        id: UUID().uuidString, appID: shop, campaignID: campaign, type: type,
                        occurredAt: now.addingTimeInterval(-Double(day) * 86_400 + Double(offset) * 60), platform: platform,
                        installationID: "device-\(day)-\(offset % 3)", detail: detail, url: type == .click ? "https://example.com/shop" : nil,
                        test: false))
                }
            }
        }
        events.append(Event(id: UUID().uuidString, appID: shop, campaignID: running, type: .impression, occurredAt: now.addingTimeInterval(-3600),
                            platform: "ios", installationID: "iid-zq-qa", detail: "", url: nil, test: true))
        _ = try database.events.ingest(events, now: now)
    }
}
