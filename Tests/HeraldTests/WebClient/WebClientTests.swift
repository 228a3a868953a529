import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import TestSupport
import Testing

/// `herald.js` served to websites from its one source (a classic script and an ES module), and the demo
/// page that loads it. The source here is a small fixture: the real client is tested on its own.
@Suite("The web client's scripts and its demo page")
struct WebClientTests {
    static let source = "const Herald = { start: async (options) => ({ installationId: \"iid-fixture\" }) };\n"

    /// An application whose web client folder holds `source` (or nothing, when nil).
    static func app(source: String?, logs: LogRecorder = LogRecorder()) async throws -> (TestApp, TemporaryFolder) {
        let folder = try TemporaryFolder()
        if let source {
            try Data(source.utf8).write(to: folder.url.appendingPathComponent("herald.js"))
        }
        let app = try await TestApp(logger: logs.logger) { $0.webClientFolder = folder.url }
        return (app, folder)
    }

    @Test("Both variants are made from the source once: a classic script that sets globalThis.Herald, and a module exporting it")
    func variants() async throws {
        let (app, folder) = try await Self.app(source: Self.source)
        let classic = app.respond(Request(method: "GET", target: "/sdk/v1/herald.js"))
        #expect(classic.status == 200)
        #expect(classic.text == "(function () {\n" + Self.source + "\nglobalThis.Herald = Herald;\n})();")
        let module = app.respond(Request(method: "GET", target: "/sdk/v1/herald.mjs"))
        #expect(module.status == 200)
        #expect(module.text == Self.source + "\nexport { Herald };\nexport default Herald;")

        // Changing the file later changes nothing until a restart: the scripts were made at start
        try Data("const Herald = 2;".utf8).write(to: folder.url.appendingPathComponent("herald.js"))
        #expect(app.respond(Request(method: "GET", target: "/sdk/v1/herald.js")).text == classic.text)
    }

    @Test("The scripts are cacheable JavaScript any site may load (as a module too), with strong ETags and 304s")
    func headers() async throws {
        let (app, _) = try await Self.app(source: Self.source)
        var etags: Set<String> = []
        for path in ["/sdk/v1/herald.js", "/sdk/v1/herald.mjs"] {
            let response = app.respond(Request(method: "GET", target: path, headers: HTTPHeaders([("Origin", "https://shop.example.com")])))
            #expect(response.headers["Content-Type"] == "text/javascript; charset=utf-8")
            #expect(response.headers["Cache-Control"] == "public, max-age=3600")
            #expect(response.headers["Access-Control-Allow-Origin"] == "*")
            #expect(response.headers["Cross-Origin-Resource-Policy"] == "cross-origin")
            #expect(response.headers["X-Content-Type-Options"] == "nosniff")
            let etag = try #require(response.headers["ETag"])
            #expect(etag.wholeMatch(of: /"[0-9a-f]{32}"/) != nil, "a strong ETag: \(etag)")
            etags.insert(etag)
            let again = app.respond(Request(method: "GET", target: path, headers: HTTPHeaders([("If-None-Match", etag)])))
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.headers["ETag"] == etag)
            #expect(again.headers["Access-Control-Allow-Origin"] == "*")
            #expect(app.respond(Request(method: "GET", target: path, headers: HTTPHeaders([("If-None-Match", "W/" + etag)]))).status == 304)
            #expect(app.respond(Request(method: "GET", target: path, headers: HTTPHeaders([("If-None-Match", "\"other\"")]))).status == 200)
            let head = app.respond(Request(method: "HEAD", target: path))
            #expect(head.status == 200)
        }
        #expect(etags.count == 2)
    }

    @Test("Without the source the server still starts: the scripts answer 404 and the log says where the file was looked for")
    func missingSource() async throws {
        let logs = LogRecorder()
        let (app, folder) = try await Self.app(source: nil, logs: logs)
        for path in ["/sdk/v1/herald.js", "/sdk/v1/herald.mjs"] {
            let response = app.respond(Request(method: "GET", target: path))
            #expect(response.status == 404)
            #expect(response.text.contains("started without the web client's source"))
            #expect(!response.text.contains(folder.url.path))
        }
        #expect(logs.all.contains { $0.contains(" level=warning ") && $0.contains(folder.url.appendingPathComponent("herald.js").path) })
        #expect(app.respond(Request(method: "GET", target: "/sdk/v1/demo")).status == 200)
    }

    @Test("A source that is not UTF-8 stops the start with a message naming the file")
    func brokenSource() async throws {
        let folder = try TemporaryFolder()
        try Data([0x63, 0x6F, 0xFF, 0xFE]).write(to: folder.url.appendingPathComponent("herald.js"))
        await #expect { _ = try await TestApp { $0.webClientFolder = folder.url } } throws: { error in
            "\(error)".contains("herald.js is not UTF-8")
        }
    }

    @Test("The demo page is public, loads herald.js and its own script (no inline script), and names the scopes a key needs")
    func demoPage() async throws {
        let (app, _) = try await Self.app(source: Self.source)
        // No user exists yet: the demo still answers, and sets no cookie
        let page = app.respond(Request(method: "GET", target: "/sdk/v1/demo"))
        #expect(page.status == 200)
        #expect(page.headers["Set-Cookie"] == nil)
        #expect(page.headers["Vary"] == "Accept-Language, Cookie")
        let html = page.text
        #expect(html.contains(#"<script src="/sdk/v1/herald.js" defer></script>"#))
        #expect(html.contains(#"<script src="/public/js/demo.js" defer></script>"#))
        #expect(html.matches(of: /<script(?![^>]*\bsrc=)[^>]*>/).isEmpty, "an inline script")
        #expect(html.contains("<code>feed:read</code> <code>events:write</code>"))
        #expect(html.contains(#"data-key-storage="herald.demo.apiKey""#))
        #expect(html.contains(#"data-copy="demo-installation""#))
        #expect(html.contains(#"data-fire="app_launch""#))
        let policy = try #require(page.headers["Content-Security-Policy"])
        // The console's own strict policy: herald.js needs no inline styles (adopted style sheets, CSSOM colors).
        #expect(policy == SecurityHeaders.contentSecurityPolicy)
        // The script it loads is served
        #expect(app.respond(Request(method: "GET", target: "/public/js/demo.js")).status == 200)
    }

    @Test("The demo page speaks the visitor's language", arguments: ConsoleLanguage.offered)
    func demoTranslated(language: ConsoleLanguage) async throws {
        let (app, _) = try await Self.app(source: Self.source)
        let localizer = AdminPagesLocalizationTests.localization.localizer(language)
        let page = app.respond(Request(method: "GET", target: "/sdk/v1/demo", headers: HTTPHeaders([("Accept-Language", language.rawValue + ";q=0.9")])))
        #expect(page.text.contains(#"<html lang="\#(language.rawValue)" dir="\#(language.direction)">"#))
        for key in ["demo.title", "demo.key_label", "demo.installation_hint", "demo.fire_app_launch", "demo.fire_purchase"] {
            #expect(page.text.contains(Markup.escape(localizer(key))), "\(language.rawValue) lacks \(key)")
        }
        let english = AdminPagesLocalizationTests.localization.localizer(.en)
        if language != .en {
            #expect(!page.text.contains(Markup.escape(english("demo.intro"))))
        }
    }
}
