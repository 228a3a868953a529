import Foundation
import TestSupport
import Testing
@testable import HeraldConsole
import HeraldStorage

/// The string catalogs, the language a request gets, and each user's language and time zone.
@Suite("Localization: catalogs, languages and time zones")
struct LocalizationTests {
    static let localization = try! Localization(folder: repositoryRoot.appendingPathComponent("Locales"), pseudoLocale: true)

    @Test("Every catalog has every English key, with the same arguments and the plural forms its language needs")
    func catalogsAreComplete() throws {
        let english = try #require(Self.localization.catalogs[.en])
        for language in ConsoleLanguage.offered where language != .en {
            let catalog = try #require(Self.localization.catalogs[language])
            var problems: [String] = []
            for (key, entry) in english.entries.sorted(by: { $0.key < $1.key }) {
                guard let translated = catalog.entries[key] else {
                    problems.append("missing \(key)")
                    continue
                }
                switch (entry, translated) {
                case (.text(let source), .text(let text)):
                    if StringCatalog.arguments(in: source) != StringCatalog.arguments(in: text) {
                        problems.append("\(key): arguments \(StringCatalog.arguments(in: text).sorted()) instead of \(StringCatalog.arguments(in: source).sorted())")
                    }
                    if text.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("\(key) is empty") }
                case (.plural(let source), .plural(let forms)):
                    let missing = PluralCategory.required(in: language).subtracting(forms.keys)
                    if !missing.isEmpty { problems.append("\(key): no \(missing.map(\.rawValue).sorted()) form") }
                    let wanted = StringCatalog.arguments(in: source[.other] ?? "").subtracting(["count"])
                    for (category, form) in forms where !wanted.isSubset(of: StringCatalog.arguments(in: form)) {
                        problems.append("\(key).\(category.rawValue) lacks arguments \(wanted.sorted())")
                    }
                default:
                    problems.append("\(key): plural in one catalog, plain in the other")
                }
            }
            for key in catalog.entries.keys where english.entries[key] == nil {
                problems.append("\(key) is not in en.json")
            }
            #expect(problems.isEmpty, "\(language.rawValue).json: \(problems.joined(separator: "; "))")
        }
    }

    @Test("Every {{t.…}} a template uses is in the English catalog")
    func templatesUseKnownKeys() throws {
        let english = try #require(Self.localization.catalogs[.en])
        let templates = repositoryRoot.appendingPathComponent("Templates")
        let files = try Self.files(in: templates, ending: ".mustache")
        let reference = try Regex(#"\{\{\{?\s*t\.([A-Za-z0-9_.]+)"#)
        for file in files {
            let text = try String(contentsOf: templates.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: reference) {
                let key = String(text[match.output[1].range!])
                #expect(english.entries[key] != nil, "\(file) uses t.\(key), which en.json lacks")
            }
        }
    }

    /// The paths below `folder` whose names end in `suffix`; at least one.
    static func files(in folder: URL, ending suffix: String) throws -> [String] {
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(suffix) }
        #expect(!files.isEmpty, "nothing ends in \(suffix) in \(folder.path)")
        return files
    }

    @Test("Every error key the console's Swift names is in en.json; a Phrase passes the arguments its sentence names and has its English built in")
    func phrasesUseKnownKeys() throws {
        let english = try #require(Self.localization.catalogs[.en])
        let sources = repositoryRoot.appendingPathComponent("Sources/HeraldConsole")
        let files = try Self.files(in: sources, ending: ".swift")
        // A key under `validation` or an `errors` section, whole or (before an interpolation) its beginning.
        let key = try Regex(#""((?:[a-z_]+\.)*errors\.[A-Za-z0-9_.]*|validation\.[A-Za-z0-9_.]*)(\\\()?"#)
        let phrase = try Regex(#"Phrase\(\s*"([A-Za-z0-9_.]+)"\s*(?:,\s*\[([^\]]*)\])?\s*\)"#)
        let argumentName = try Regex(#""(\w+)"\s*:"#)
        var checked = 0
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: key) {
                let named = String(text[match.output[1].range!])
                if match.output[2].range != nil || named.hasSuffix(".") {
                    #expect(english.entries.keys.contains { $0.hasPrefix(named) }, "\(file) names \(named)…, which no key of en.json starts with")
                } else {
                    #expect(english.entries[named] != nil, "\(file) names \(named), which en.json lacks")
                }
                checked += 1
            }
            for match in text.matches(of: phrase) {
                let named = String(text[match.output[1].range!])
                guard case .text(let sentence) = english.entries[named] else {
                    Issue.record("\(file): Phrase(\"\(named)\") is not a sentence of en.json")
                    continue
                }
                let passed = match.output[2].range.map { range in
                    Set(text[range].matches(of: argumentName).map { String(text[$0.output[1].range!]) })
                } ?? []
                #expect(passed == StringCatalog.arguments(in: sentence), "\(file): Phrase(\"\(named)\") passes \(passed.sorted()) for “\(sentence)”")
                #expect(Phrase(named).english != named, "\(named): no English built in; add its section to the EnglishCatalog plugin")
            }
        }
        #expect(checked > 80, "the key pattern no longer finds the console's keys")
        let causes: [StorageUnavailable] = [.diskFull, .readOnly, .diskError, .cannotOpen, .busy, .unreachable]
        for cause in causes {
            for saving in [true, false] {
                let error = HTTPError.unavailable(cause, saving: saving)
                #expect(error.phrase.map { english.entries[$0.key] != nil } == true, "\(cause), saving \(saving)")
                #expect(error.message.hasPrefix("Herald cannot"), "\(error.message)")
            }
        }
    }

    @Test("Plural forms follow each language's rules; counts are written in the language's digits")
    func plurals() {
        #expect(PluralCategory.of(1, in: .en) == .one && PluralCategory.of(0, in: .en) == .other)
        #expect(PluralCategory.of(0, in: .fa) == .one && PluralCategory.of(2, in: .fa) == .other)
        #expect([0, 1, 2, 3, 10, 11, 99, 100, 102, 111].map { PluralCategory.of($0, in: .ar) }
            == [.zero, .one, .two, .few, .few, .many, .many, .other, .other, .many])
        #expect(PluralCategory.of(1, in: .ja) == .other)
        #expect(Self.localization.localizer(.fa).number(1_234_567) == "۱٬۲۳۴٬۵۶۷")
        #expect(Self.localization.localizer(.de).number(1_234_567) == "1.234.567")
        #expect(Self.localization.localizer(.ja).number(Int.min).contains("9,223,372,036,854,775,808"))
    }

    @Test("Arguments are filled; unknown or unclosed braces stay as written")
    func arguments() {
        let localizer = Self.localization.localizer(.en)
        #expect(localizer("settings.time_zone_stored", ["zone": "Asia/Tehran"]).hasPrefix("Times are shown in Asia/Tehran,"))
        #expect(localizer("no.such.key") == "no.such.key")
    }

    @Test("The browser's Accept-Language chooses among the offered languages by quality; junk is ignored")
    func acceptLanguage() {
        let offered = ConsoleLanguage.offered
        #expect(ConsoleLanguage.preferred(acceptLanguage: "fa-IR,fa;q=0.9,en;q=0.8", among: offered) == .fa)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "fr, de;q=0.5, ja;q=0.7", among: offered) == .ja)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "ar-EG;q=1.0", among: offered) == .ar)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "fr-FR, *;q=0", among: offered) == nil)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "de;q=NaN, de;q=2, ;;;,,", among: offered) == nil)
        #expect(ConsoleLanguage.preferred(acceptLanguage: String(repeating: "x,", count: 100_000) + "de", among: offered) == nil)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "en-XA", among: offered) == .en)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "en-XA", among: offered + [.pseudo]) == .pseudo)
    }

    @Test("A visitor's pages follow Accept-Language: <html lang dir> and the words")
    func visitorLanguage() async throws {
        let app = try await TestApp()
        let login = app.browser().get("/setup", headers: [("Accept-Language", "fa-IR,fa;q=0.9")])
        #expect(login.text.contains(#"<html lang="fa" dir="rtl">"#))
        let german = app.browser().get("/setup", headers: [("Accept-Language", "de-DE")])
        #expect(german.text.contains(#"<html lang="de" dir="ltr">"#))
    }

    @Test("Settings: a user chooses language and time zone; bad values are refused next to the field and nothing is saved")
    func settings() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        let before = try #require(try app.database.users.find(email: "admin@example.com"))
        #expect(before.timeZone == "UTC")
        let page = admin.get("/account")
        #expect(page.status == 200)
        #expect(page.text.contains(#"<option value="fa" lang="fa">فارسی</option>"#))

        let bad = try admin.submit("/account", from: "/account", ["language": "fa", "time_zone": "Mars/Olympus_Mons"])
        #expect(bad.status == 422)
        #expect(bad.text.contains(#"id="field-time-zone-error""#))
        #expect(try app.database.users.find(email: "admin@example.com")?.language == nil)
        #expect(try admin.submit("/account", from: "/account", ["language": "xx", "time_zone": "UTC"]).status == 422)
        let long = String(repeating: "A", count: 10_000)
        #expect(try admin.submit("/account", from: "/account", ["language": "", "time_zone": long]).status == 422)

        let saved = try admin.submit("/account", from: "/account", ["language": "fa", "time_zone": "Asia/Tehran"])
        #expect(saved.status == 303)
        let after = try #require(try app.database.users.find(email: "admin@example.com"))
        #expect(after.language == "fa" && after.timeZone == "Asia/Tehran")
        let persian = admin.get("/account")
        #expect(persian.text.contains(#"<html lang="fa" dir="rtl">"#))
        #expect(persian.text.contains("تنظیمات شما ذخیره شد."))
        // The user's choice wins over the browser's
        #expect(admin.get("/account", headers: [("Accept-Language", "de")]).text.contains(#"lang="fa""#))
        #expect(try app.database.auditLog.page(offset: 0, limit: 1).first?.action == "user.settings")
    }

    @Test("The first sign-in keeps the browser's time zone and says where to change it")
    func firstSignInTimeZone() async throws {
        let (app, _) = try await TestApp.withAdmin()
        try app.createUser(email: "eddie@example.com", role: .editor)
        let browser = app.browser(address: "10.9.0.1")
        let login = try browser.submit(
            "/login", from: "/login", ["email": "eddie@example.com", "password": "correct horse battery", "time_zone": "Asia/Tokyo"])
        #expect(login.status == 303)
        #expect(try app.database.users.find(email: "eddie@example.com")?.timeZone == "Asia/Tokyo")
        #expect(browser.get("/campaigns").text.contains("Times are shown in Asia/Tokyo"))
        // A later sign-in from elsewhere does not change it
        _ = try app.browser(address: "10.9.0.2").submit(
            "/login", from: "/login", ["email": "eddie@example.com", "password": "correct horse battery", "time_zone": "Europe/Berlin"])
        #expect(try app.database.users.find(email: "eddie@example.com")?.timeZone == "Asia/Tokyo")
    }

    @Test("Templates get their words written in at start: escaped, and left to the lookup when the catalog lacks one or it would read as a tag")
    func templatesWithTheirWords() {
        let catalog = StringCatalog(language: .de, entries: [
            "reports.title": .text("Berichte <neu> & \"alt\""), "odd": .text("{{page}}"),
            "reports.count": .plural([.one: "ein Bericht", .other: "{count} Berichte"]),
        ])
        let written = Views.writingStrings(
            "<h1>{{t.reports.title}}</h1>{{t.missing.key}}{{t.odd}}{{t.reports.count}}{{{t.reports.title}}}{{ t.reports.title }}", catalog)
        #expect(written == "<h1>Berichte &lt;neu&gt; &amp; &quot;alt&quot;</h1>{{t.missing.key}}{{t.odd}}{{t.reports.count}}{{{t.reports.title}}}{{ t.reports.title }}")
    }
}
