import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// What `PseudoConsole` visits: every page, error pages, forms that fail and forms that succeed, the CSV;
/// and what it finds there.
extension PseudoConsole {
    // MARK: Pages

    /// Values for each path parameter of a GET route, by the route's pattern. A route with a parameter this
    /// does not know fails the test, so a new page is never skipped in silence.
    func targets(for pattern: String) -> [String]? {
        let allCampaigns = campaigns.values.sorted().map(String.init)
        let fills: [String: [String]]
        switch pattern {
        case _ where !pattern.contains("{"): return [pattern]
        case _ where pattern.hasPrefix("/campaigns/{id}"): fills = ["id": allCampaigns]
        case "/apps/{id}": fills = ["id": [shop, emptyApp].map(String.init)]
        case "/apps/{id}/keys/{keyID}/revoke": return keyIDs.map { "/apps/\(shop)/keys/\($0)/revoke" }
        case "/apps/{id}/origins/{originID}/remove": return originIDs.map { "/apps/\(shop)/origins/\($0)/remove" }
        case "/apps/{id}/push/{provider}/remove": return ["apns", "fcm"].map { "/apps/\(shop)/push/\($0)/remove" }
        case "/users/{id}": fills = ["id": userIDs.map(String.init)]
        default: return nil
        }
        let targets = fills.reduce([pattern]) { targets, fill in
            targets.flatMap { target in fill.value.map { target.replacingOccurrences(of: "{\(fill.key)}", with: $0) } }
        }
        // A parameter left unfilled (a new route under /campaigns/{id}) is one this does not know.
        return targets.contains { $0.contains("{") } ? nil : targets
    }

    /// Skipped: the API, static files and the web client's scripts (not pages), and downloads (JSON exports,
    /// CSV: its header is checked apart). The web client's demo page is a page.
    static func isPage(_ target: String) -> Bool {
        let path = String(target.prefix { $0 != "?" })
        return !path.hasPrefix("/api/") && !path.hasPrefix("/public/") && !(path.hasPrefix("/sdk/") && path != "/sdk/v1/demo")
            && !["/healthz", "/readyz"].contains(path)
            && !path.hasSuffix(".csv") && !path.hasSuffix("/export")
    }

    /// Every GET route with its parameters filled, then every link and frame those pages lead to inside the
    /// console (filters, sorting, pagination, presets, frames): at most 4 addresses of one shape.
    func visitEveryPage() {
        var queue: [String] = []
        for route in app.application.routeTable where route.method == "GET" && Self.isPage(route.pattern) {
            guard let targets = targets(for: route.pattern) else {
                problems.append("GET \(route.pattern): the test does not know how to fill its parameters; add it to PseudoConsole.targets(for:)")
                continue
            }
            queue += targets.filter(Self.isPage)
        }
        // The gallery's frames with Persian sample text, so any Latin letter in them is the frame's own words.
        queue += Message.Layout.allCases.map { "/preview/gallery/frame?layout=\($0.rawValue)&lang=fa&orientation=landscape" }
        queue += ["/preview/gallery/frame?layout=slideup&lang=fa&edge=top", "/campaigns?q=nothing+matches+this", "/reports?from=2020-01-01&to=2020-01-02"]
        if let full = campaigns["Ẓvoll"] { queue.append("/campaigns/\(full)/preview/frame?orientation=landscape&device=tablet&theme=dark") }

        var seen: Set<String> = []
        var shapes: [String: Int] = [:]
        while !queue.isEmpty, seen.count < 600 {
            let target = queue.removeFirst()
            guard seen.insert(target).inserted else { continue }
            let response = admin.get(target, headers: [Self.acceptLanguage])
            let landed = follow("GET \(target)", response, admin)
            guard landed.headers["Content-Type"]?.hasPrefix("text/html") == true else { continue }
            for found in Self.links(in: landed.text) where Self.isPage(found) {
                // The gallery's English sample text is content in English on purpose: its Persian sample is checked instead.
                let link = found.hasPrefix("/preview/gallery/frame") ? found.replacingOccurrences(of: "lang=en", with: "lang=fa") : found
                guard !seen.contains(link) else { continue }
                let shape = Self.shape(of: link)
                guard shapes[shape, default: 0] < 4 else { continue }
                shapes[shape, default: 0] += 1
                queue.append(link)
            }
        }
    }

