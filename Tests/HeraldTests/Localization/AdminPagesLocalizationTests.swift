import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import Testing

/// The admin pages (apps, users, audit), the account pages and the error pages in Persian, Arabic and
/// Japanese: translated headings, and none of the English words their catalogs translate.
@Suite("Admin and account pages in other languages")
struct AdminPagesLocalizationTests {
    static let localization = LocalizationTests.localization
    static let languages: [ConsoleLanguage] = [.fa, .ar, .ja]
    /// The catalog sections these pages draw from.
    static let sections = ["apps.", "users.", "audit.", "accounts.", "errors.", "notices.", "roles."]

    /// English strings of `sections` whose translation in `language` differs: what must not be on its pages.
    static func englishWords(besides language: ConsoleLanguage) throws -> [String] {
        let english = try #require(localization.catalogs[.en])
        let translated = try #require(localization.catalogs[language])
        return english.entries.compactMap { key, entry -> String? in
            guard sections.contains(where: key.hasPrefix), case .text(let text) = entry, !text.contains("{"),
                  case .text(let other)? = translated.entries[key], other != text else { return nil }
            return text
        }
    }

    /// Fails for each English catalog string on `page`: as a whole element's text, or anywhere when long.
    static func expectTranslated(_ page: Response, _ language: ConsoleLanguage, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let html = page.text
        #expect(html.contains(#"<html lang="\#(language.rawValue)""#), "\(name) is not in \(language.rawValue)", sourceLocation: sourceLocation)
        for english in try englishWords(besides: language) {
            let found = html.contains(">\(english)<") || (english.count >= 16 && html.contains(english))
            #expect(!found, "\(language.rawValue) \(name) shows “\(english)”", sourceLocation: sourceLocation)
        }
    }

    static func heading(_ key: String, _ language: ConsoleLanguage) -> String {
        localization.localizer(language)(key)
    }

