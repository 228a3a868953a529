import Foundation
import GRDB
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
@testable import HeraldSQLite
import HeraldStorage
import Testing

/// The web origins an app allows: how a typed origin is read, and the app page's section that lists,
/// adds and removes them.
@Suite("Allowed web origins of an app")
struct WebOriginTests {
    @Test("An origin is read as browsers write it: lower case, without the default port or a trailing slash", arguments: [
        ("https://shop.example.com", "https://shop.example.com"),
        ("  HTTPS://Shop.Example.COM:443/ ", "https://shop.example.com"),
        ("https://shop.example.com:8443", "https://shop.example.com:8443"),
        ("https://shop.example.com:08443", "https://shop.example.com:8443"),
        ("http://localhost:3000", "http://localhost:3000"),
        ("http://LOCALHOST:80", "http://localhost"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://[::1]:5173", "http://[::1]:5173"),
        ("http://[0:0:0:0:0:0:0:1]", "http://[::1]"),
        ("https://[2001:DB8:0:0:1:0:0:1]", "https://[2001:db8::1:0:0:1]"),
        ("https://[::ffff:1.2.3.4]", "https://[::ffff:102:304]"),
        ("https://[1:0:0:2:0:0:0:3]", "https://[1:0:0:2::3]"),
        ("https://[1:2:3:4:5:6:7:0]", "https://[1:2:3:4:5:6:7:0]"),
        ("https://xn--mnchen-3ya.example", "https://xn--mnchen-3ya.example"),
        ("https://192.0.2.7:444", "https://192.0.2.7:444"),
    ])
    func normalization(typed: String, stored: String) throws {
        #expect(try WebOrigin.parse(typed).get().text == stored)
    }

    @Test("Each mistake is named", arguments: [
        ("", WebOrigin.Problem.empty), ("shop.example.com", .scheme), ("ftp://shop.example.com", .scheme),
        ("http://shop.example.com", .insecureHTTP), ("http://localhost.example", .insecureHTTP), ("https://shop.example.com/cart", .path),
        ("https://shop.example.com?x", .path), ("https://me@shop.example.com", .userInfo), ("https://*.example.com", .wildcard),
        ("https://münchen.example", .notASCII), ("https://shop..example", .host), ("https://127.1", .host),
        ("https://shop.example.com:0", .port), ("https://shop.example.com:65536", .port), ("null", .scheme),
        ("https://" + String(repeating: "a", count: 200) + ".example", .tooLong),
    ])
    func refusals(typed: String, problem: WebOrigin.Problem) {
        #expect(WebOrigin.parse(typed) == .failure(problem))
    }

    static func withShop() async throws -> (TestApp, TestBrowser, App) {
        let (app, admin) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.web], actor: .commandLine, now: app.clock.now)
        return (app, admin, shop)
    }

    @Test("The app page lists origins, adds one as typed (normalized), and removes it after a confirmation; each change is audited")
    func addAndRemove() async throws {
        // Given an app without origins
        let (app, admin, shop) = try await Self.withShop()
        let page = "/apps/\(shop.id)"
        let empty = admin.get(page).text
        #expect(empty.contains("Web origins"))
        #expect(empty.contains("No web origins yet"))
        #expect(empty.contains(#"<a href="/sdk/v1/demo">Open the web client demo</a>"#))

        // When an admin adds one in capitals with the default port
        let added = try admin.submit("\(page)/origins", from: page, ["origin": "HTTPS://Shop.Example.com:443/"])
        #expect(added.status == 303)
        #expect(added.headers["Location"] == page)

        // Then it is stored and listed as browsers write it, with a flash that names it
        #expect(try app.database.apps.origins(appID: shop.id).map(\.origin) == ["https://shop.example.com"])
        let listed = admin.get(page).text
        #expect(listed.contains(#"<code dir="ltr">https://shop.example.com</code>"#))
        #expect(!listed.contains("No web origins yet"))
        #expect(listed.contains("may now use the keys of"))

        // And the second time it is refused next to the field, with the typed text kept
        let again = try admin.submit("\(page)/origins", from: page, ["origin": "https://shop.example.com"])
        #expect(again.status == 422)
        let error = try #require(again.text.firstMatch(of: /<p class="field-error" id="field-origin-error">([^<]*)<\/p>/))
        #expect(error.output.1.hasSuffix(" is already allowed for this app."))
        #expect(again.text.contains(#"value="https://shop.example.com""#))

        // When it is removed: first a confirmation page, then the removal
        let allowed = try #require(try app.database.apps.origins(appID: shop.id).first)
        let confirm = admin.get("\(page)/origins/\(allowed.id)/remove")
        #expect(confirm.status == 200)
        #expect(confirm.text.contains("will no longer get the feed"))
        #expect(try app.database.apps.origins(appID: shop.id).count == 1)
        let removed = try admin.submit("\(page)/origins/\(allowed.id)/remove", from: "\(page)/origins/\(allowed.id)/remove", [:])
        #expect(removed.status == 303)
        #expect(try app.database.apps.origins(appID: shop.id).isEmpty)
        #expect(admin.get(page).text.contains("No web origins yet"))

        // And the audit log has both, naming the origin
        let entries = try app.database.auditLog.page(offset: 0, limit: 2)
        #expect(entries.map(\.action) == ["origin.remove", "origin.add"])
        #expect(entries.allSatisfy { $0.details == "https://shop.example.com" && $0.actor == "admin@example.com" })
        #expect(admin.get("/audit").text.contains("Web origin allowed"))

        // And another app's origin cannot be removed through this app's address
        let other = try app.database.apps.create(name: "Other", platforms: [.web], actor: .commandLine, now: app.clock.now)
        let theirs = try app.database.apps.addOrigin(appID: other.id, origin: "https://other.example", actor: .commandLine, now: app.clock.now)
        #expect(admin.get("\(page)/origins/\(theirs.id)/remove").status == 404)
        #expect(try admin.submit("\(page)/origins/\(theirs.id)/remove", from: "/apps/\(other.id)", [:]).status == 404)
        #expect(try app.database.apps.origins(appID: other.id).count == 1)
    }

    @Test("A mistyped origin is refused next to the field with what is wrong; nothing is stored", arguments: [
        ("http://shop.example.com", "http:// is allowed only for localhost"),
        ("https://shop.example.com/cart", "An origin has no path, query or fragment"),
        ("", "Enter an origin such as https://shop.example.com"),
    ])
    func refusedNextToTheField(typed: String, message: String) async throws {
        let (app, admin, shop) = try await Self.withShop()
        let refused = try admin.submit("/apps/\(shop.id)/origins", from: "/apps/\(shop.id)", ["origin": typed])
        #expect(refused.status == 422)
        let field = try #require(refused.text.firstMatch(of: /<div class="field field-invalid">\s*<label for="field-origin">[\s\S]*?<\/p>\s*<\/div>/))
        #expect(field.output.contains(message))
        #expect(field.output.contains(#"aria-invalid="true""#))
        #expect(refused.text.contains(##"<a href="#field-origin">"##))
        #expect(try app.database.apps.origins(appID: shop.id).isEmpty)
    }

    @Test("An app allows at most 50 origins; the 51st is refused with the limit")
    func limit() async throws {
        let (app, admin, shop) = try await Self.withShop()
        for index in 0..<AllowedOrigin.maxPerApp {
            _ = try AppRegistry(database: app.database).addOrigin(appID: shop.id, origin: "https://s\(index).example", actor: .commandLine, now: app.clock.now)
        }
        let refused = try admin.submit("/apps/\(shop.id)/origins", from: "/apps/\(shop.id)", ["origin": "https://one-more.example"])
        #expect(refused.status == 422)
        #expect(refused.text.contains("An app allows at most 50 web origins"))
        #expect(try app.database.apps.origins(appID: shop.id).count == AllowedOrigin.maxPerApp)
    }

    @Test("An origin and its audit line commit together: when the line cannot be written, no origin is stored")
    func auditLineInTheSameTransaction() async throws {
        let (app, admin, shop) = try await Self.withShop()
        try await app.database.pool.write { db in
            try db.execute(sql: "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit refused'); END")
        }
        let refused = try admin.submit("/apps/\(shop.id)/origins", from: "/apps/\(shop.id)", ["origin": "https://shop.example.com"])
        #expect(refused.status == 500)
        #expect(try app.database.apps.origins(appID: shop.id).isEmpty)
    }

    @Test("The origins section, its refusals and its confirmation speak the admin's language", arguments: ConsoleLanguage.offered.filter { $0 != .en })
    func translated(language: ConsoleLanguage) async throws {
        let (app, admin, shop) = try await Self.withShop()
        #expect(try admin.submit("/account", from: "/account", ["language": language.rawValue, "time_zone": "UTC"]).status == 303)
        let localizer = AdminPagesLocalizationTests.localization.localizer(language)
        let page = "/apps/\(shop.id)"
        let empty = admin.get(page)
        try AdminPagesLocalizationTests.expectTranslated(empty, language, "apps/show origins")
        for key in ["apps.show.origins", "apps.show.no_origins", "apps.show.origin", "apps.show.add_origin_submit", "apps.show.demo_link"] {
            #expect(empty.text.contains(Markup.escape(localizer(key))), "\(language.rawValue) lacks \(key)")
        }
        let refused = try admin.submit("\(page)/origins", from: page, ["origin": "http://shop.example.com"])
        try AdminPagesLocalizationTests.expectTranslated(refused, language, "apps/show origin refused")
        #expect(refused.text.contains(Markup.escape(localizer("apps.errors.origin_insecure"))))
        #expect(try admin.submit("\(page)/origins", from: page, ["origin": "https://shop.example.com"]).status == 303)
        let allowed = try #require(try app.database.apps.origins(appID: shop.id).first)
        let confirm = admin.get("\(page)/origins/\(allowed.id)/remove")
        try AdminPagesLocalizationTests.expectTranslated(confirm, language, "apps/remove_origin")
        #expect(confirm.text.contains(Markup.escape(localizer("apps.remove_origin.submit"))))
    }
}
