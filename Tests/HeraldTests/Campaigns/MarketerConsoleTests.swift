import Foundation
import HeraldDomain
import HeraldHTTP
@testable import HeraldConsole
import HeraldStorage
import Testing

/// A marketer's day in the console (issue 34): defaults that fit the person, forms that keep what was
/// typed and say everything at once, and pages that show everything a campaign holds.
@Suite("A marketer's day in the console")
struct MarketerConsoleTests {
    /// The `value` of the `<input>` named `name` in `html`, or nil when there is no such input.
    static func inputValue(named name: String, in html: String) -> String? {
        guard let input = html.firstMatch(of: try! Regex(#"<input[^>]*\bname=""# + NSRegularExpression.escapedPattern(for: name) + #""[^>]*>"#)),
              let value = String(input.output[0].substring ?? "").firstMatch(of: /\bvalue="([^"]*)"/) else { return nil }
        return String(value.output.1)
    }

    @Test("A new campaign's schedule starts in the marketer's own time zone, and a draft saved from the untouched form keeps it")
    func newCampaignInTheUsersZone() async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        #expect(Self.inputValue(named: "schedule.timeZone", in: admin.get("/campaigns/new").text) == "UTC", "no zone chosen yet")
        #expect(try admin.submit("/account", from: "/account", ["language": "en", "time_zone": "Asia/Tehran"]).status == 303)
        for channel in ["in_app", "push"] {
            let page = admin.get("/campaigns/new?channel=\(channel)").text
            let zone = try #require(Self.inputValue(named: "schedule.timeZone", in: page))
            #expect(zone == "Asia/Tehran", "\(channel)")
            let saved = try admin.submit("/campaigns", from: "/campaigns/new", pairs: [
                ("app", String(shop)), ("name", "Nowruz \(channel)"), ("channel", channel), ("schedule.timeZone", zone), ("intent", "draft"),
            ])
            #expect(saved.status == 303)
            let stored = try #require(try app.database.campaigns.find(id: try ComposerTests.campaignID(saved)))
            #expect(stored.campaign.schedule.timeZone == "Asia/Tehran")
        }
    }