    @Test("Apps, users, audit, password and error pages of a signed-in admin follow the admin's language", arguments: languages)
    func signedInPages(language: ConsoleLanguage) async throws {
        let (app, admin) = try await TestApp.withAdmin()
        let saved = try admin.submit("/account", from: "/account", ["language": language.rawValue, "time_zone": "Asia/Tehran"])
        #expect(saved.status == 303)

        // Apps: the list, a refused form, the app, a new key, the revocation
        let refused = try admin.submit("/apps", from: "/apps/new", ["name": ""])
        #expect(refused.status == 422)
        try Self.expectTranslated(refused, language, "apps/new refused")
        #expect(refused.text.contains(Self.heading("errors.summary_heading", language)))
        #expect(refused.text.contains(Self.heading("apps.errors.name_required", language)))
        let registered = try admin.submit("/apps", from: "/apps/new", pairs: [("name", "فروشگاه"), ("platforms", "ios"), ("platforms", "web")])
        let location = try #require(registered.headers["Location"])
        let show = admin.get(location)
        try Self.expectTranslated(show, language, "apps/show")
        #expect(show.text.contains(Self.heading("apps.show.api_keys", language)))
        #expect(show.text.contains(Self.heading("apps.platforms.web", language)))
        let key = try admin.submit("\(location)/keys", from: location, pairs: [("name", "iOS"), ("scopes", "feed:read")])
        #expect(key.status == 201)
        try Self.expectTranslated(key, language, "apps/key_created")
        #expect(key.text.contains(#"<body data-strings="{&quot;copied&quot;:&quot;\#(Self.heading("script.copied", language))&quot;}">"#))
        let keyID = try #require(try app.database.apiKeys.all(appID: Int64(location.split(separator: "/").last.map(String.init) ?? "") ?? 0).first?.id)
        let revoke = admin.get("\(location)/keys/\(keyID)/revoke")
        try Self.expectTranslated(revoke, language, "apps/revoke_key")
        let apps = admin.get("/apps")
        try Self.expectTranslated(apps, language, "apps")
        #expect(apps.text.contains("<h1>\(Self.heading("apps.index.title", language))</h1>"))
        #expect(apps.text.contains("<time datetime=\"2026-09-21T"))

        // Users: the list, the form, a user's page
        let users = admin.get("/users")
        try Self.expectTranslated(users, language, "users")
        #expect(users.text.contains("<h1>\(Self.heading("users.index.title", language))</h1>"))
        let newUser = try admin.submit("/users", from: "/users/new", ["name": "", "email": "x", "password": "short", "role": "editor"])
        #expect(newUser.status == 422)
        try Self.expectTranslated(newUser, language, "users/new refused")
        #expect(newUser.text.contains(Self.heading("accounts.errors.email_invalid", language)))
        try app.createUser(email: "eddie@example.com", role: .editor)
        let eddie = try #require(try app.database.users.find(email: "eddie@example.com")?.id)
        let edit = try admin.submit("/users/\(eddie)/deactivate", from: "/users/\(eddie)", [:])
        #expect(edit.status == 422)
        try Self.expectTranslated(edit, language, "users/edit refused")
        #expect(edit.text.contains(Self.heading("users.errors.confirm_deactivation", language)))

        // Audit: translated actions, times in the user's zone
        let audit = admin.get("/audit")
        try Self.expectTranslated(audit, language, "audit")
        #expect(audit.text.contains("<h1>\(Self.heading("audit.title", language))</h1>"))
        #expect(audit.text.contains(Self.heading("audit.actions.key_create", language)))
        #expect(audit.text.contains(#"title="key.create""#))
        #expect(audit.text.contains(Self.localization.localizer(language, timeZone: TimeZone(identifier: "Asia/Tehran")!).dateTime(app.clock.now)))

        // Password
        let password = try admin.submit("/account/password", from: "/account/password", ["current_password": "wrong", "password": "x"])
        #expect(password.status == 422)
        try Self.expectTranslated(password, language, "account/password refused")
        #expect(password.text.contains("<h1>\(Self.heading("accounts.password_page.title", language))</h1>"))

        // Error pages: 404 (no route), 404 (no such app), 405, CSRF
        for (target, status) in [("/nowhere", 404), ("/apps/999999", 404)] {
            let missing = admin.get(target)
            #expect(missing.status == status)
            try Self.expectTranslated(missing, language, target)
            #expect(missing.text.contains("<h1>\(Self.heading("errors.status.404", language))</h1>"))
            #expect(missing.text.contains(Self.heading("errors.not_found", language)))
            #expect(missing.text.contains(Self.heading("errors.go_to_campaigns", language)))
        }
        let wrongMethod = admin.send(Request(method: "PUT", target: "/apps"))
        #expect(wrongMethod.status == 405)
        try Self.expectTranslated(wrongMethod, language, "405")
        let forged = admin.post("/apps", [("name", "x")])
        #expect(forged.status == 403)
        try Self.expectTranslated(forged, language, "csrf")
        #expect(forged.text.contains(Self.heading("errors.csrf", language)))
    }