    /// Same-site links and frames of a page: `<a href="/…">` and `<iframe src="/…">`.
    static func links(in html: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: #"<(?:a|iframe)\b[^>]*?\s(?:href|src)="(/[^"/][^"]*|/)""#)
        return pattern.matches(in: html, range: NSRange(html.startIndex..., in: html)).compactMap {
            Range($0.range(at: 1), in: html).map { VisibleText.decodeEntities(String(html[$0])) }
        }
    }

    /// A link's path with its numbers generalized and its query's names: pages of one shape look alike.
    static func shape(of target: String) -> String {
        let parts = target.split(separator: "?", maxSplits: 1)
        let path = parts[0].split(separator: "/").map { $0.allSatisfy(\.isNumber) ? "#" : String($0) }.joined(separator: "/")
        let names = parts.count > 1 ? parts[1].split(separator: "&").map { $0.split(separator: "=").first.map(String.init) ?? "" }.sorted() : []
        return path + "?" + names.joined(separator: "&")
    }

    func visitErrorPages() {
        record("GET /nowhere (404)", admin.get("/nowhere", headers: [Self.acceptLanguage]))
        record("GET /campaigns/999999 (404)", admin.get("/campaigns/999999", headers: [Self.acceptLanguage]))
        record("GET /preview/gallery/frame?layout=nope (404)", admin.get("/preview/gallery/frame?layout=nope", headers: [Self.acceptLanguage]))
        record("DELETE /users (405)", admin.send(Request(method: "DELETE", target: "/users", headers: HTTPHeaders([Self.acceptLanguage]))))
        if let archived = campaigns["Ẓarchiv"] {
            record("GET /campaigns/\(archived)/edit (archived)", admin.get("/campaigns/\(archived)/edit", headers: [Self.acceptLanguage]))
        }
        record("POST /account without a CSRF token", Self.post(admin, "/account", [("language", Self.language), ("time_zone", "UTC")]))
        record("GET /reports?from=someday (bad range)", admin.get("/reports?from=someday&to=2026-13-45", headers: [Self.acceptLanguage]))

        // A visitor (the browser's language) and a viewer (the user's setting) meet errors and their own pages.
        let visitor = app.browser(address: "10.7.0.2")
        record("GET /nowhere as a visitor", visitor.get("/nowhere", headers: [Self.acceptLanguage]))
        record("GET /login", visitor.get("/login", headers: [Self.acceptLanguage]))
        submit("POST /login (wrong password)", visitor, "/login", from: "/login",
               [("email", "viewer@example.com"), ("password", "wrong password"), ("time_zone", "Asia/Tehran")])
        submit("POST /login (deactivated)", visitor, "/login", from: "/login",
               [("email", "gone@example.com"), ("password", Self.password), ("time_zone", "Asia/Tehran")])
        let viewer = app.browser(address: "10.7.0.3")
        submit("POST /login (viewer)", viewer, "/login", from: "/login",
               [("email", "viewer@example.com"), ("password", Self.password), ("time_zone", "Asia/Tehran")])
        for path in ["/users", "/apps", "/audit", "/campaigns/new", "/users/new"] {
            record("GET \(path) as a viewer (403)", viewer.get(path, headers: [Self.acceptLanguage]))
        }
        for path in ["/campaigns", "/reports", "/account"] + campaigns.values.sorted().map({ "/campaigns/\($0)" }) {
            record("GET \(path) as a viewer", viewer.get(path, headers: [Self.acceptLanguage]))
        }
    }

    // MARK: Forms