    @Test("Import: the form's first submit of a valid file imports it; only checking is a box left unticked")
    func importImportsAtOnce() async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        let form = admin.get("/campaigns/import").text
        let box = try #require(form.firstMatch(of: /<input[^>]*id="field-dryRun"[^>]*>/)?.output)
        #expect(!box.contains("checked"), "“Only check” is an option, not the default")
        let file = try CampaignJSON.encoder().encode(CampaignExport(
            schemaVersion: CampaignJSON.schemaVersion, exportedAt: app.clock.now,
            campaigns: [Campaign(app: shop, name: "Imported", message: Message(layout: .modal, title: .init(text: "Hi")))]))
        // What the untouched form sends: the app and the file, no dryRun.
        let imported = try admin.upload("/campaigns/import", from: "/campaigns/import", fields: [("app", String(shop))], file: Array(file))
        #expect(imported.status == 303)
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 1)
    }

    @Test("The campaign page shows every language version, each with the parts it sets")
    func campaignPageShowsEveryVersion() async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        var message = Message(
            layout: .card, title: .init(text: "Spring sale", color: "#202124"), body: .init(text: "20% off"), imageUrl: "https://example.com/en.png",
            backgroundColor: "#FFFFFF", primaryAction: .init(text: "Shop now", url: "https://example.com/shop"))
        message.translations = [
            "fa": MessageTranslation(title: .init(text: "حراج بهاره"), imageUrl: "https://example.com/fa.png", primaryAction: .init(text: "خرید")),
            "de": MessageTranslation(body: .init(text: "20 % Rabatt")),
            "ja": MessageTranslation(),
        ]
        let id = try app.database.campaigns.create(
            Campaign(app: shop, name: "Spring", triggers: [Trigger(event: "app_launch")], message: message), state: .draft, actor: .commandLine,
            now: app.clock.now)
        let page = admin.get("/campaigns/\(id)").text
        let headings = page.matches(of: /<h2>([^<]*)<\/h2>/).map { String($0.output.1) }
        #expect(headings.contains("Version German (de)") && headings.contains("Version Persian (fa)") && headings.contains("Version Japanese (ja)"))
        func section(_ heading: String) throws -> String {
            String(page[try #require(page.range(of: heading)).upperBound...].split(separator: "</section>")[0])
        }
        let persianSection = try section("Version Persian (fa)")
        #expect(persianSection.contains("<bdi>حراج بهاره</bdi>"))
        #expect(persianSection.contains("https://example.com/fa.png"))
        #expect(persianSection.contains("خرید"), "the version's own button text")
        #expect(persianSection.contains("https://example.com/shop"), "with the default version's link, as devices get it")
        #expect(!persianSection.contains("20% off"), "the default's body is not repeated: the version does not set one")
        let german = try section("Version German (de)")
        #expect(german.contains("20 % Rabatt") && !german.contains("Spring sale"))
        #expect(try section("Version Japanese (ja)").contains("Everything as in the default version."))
    }

    @Test("The new-user form names every mistake at once: name, email, password, role and a taken email")
    func newUserFormReportsEverything() async throws {
        let (_, admin) = try await TestApp.withAdmin()
        let all = try admin.submit("/users", from: "/users/new", ["name": "", "email": "not-an-email", "password": "short"])
        #expect(all.status == 422)
        for field in ["name", "email", "password", "role"] {
            #expect(all.text.contains(##"href="#field-\##(field)""##), "the summary links to \(field)")
        }
        #expect(all.text.contains("Choose a role"))
        let taken = try admin.submit("/users", from: "/users/new", ["name": "Ada", "email": "ADMIN@example.com", "password": "short"])
        #expect(taken.status == 422)
        #expect(taken.text.contains("A user with this email already exists."))
        #expect(taken.text.contains(##"href="#field-password""##))
        #expect(taken.text.contains(##"href="#field-role""##))
    }

    @Test("A language tag typed wrong is kept in its field, marked, with its error")
    func badTypedTagIsKept() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let response = try admin.submit("/campaigns", from: "/campaigns/new", pairs: [
            ("app", String(shop)), ("name", "Tags"), ("message.layout", "modal"), ("composer.otherLanguage", "klingon!"), ("intent", "add-language"),
        ])
        #expect(response.status == 422)
        let input = try #require(response.text.firstMatch(of: /<input id="field-composer-otherLanguage"[^>]*>/)?.output)
        #expect(input.contains(#"value="klingon!""#))
        #expect(input.contains(#"aria-invalid="true""#))
        #expect(input.contains("field-composer-language-error"))
        #expect(response.text.contains("\u{2068}klingon!\u{2069}"), "the error names it, isolated in its sentence")
    }

    @Test("The demo page speaks the signed-in reader's console language, whatever the browser asks for")
    func demoPageInTheConsoleLanguage() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        #expect(try admin.submit("/account", from: "/account", ["language": "fa", "time_zone": "Asia/Tehran"]).status == 303)
        let page = admin.get("/sdk/v1/demo", headers: [("Accept-Language", "de")])
        #expect(page.status == 200)
        #expect(page.text.contains(#"<html lang="fa" dir="rtl">"#))
        #expect(page.headers["Cache-Control"] == "private, no-cache")
        // A visitor still gets the browser's language.
        let visitor = app.respond(Request(method: "GET", target: "/sdk/v1/demo", headers: HTTPHeaders([("Accept-Language", "de")])))
        #expect(visitor.text.contains(#"<html lang="de" dir="ltr">"#))
    }

    @Test("The composer says that custom data and targeting reach every key holder, for in-app campaigns (push keeps them on the server)")
    func composerSaysTheFeedIsPublic() async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let inApp = admin.get("/campaigns/new").text
        #expect(inApp.contains(#"id="data-public""#) && inApp.contains(#"id="targeting-public""#))
        #expect(inApp.contains("for anyone to copy. Never put secrets"))
        let push = admin.get("/campaigns/new?channel=push").text
        #expect(!push.contains(#"id="data-public""#) && !push.contains(#"id="targeting-public""#))
    }

    @Test("The audit page writes each line in its reader's language from the arguments it was stored with; lines stored before keep their text")
    func auditLinesInTheReadersLanguage() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        let now = app.clock.now
        #expect(try admin.submit("/apps", from: "/apps/new", pairs: [("name", "Shop"), ("platforms", "ios"), ("platforms", "android")]).status == 303)
        #expect(try admin.submit("/apps/1/devices", from: "/apps/1", ["deviceName": "Saras Pixel", "installationId": "iid-1"]).status == 303)
        #expect(try admin.submit("/users", from: "/users/new", ["name": "Eddie", "email": "eddie@example.com", "password": "0123456789ab", "role": "editor"]).status == 303)
        let eddie = try #require(try app.database.users.find(email: "eddie@example.com"))
        #expect(try admin.submit("/users/\(eddie.id!)/role", from: "/users/\(eddie.id!)", ["role": "admin"]).status == 303)
        let campaign = try admin.submit("/campaigns", from: "/campaigns/new", pairs: [("app", "1"), ("name", "Frühling"), ("intent", "draft")])
        let id = try ComposerTests.campaignID(campaign)
        try app.database.apps.setMinInterval(appID: 1, seconds: 1, actor: .commandLine, now: now)
        // A line from before arguments were kept.
        try app.database.auditLog.record(.commandLine, action: "app.create", subject: "app 9 Legacy", details: "ios", at: now)
        #expect(try admin.submit("/account", from: "/account", ["language": "de", "time_zone": "UTC"]).status == 303)

        let page = admin.get("/audit").text
        let isolated = Localizer.isolated
        for words in [
            "App 1, \(isolated("Shop"))", "Plattformen: iOS, Android", "Testgerät \(isolated("Saras Pixel")) der App 1",
            "Installation \(isolated("iid-1"))", "Benutzer \(isolated("eddie@example.com"))", "Rolle: Redakteur", "Redakteur → Admin",
            "Kampagne \(id), \(isolated("Frühling"))", "Status: Entwurf", "Mindestabstand: 1 Sekunde",
            "Sprache: \(isolated("de")); Zeitzone: \(isolated("UTC"))",
        ] {
            #expect(page.contains(">\(words)</td>"), "\(words)")
        }
        #expect(page.contains(#"<td dir="auto" translate="no">app 9 Legacy</td><td dir="auto" translate="no">ios</td>"#))
        #expect(!page.contains("role editor"), "no English details left on new lines")

        // Numbers in the reader's digits.
        #expect(try admin.submit("/account", from: "/account", ["language": "fa", "time_zone": "UTC"]).status == 303)
        #expect(admin.get("/audit").text.contains("کمترین فاصله: ۱ ثانیه"))
    }
}