    /// The text of `html` that no catalog string made: pseudo-language pages mark every catalog string
    /// ⟦…⟧, so what is left unmarked (outside user text, codes, times and the brand) was written in English.
    static func unmarkedText(_ html: String) -> [String] {
        var text = html
        for pattern in [#"<script[^>]*>.*?</script>"#, #"<code[^>]*>.*?</code>"#, #"<time[^>]*>.*?</time>"#, #"<bdi>.*?</bdi>"#,
                        #"<(\w+)[^>]*dir="auto"[^>]*>.*?</\1>"#, #"<a class="brand"[^>]*>Herald</a>"#, #"<title>.*?</title>"#] {
            text = text.replacing(try! Regex(pattern).dotMatchesNewlines(), with: "")
        }
        let labels = text.matches(of: try! Regex(#"aria-label="([^"]*)""#)).compactMap { $0.output[1].substring.map(String.init) }
        let chunks = text.split(separator: try! Regex("<[^>]*>")).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } + labels
        return chunks.filter { chunk in
            !chunk.isEmpty && !chunk.contains("⟦") && chunk.contains(where: \.isLetter)
        }
    }

    @Test("In the pseudo-language, every word on the admin and account pages comes from the catalog")
    func pseudoLanguage() async throws {
        #expect(Self.unmarkedText(#"<p>Hello</p><p>⟦Ḗ⟧</p><code>x</code><td dir="auto">Sara</td><nav aria-label="Main">"#) == ["Hello", "Main"])
        let (app, admin) = try await TestApp.withAdmin(configure: { $0.pseudoLocale = true })
        #expect(try admin.submit("/account", from: "/account", ["language": "en-XA", "time_zone": "UTC"]).status == 303)
        let registered = try admin.submit("/apps", from: "/apps/new", pairs: [("name", "Shop"), ("platforms", "ios")])
        let location = try #require(registered.headers["Location"])
        let key = try admin.submit("\(location)/keys", from: location, pairs: [("name", "CI"), ("scopes", "feed:read")])
        try app.createUser(email: "eddie@example.com", role: .editor)
        let eddie = try #require(try app.database.users.find(email: "eddie@example.com")?.id)
        let pages: [(String, Response)] = [
            ("apps", admin.get("/apps")), ("apps/new", try admin.submit("/apps", from: "/apps/new", ["name": ""])),
            ("apps/show", try admin.submit("\(location)/keys", from: location, ["name": ""])), ("key created", key),
            ("revoke", admin.get("\(location)/keys/1/revoke")), ("users", admin.get("/users")),
            ("users/new", try admin.submit("/users", from: "/users/new", ["email": "x"])),
            ("users/edit", try admin.submit("/users/\(eddie)/deactivate", from: "/users/\(eddie)", [:])),
            ("users/edit self", admin.get("/users/1")), ("audit", admin.get("/audit")),
            ("password", try admin.submit("/account/password", from: "/account/password", ["current_password": "x"])),
            ("404", admin.get("/nowhere")), ("405", admin.send(Request(method: "PUT", target: "/apps"))),
            ("csrf", admin.post("/apps", [("name", "x")])),
        ]
        // Words the pages show that are not the console's: names, emails, stored audit text, product names
        let data: Set<String> = ["Shop", "CI", "Ada Admin", "admin@example.com", "eddie@example.com", "iOS", "feed:read", "events:write",
                                 "campaigns:read", "campaigns:write", "installations:delete", "command line", "visitor"]
        for (name, page) in pages {
            let unmarked = Self.unmarkedText(page.text).filter { chunk in !data.contains(chunk) && !chunk.hasPrefix("app ") && !chunk.hasPrefix("user ") }
            #expect(unmarked.isEmpty, "\(name): \(unmarked)")
        }
    }

    @Test("In the pseudo-language, setup and sign-in pages and their refusals are all catalog strings")
    func pseudoLanguageVisitor() async throws {
        let app = try await TestApp(configure: { $0.pseudoLocale = true })
        let visitor = app.browser()
        let pseudo = [("Accept-Language", "en-XA")]
        func post(_ target: String, _ fields: [(String, String)], from page: Response) throws -> Response {
            let token = try #require(TestBrowser.csrfToken(in: page.text))
            return visitor.send(Request(
                method: "POST", target: target, headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")] + pseudo),
                body: Array(FormData([("csrf_token", token)] + fields).urlencoded.utf8)))
        }
        let setup = visitor.get("/setup", headers: pseudo)
        let refused = try post("/setup", [("email", "x")], from: setup)
        #expect(refused.status == 422)
        let created = try post("/setup", [("name", "Ada"), ("email", "ada@example.com"), ("password", "correct horse battery"),
                                          ("password_confirmation", "correct horse battery")], from: setup)
        #expect(created.status == 303)
        _ = visitor.post("/logout", [("csrf_token", TestBrowser.csrfToken(in: visitor.get("/campaigns").text) ?? "")])
        let login = visitor.get("/login?signed_out=1", headers: pseudo)
        let failed = try post("/login", [("email", "ada@example.com"), ("password", "wrong")], from: login)
        #expect(failed.status == 401)
        for (name, page) in [("setup", setup), ("setup refused", refused), ("login", login), ("login failed", failed)] {
            #expect(page.text.contains(#"<html lang="en-XA""#), "\(name)")
            #expect(Self.unmarkedText(page.text).isEmpty, "\(name): \(Self.unmarkedText(page.text))")
        }
    }

    @Test("The script's strings are the catalog's script section as JSON, escaped in the page like any attribute")
    func scriptStrings() async throws {
        let catalog = StringCatalog(language: .en, entries: [
            "script.copied": .text(#"Copied" onmouseover="x"><script>alert(1)</script>"#), "apps.index.title": .text("Apps"),
        ])
        let decoded = try JSONSerialization.jsonObject(with: Data(catalog.scriptStrings.utf8)) as? [String: String]
        #expect(decoded == ["copied": #"Copied" onmouseover="x"><script>alert(1)</script>"#])
        let (_, admin) = try await TestApp.withAdmin()
        let page = admin.get("/apps").text
        #expect(page.contains(#"<body data-strings="{&quot;copied&quot;:&quot;Copied&quot;}">"#))
    }

    @Test("A viewer's forbidden page and the sign-in throttle speak the user's language", arguments: languages)
    func forbiddenAndThrottle(language: ConsoleLanguage) async throws {
        let (app, _) = try await TestApp.withAdmin()
        try app.createUser(email: "vera@example.com", role: .viewer)
        let viewer = app.browser(address: "10.1.0.1")
        #expect(try viewer.submit("/login", from: "/login", ["email": "vera@example.com", "password": "correct horse battery"]).status == 303)
        #expect(try viewer.submit("/account", from: "/account", ["language": language.rawValue, "time_zone": "UTC"]).status == 303)
        let forbidden = viewer.get("/users")
        #expect(forbidden.status == 403)
        try Self.expectTranslated(forbidden, language, "403")
        #expect(forbidden.text.contains(Self.heading("errors.forbidden", language)))

        let wait = Self.localization.localizer(language)
        #expect(LoginThrottle.message(waiting: 90, wait) == wait.plural("accounts.throttle.wait", count: 2))
        #expect(LoginThrottle.message(waiting: .infinity, wait) == wait.plural("accounts.throttle.wait", count: 1440))
    }

    @Test("Sign-in and setup follow the browser's language, notices and refusals included", arguments: languages)
    func visitorPages(language: ConsoleLanguage) async throws {
        let accept = [("Accept-Language", language.rawValue)]
        let app = try await TestApp()
        let visitor = app.browser()
        let setup = visitor.get("/setup", headers: accept)
        try Self.expectTranslated(setup, language, "setup")
        #expect(setup.text.contains("<h1>\(Self.heading("accounts.setup.title", language))</h1>"))
        let token = try #require(TestBrowser.csrfToken(in: setup.text))
        let refused = visitor.send(Request(
            method: "POST", target: "/setup",
            headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")] + accept),
            body: Array(FormData([("csrf_token", token), ("name", ""), ("email", "nope"), ("password", "a"), ("password_confirmation", "b")]).urlencoded.utf8)))
        #expect(refused.status == 422)
        try Self.expectTranslated(refused, language, "setup refused")
        for key in ["accounts.errors.name_required", "accounts.errors.email_invalid", "accounts.errors.passwords_differ"] {
            #expect(refused.text.contains(Self.heading(key, language)), "\(key)")
        }

        let (other, admin) = try await TestApp.withAdmin()
        _ = admin.post("/logout", [("csrf_token", TestBrowser.csrfToken(in: admin.get("/campaigns").text) ?? "")])
        let signedOut = admin.get("/login?signed_out=1", headers: accept)
        try Self.expectTranslated(signedOut, language, "login")
        #expect(signedOut.text.contains("<h1>\(Self.heading("accounts.login.heading", language))</h1>"))
        #expect(signedOut.text.contains(Self.heading("notices.signed_out", language)))
        let loginToken = try #require(TestBrowser.csrfToken(in: signedOut.text))
        let failed = admin.send(Request(
            method: "POST", target: "/login",
            headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")] + accept),
            body: Array(FormData([("csrf_token", loginToken), ("email", "admin@example.com"), ("password", "wrong password")]).urlencoded.utf8)))
        #expect(failed.status == 401)
        try Self.expectTranslated(failed, language, "login failed")
        #expect(failed.text.contains(Self.heading("accounts.login.failed", language)))
        _ = other
    }
}