    func submitFailingForms() {
        let card = campaigns["Ẓcard"] ?? 0
        let app = String(shop)
        submit("POST /account (bad time zone)", admin, "/account", from: "/account", [("language", "xx"), ("time_zone", "Mars/Olympus_Mons")])
        submit("POST /account/password (wrong)", admin, "/account/password", from: "/account/password",
               [("current_password", "wrong"), ("password", "short"), ("password_confirmation", "other")])
        submit("POST /campaigns (empty card, publish)", admin, "/campaigns", from: "/campaigns/new",
               [("app", app), ("name", ""), ("message.layout", "card"), ("intent", "publish")])
        submit("POST /campaigns (no app)", admin, "/campaigns", from: "/campaigns/new", [("name", "Ẓneu"), ("message.layout", "modal"), ("intent", "draft")])
        submit("POST /campaigns (bad values)", admin, "/campaigns", from: "/campaigns/new", [
            ("app", app), ("name", "Ẓneu"), ("message.layout", "banner"), ("message.title.text", "Ẓneu"), ("message.backgroundColor", "#12"),
            ("message.action.url", "javascript:alert(1)"), ("message.dismiss.seconds", "999"), ("priority", "11"),
            ("schedule.start", "2020-01-01T00:00"), ("schedule.end", "2019-01-01T00:00"), ("schedule.timeZone", "Mars/Olympus"),
            ("triggers.0.event", "firebase_x"), ("triggers.0.filters.0.property", ""), ("triggers.0.filters.0.op", "gt"),
            ("triggers.0.filters.0.value", "many"), ("frequency.type", "every_n_days"), ("frequency.days", "0"),
            ("targeting.percentage", "200"), ("data.0.key", ""), ("data.0.value", "Ẓcode"), ("intent", "publish"),
        ])
        submit("POST /campaigns (add a trigger filter)", admin, "/campaigns", from: "/campaigns/new",
               [("app", app), ("message.layout", "card"), ("triggers.0.event", "purchase"), ("intent", "add:triggers.0.filters")])
        submit("POST /campaigns (add a data pair)", admin, "/campaigns", from: "/campaigns/new",
               [("app", app), ("message.layout", "card"), ("data.0.key", ""), ("data.0.value", ""), ("intent", "add:data")])
        submit("POST /campaigns/{id} (stale revision)", admin, "/campaigns/\(card)", from: "/campaigns/\(card)/edit",
               [("app", app), ("name", "Ẓcard"), ("message.layout", "modal"), ("message.title.text", "Ẓtitel"), ("revision", "1"), ("intent", "draft")])
        if let broken = campaigns["Ẓkaputt"] {
            submit("POST /campaigns/{id}/publish (problems)", admin, "/campaigns/\(broken)/publish", from: "/campaigns/\(broken)", [])
        }
        if let push = campaigns["Ẓpush"] {
            submit("POST /campaigns/{id}/publish (push, nobody to reach)", admin, "/campaigns/\(push)/publish", from: "/campaigns/\(push)", [])
        }
        submit("POST /campaigns (push, nobody to reach)", admin, "/campaigns", from: "/campaigns/new?channel=push", [
            ("channel", "push"), ("app", app), ("name", "Ẓpush"), ("push.title", "Ẓtitel"), ("schedule.startMode", "publish"),
            ("schedule.endMode", "never"), ("schedule.timeZone", "UTC"), ("intent", "publish"),
        ])
        submit("POST /campaigns/preview (problems)", admin, "/campaigns/preview", from: "/campaigns/new",
               [("app", app), ("message.layout", "card"), ("message.title.text", "Ẓtitel"), ("preview.device", "tablet")])
        submit("POST /users (invalid)", admin, "/users", from: "/users/new",
               [("name", ""), ("email", "nobody"), ("role", "editor"), ("password", "short")])
        submit("POST /users (no role)", admin, "/users", from: "/users/new", [("name", "Ẓneu"), ("email", "new@example.com"), ("role", "king")])
        let editor = userIDs.first { (try? user(id: $0))?.role == .editor } ?? 0
        submit("POST /users/{id}/password (short)", admin, "/users/\(editor)/password", from: "/users/\(editor)", [("password", "short")])
        submit("POST /users/{id}/deactivate (unconfirmed)", admin, "/users/\(editor)/deactivate", from: "/users/\(editor)", [])
        submit("POST /users/{id}/role (bad role)", admin, "/users/\(editor)/role", from: "/users/\(editor)", [("role", "king")])
        let me = userIDs.first { (try? user(id: $0))?.email == "admin@example.com" } ?? 0
        submit("POST /users/{id}/role (last admin)", admin, "/users/\(me)/role", from: "/users/\(me)", [("role", "viewer")])
        submit("POST /apps (invalid)", admin, "/apps", from: "/apps/new", [("name", "")])
        submit("POST /apps/{id}/settings (invalid)", admin, "/apps/\(shop)/settings", from: "/apps/\(shop)", [("minIntervalSeconds", "-5")])
        submit("POST /apps/{id}/devices (invalid)", admin, "/apps/\(shop)/devices", from: "/apps/\(shop)", [("deviceName", ""), ("installationId", "")])
        submit("POST /apps/{id}/devices (taken)", admin, "/apps/\(shop)/devices", from: "/apps/\(shop)",
               [("deviceName", "Ẓpixel"), ("installationId", "iid-zq-qa")])
        submit("POST /apps/{id}/push/apns (invalid)", admin, "/apps/\(shop)/push/apns", from: "/apps/\(shop)",
               [("apnsKey", "Ẓnot a key"), ("apnsKeyID", "Ẓ"), ("apnsTeamID", "ẒTEAM"), ("apnsTopic", "")])
        submit("POST /apps/{id}/push/fcm (invalid)", admin, "/apps/\(shop)/push/fcm", from: "/apps/\(shop)", [("fcmServiceAccount", "Ẓ{}")])
        submit("POST /apps/{id}/push/settings (invalid)", admin, "/apps/\(shop)/push/settings", from: "/apps/\(shop)", [("pushDailyCap", "1000")])
        submit("POST /apps/{id}/keys (invalid)", admin, "/apps/\(shop)/keys", from: "/apps/\(shop)", [("name", "")])
        for (problem, origin) in [("invalid", "ftp://zq.example"), ("insecure", "http://zq.example"), ("path", "https://zq.example/shop"),
                                  ("taken", "https://shop.zq.example")] {
            submit("POST /apps/{id}/origins (\(problem))", admin, "/apps/\(shop)/origins", from: "/apps/\(shop)", [("origin", origin)])
        }
        importFile("POST /campaigns/import (not JSON)", app: app, dryRun: true, file: "this is not JSON")
        importFile("POST /campaigns/import (invalid campaign)", app: app, dryRun: true,
                   file: #"{"schemaVersion":1,"campaigns":[{"app":1,"name":"","priorty":3,"message":{"layout":"card"}}]}"#)
        importFile("POST /campaigns/import (no app)", app: "", dryRun: true, file: #"[]"#)
    }

    func user(id: Int64) throws -> User? { try app.database.users.find(id: id) }

    static func required<Value>(_ value: Value?, _ what: String) throws -> Value {
        guard let value else { throw TestFailure("\(what) is missing") }
        return value
    }

    /// Posts an import form (multipart, as the browser sends a file).
    @discardableResult
    func importFile(_ label: String, app: String, dryRun: Bool, file: String) -> Response {
        let page = admin.get("/campaigns/import", headers: [Self.acceptLanguage])
        guard let token = TestBrowser.csrfToken(in: page.text) else {
            problems.append("\(label): no csrf_token on /campaigns/import (status \(page.status))")
            return page
        }
        let boundary = "zq-boundary-7f3a"
        var body = ""
        for (name, value) in [("csrf_token", token), ("app", app), ("dryRun", dryRun ? "true" : "false")] {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"zq.json\"\r\nContent-Type: application/json\r\n\r\n\(file)\r\n--\(boundary)--\r\n"
        let response = admin.send(Request(
            method: "POST", target: "/campaigns/import",
            headers: HTTPHeaders([("Content-Type", "multipart/form-data; boundary=\(boundary)"), Self.acceptLanguage]), body: Array(body.utf8)))
        return follow(label, response, admin)
    }

    /// Changes that succeed, each leading to a page with its flash message.
    func submitSucceedingForms() {
        let card = campaigns["Ẓcard"] ?? 0
        let shopID = String(shop)
        submit("POST /account", admin, "/account", from: "/account", [("language", Self.language), ("time_zone", "Europe/Berlin")])
        lastLocation = nil
        submit("POST /campaigns/{id}/duplicate", admin, "/campaigns/\(card)/duplicate", from: "/campaigns/\(card)", [])
        if let copy = lastLocation.flatMap(Self.campaignID(in:)), copy > (campaigns.values.max() ?? 0) {
            for action in ["publish", "pause", "resume", "stop", "archive"] {
                submit("POST /campaigns/{id}/\(action)", admin, "/campaigns/\(copy)/\(action)", from: "/campaigns/\(copy)", [])
            }
        } else {
            problems.append("POST /campaigns/{id}/duplicate: did not lead to the copy's page (\(lastLocation ?? "no redirect"))")
        }
        submit("POST /campaigns (draft)", admin, "/campaigns", from: "/campaigns/new",
               [("app", shopID), ("name", "Ẓneu"), ("message.layout", "modal"), ("message.title.text", "Ẓneu"), ("intent", "draft")])
        submit("POST /campaigns (publish)", admin, "/campaigns", from: "/campaigns/new", [
            ("app", shopID), ("name", "Ẓneu"), ("message.layout", "modal"), ("message.title.text", "Ẓneu"), ("triggers.0.event", "app_launch"),
            ("frequency.type", "once"), ("priority", "5"), ("intent", "publish"),
        ])
        if let draft = campaigns["Ẓentwurf"] {
            record("GET /campaigns/{id}/delete", admin.get("/campaigns/\(draft)/delete", headers: [Self.acceptLanguage]))
            submit("POST /campaigns/{id}/delete", admin, "/campaigns/\(draft)/delete", from: "/campaigns/\(draft)/delete", [("confirm", "yes")])
        }
        submit("POST /users", admin, "/users", from: "/users/new",
               [("name", "Ẓneu"), ("email", "new@example.com"), ("role", "editor"), ("password", Self.password)])
        if let created = try? app.database.users.find(email: "new@example.com"), let id = created.id {
            submit("POST /users/{id}/role", admin, "/users/\(id)/role", from: "/users/\(id)", [("role", "viewer")])
            submit("POST /users/{id}/password", admin, "/users/\(id)/password", from: "/users/\(id)", [("password", "another good passphrase")])
            submit("POST /users/{id}/deactivate", admin, "/users/\(id)/deactivate", from: "/users/\(id)", [("confirm", "yes")])
            submit("POST /users/{id}/activate", admin, "/users/\(id)/activate", from: "/users/\(id)", [])
        }
        submit("POST /apps", admin, "/apps", from: "/apps/new", [("name", "Ẓneu"), ("platforms", "ios"), ("platforms", "web")])
        submit("POST /apps/{id}/settings", admin, "/apps/\(shop)/settings", from: "/apps/\(shop)", [("minIntervalSeconds", "45")])
        submit("POST /apps/{id}/devices", admin, "/apps/\(shop)/devices", from: "/apps/\(shop)", [("deviceName", "Ẓgerät"), ("installationId", "iid-zq-2")])
        if let device = try? app.database.apps.testDevices(appID: shop).first(where: { $0.installationID == "iid-zq-2" }) {
            submit("POST /apps/{id}/devices/{deviceID}/remove", admin, "/apps/\(shop)/devices/\(device.id)/remove", from: "/apps/\(shop)", [])
        }
        submit("POST /apps/{id}/keys", admin, "/apps/\(shop)/keys", from: "/apps/\(shop)",
               [("name", "Ẓneu"), ("scopes", "feed:read"), ("scopes", "events:write")])
        submit("POST /apps/{id}/origins", admin, "/apps/\(shop)/origins", from: "/apps/\(shop)", [("origin", "https://new.zq.example")])
        if let added = try? app.database.apps.origins(appID: shop).first(where: { $0.origin == "https://new.zq.example" }) {
            submit("POST /apps/{id}/origins/{originID}/remove", admin, "/apps/\(shop)/origins/\(added.id)/remove",
                   from: "/apps/\(shop)/origins/\(added.id)/remove", [])
        }
        if let key = keyIDs.last {
            submit("POST /apps/{id}/keys/{keyID}/revoke", admin, "/apps/\(shop)/keys/\(key)/revoke", from: "/apps/\(shop)/keys/\(key)/revoke", [])
        }
        let export = admin.get("/campaigns/\(card)/export").text
        importFile("POST /campaigns/import (dry run)", app: shopID, dryRun: true, file: export)
        importFile("POST /campaigns/import", app: shopID, dryRun: false, file: export)
        submit("POST /account/password", admin, "/account/password", from: "/account/password",
               [("current_password", Self.password), ("password", "a new long passphrase"), ("password_confirmation", "a new long passphrase")])
        submit("POST /logout", admin, "/logout", from: "/account", [])
    }

    static func campaignID(in link: String) -> Int64? {
        let parts = link.split(separator: "/")
        guard parts.count == 2, parts[0] == "campaigns" else { return nil }
        return Int64(parts[1])
    }

    /// The report's CSV: its header row is for people (a spreadsheet's column titles), so it is translated.
    func visitCSV() {
        guard let card = campaigns["Ẓcard"] else { return }
        let signedIn = app.browser(address: "10.7.0.4")
        _ = try? Self.submit(signedIn, "/login", from: "/login", [("email", "viewer@example.com"), ("password", Self.password), ("time_zone", "UTC")])
        let csv = signedIn.get("/campaigns/\(card)/report.csv", headers: [Self.acceptLanguage])
        let header = csv.text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        if csv.status != 200 || header.isEmpty {
            problems.append("GET /campaigns/{id}/report.csv: status \(csv.status), no header row")
        }
        csvHeader = header
    }


    // MARK: Findings

    func findings() -> [PseudoFinding] {
        let words = UntranslatedWords(seeded: seeded)
        var found: [PseudoFinding] = []
        var reported: Set<String> = []
        for (label, response, expectsLanguage) in visited {
            guard response.headers["Content-Type"]?.hasPrefix("text/html") == true else { continue }
            let isFrame = label.contains("/frame") || label.contains("/campaigns/preview") || label.contains("/preview/blank")
            let (lang, _) = VisibleText.htmlLanguage(of: response.text)
            if expectsLanguage, !isFrame, lang != Self.language {
                found.append(PseudoFinding(page: label, piece: VisibleText.Piece(attribute: "html lang", text: lang ?? "(none)", isCode: false), words: []))
            }
            var depth = 0  // inside how many ⟦…⟧ the page's text is, from one text node to the next
            for piece in VisibleText.pieces(of: response.text) {
                let untranslated: [String]
                if piece.attribute == nil {
                    (untranslated, depth) = words.words(in: piece.text, depth: depth, inTemplate: piece.inTemplate)
                } else {
                    untranslated = words.words(in: piece.text, depth: 0, inTemplate: piece.inTemplate).words
                }
                guard !piece.isCode, !untranslated.isEmpty, reported.insert(label + "\u{0}" + piece.description).inserted else { continue }
                found.append(PseudoFinding(page: label, piece: piece, words: untranslated))
            }
        }
        for cell in csvHeader.split(separator: ",") {
            let text = cell.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            if !words.words(in: text).isEmpty {
                found.append(PseudoFinding(page: "GET /campaigns/{id}/report.csv header", piece: VisibleText.Piece(attribute: nil, text: text, isCode: false),
                                           words: words.words(in: text)))
            }
        }
        return found
    }
}
