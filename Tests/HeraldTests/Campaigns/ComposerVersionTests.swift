import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import TestSupport
import Testing

/// Language versions in the composer and the preview, and the one description of each composer field.
@Suite("Composer: language versions and the field catalogue")
struct ComposerVersionTests {
    static let localization = try! Localization(folder: repositoryRoot.appendingPathComponent("Locales"), pseudoLocale: false)
    static var english: Localizer { localization.localizer(.en) }

    /// A card with a Persian version (title and button), a German one (title only) and a Brazilian one (image).
    static func translatedCard(app: Int64) -> Campaign {
        var campaign = Campaign(app: app, name: "Spring sale", triggers: [Trigger(event: "app_launch")], message: Message(
            layout: .card, title: .init(text: "Spring sale", color: "#202124"), body: .init(text: "20% off everything"),
            imageUrl: "https://example.com/portrait.png", primaryAction: .init(text: "Shop now", buttonColor: "#1A73E8", url: "https://example.com/shop")))
        campaign.message.translations = [
            "fa": MessageTranslation(title: .init(text: "حراج بهاره"), primaryAction: .init(text: "خرید کنید")),
            "de": MessageTranslation(title: .init(text: "Frühlingsangebot")),
            "pt-BR": MessageTranslation(imageUrl: "https://example.com/pt-br.png", secondaryAction: .init(url: "https://example.com/pt")),
        ]
        return campaign
    }

    /// The fields a browser sends for the page's form: inputs, checked boxes, chosen options; not those in
    /// `<template>`s (inert) nor buttons.
    static func formFields(_ html: String) -> [(String, String)] {
        let page = html.replacingOccurrences(of: #"<template[\s\S]*?</template>"#, with: "", options: .regularExpression)
        func unescaped(_ text: some StringProtocol) -> String {
            String(text).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        }
        func attribute(_ name: String, in tag: String) -> String? {
            guard let range = tag.range(of: #"\s\#(name)="([^"]*)""#, options: .regularExpression) else { return nil }
            return unescaped(tag[range].split(separator: "\"", maxSplits: 1, omittingEmptySubsequences: false)[1].dropLast())
        }
        func matches(_ pattern: String, in text: String) -> [String] {
            let regex = try! NSRegularExpression(pattern: pattern)
            return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
        }
        var fields: [(String, String)] = []
        for tag in matches(#"<input[^>]*>"#, in: page) {
            guard let name = attribute("name", in: tag) else { continue }
            let type = attribute("type", in: tag) ?? "text"
            if ["submit", "button"].contains(type) { continue }
            if ["checkbox", "radio"].contains(type) && !tag.contains(" checked") { continue }
            fields.append((name, attribute("value", in: tag) ?? ""))
        }
        for area in matches(#"<textarea[\s\S]*?</textarea>"#, in: page) {
            guard let open = matches(#"<textarea[^>]*>"#, in: area).first, let name = attribute("name", in: open) else { continue }
            fields.append((name, unescaped(area.dropFirst(open.count).dropLast("</textarea>".count))))
        }
        for select in matches(#"<select[\s\S]*?</select>"#, in: page) {
            guard let open = matches(#"<select[^>]*>"#, in: select).first, let name = attribute("name", in: open) else { continue }
            let options = matches(#"<option[^>]*>"#, in: select)
            let chosen = options.first { $0.contains(" selected") } ?? options.first
            fields.append((name, chosen.flatMap { attribute("value", in: $0) } ?? ""))
        }
        return fields
    }

    // MARK: Keeping versions

    @Test("Saving in the composer keeps the language versions made through the API")
    func composerKeepsVersions() async throws {
        // Given a campaign with three language versions, stored as the API stores them
        let (app, admin, shop) = try await ComposerTests.setUp()
        let original = Self.translatedCard(app: shop)
        let id = try app.database.campaigns.create(original, state: .draft, actor: .commandLine, now: app.clock.now)

        // When the composer's form is sent back as the page drew it
        let page = admin.get("/campaigns/\(id)/edit").text
        #expect(page.contains(#"name="message.translations.fa.title.text" type="text" value="حراج بهاره" dir="rtl" lang="fa""#))
        let fields = Self.formFields(page).filter { $0.0 != "csrf_token" } + [("intent", "draft")]
        let saved = try admin.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: fields)
        #expect(saved.status == 303, "\(saved.text)")

        // Then every version is stored as it was
        let stored = try #require(try app.database.campaigns.find(id: id))
        #expect(stored.revision == 2)
        #expect(stored.campaign.message.translations == original.message.translations)
        #expect(stored.campaign.message.title == original.message.title)
    }

    @Test("The form encodes every version and decodes it back; a version with nothing set yet is kept")
    func encodeDecodeVersions() throws {
        var campaign = Self.translatedCard(app: 1)
        campaign.message.translations?["ja"] = MessageTranslation()
        let form = CampaignForm.encode(campaign)
        #expect(form.values("message.translations") == ["de", "fa", "ja", "pt-BR"])
        let (decoded, problems) = CampaignForm.decode(form, app: 1)
        #expect(problems.isEmpty)
        #expect(decoded.message.translations == campaign.message.translations)
    }

    // MARK: Adding, overriding and removing versions without script

    @Test("A version is added, filled, saved, and removed after a confirmation, all by form posts")
    func addOverrideRemove() async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        let base = ComposerTests.cardFields(app: shop)

        // When Persian is added from the list
        let added = try admin.submit("/campaigns", from: "/campaigns/new", pairs: base + [("composer.language", "fa"), ("intent", "add-language")])
        #expect(added.status == 200)
        let page = added.text
        // Then its tab is selected, its panel shows, and its text inputs are Persian, right to left, falling back to the default
        #expect(page.contains(#"role="tab" id="version-tab-fa" aria-controls="field-message-translations-fa" aria-selected="true""#))
        #expect(page.contains(#"<input type="hidden" name="message.translations" value="fa">"#))
        #expect(page.contains(#"name="message.translations.fa.title.text" type="text" value="" dir="rtl" lang="fa" placeholder="\#u{2068}Spring sale\#u{2069}""#))
        #expect(page.contains(#"name="message.translations.fa.imageUrl" type="url" value="" dir="ltr" placeholder="\#u{2068}https://example.com/portrait.png\#u{2069}""#))
        #expect(page.contains(#"<input type="hidden" name="preview.language" value="fa" data-version-current>"#))
        #expect(page.contains("Persian (fa)"))
        #expect(!page.contains(#"name="message.translations.fa.landscapeImageUrl" type="url" value="" dir="ltr" placeholder="https://example.com/landscape.png" data-falls-back-to="field-message-landscapeImageUrl" hidden"#))
        // And the default version's fields are in a hidden panel, still sent
        #expect(page.contains(#"id="field-message-translations-fa" aria-labelledby="version-tab-fa" data-version-panel="fa">"#))

        // And the tabs, buttons without script, switch back to the default version and to Persian again
        let backToDefault = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.formFields(page).filter { $0.0 != "csrf_token" } + [("intent", "language:")])
        #expect(backToDefault.text.contains(#"aria-controls="version-panel-default" aria-selected="true""#))
        #expect(backToDefault.text.contains(#"id="field-message-translations-fa" aria-labelledby="version-tab-fa" data-version-panel="fa" hidden>"#))
        let persianAgain = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.formFields(backToDefault.text).filter { $0.0 != "csrf_token" } + [("intent", "language:fa")])
        #expect(persianAgain.text.contains(#"aria-controls="field-message-translations-fa" aria-selected="true""#))

        // When the marketer types the Persian title and saves
        var fields = Self.formFields(page).filter { $0.0 != "csrf_token" && $0.0 != "message.translations.fa.title.text" }
        fields += [("message.translations.fa.title.text", "حراج بهاره"), ("intent", "draft")]
        let saved = try admin.submit("/campaigns", from: "/campaigns/new", pairs: fields)
        #expect(saved.status == 303, "\(saved.text)")
        let id = try ComposerTests.campaignID(saved)
        let stored = try #require(try app.database.campaigns.find(id: id))
        #expect(stored.campaign.message.translations == ["fa": MessageTranslation(title: .init(text: "حراج بهاره"))])

        // Then the edit page marks the title as the version's own
        let edit = admin.get("/campaigns/\(id)/edit").text
        #expect(edit.contains(#"<span class="badge badge-override" data-override-mark>Own text</span>"#))

        // When the version is removed: first a question, then the removal
        let editFields = Self.formFields(edit).filter { $0.0 != "csrf_token" }
        let asked = try admin.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: editFields + [("intent", "remove-language:fa")])
        #expect(asked.status == 200)
        #expect(asked.text.contains("Remove the Persian (fa) version? Its texts are lost when you save."))
        #expect(asked.text.contains(#"value="confirm-remove-language:fa""#))
        let askedFields = Self.formFields(asked.text).filter { $0.0 != "csrf_token" }
        let removed = try admin.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: askedFields + [("intent", "confirm-remove-language:fa")])
        #expect(!removed.text.contains("message.translations.fa.title.text\" type"))
        let removedFields = Self.formFields(removed.text).filter { $0.0 != "csrf_token" }
        #expect(try admin.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: removedFields + [("intent", "draft")]).status == 303)
        #expect(try app.database.campaigns.find(id: id)?.campaign.message.translations == nil)
    }

    @Test("A typed tag is checked: not a tag, or one the message has already, is said beside the control")
    func addingChecksTheTag() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let base = ComposerTests.cardFields(app: shop)
        let invalid = try admin.submit("/campaigns", from: "/campaigns/new", pairs: base + [("composer.otherLanguage", "persian!"), ("intent", "add-language")])
        #expect(invalid.status == 422)
        #expect(invalid.text.contains("is not a language tag such as fa, de or pt-BR."))
        #expect(invalid.text.contains(#"id="field-composer-language-error""#))

        let typed = try admin.submit("/campaigns", from: "/campaigns/new", pairs: base + [("composer.otherLanguage", "zh-Hant-TW"), ("intent", "add-language")])
        #expect(typed.status == 200)
        #expect(typed.text.contains(#"<input type="hidden" name="message.translations" value="zh-Hant-TW">"#))

        let twice = try admin.submit("/campaigns", from: "/campaigns/new",
                                     pairs: base + [("message.translations", "fa"), ("composer.otherLanguage", "FA"), ("intent", "add-language")])
        #expect(twice.status == 422)
        #expect(twice.text.contains("There is a Persian (fa) version already"))
    }

    // MARK: Errors named

    @Test("A version's problem shows beside its field, in its panel, and in the summary with the version and field named")
    func versionErrorsNamed() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let fields = ComposerTests.cardFields(app: shop) + [
            ("message.translations", "fa"), ("message.translations.fa.imageUrl", "http://example.com/fa.png"),
            ("message.translations.fa.primaryAction.url", "javascript:alert(1)"), ("intent", "publish"),
        ]
        let response = try admin.submit("/campaigns", from: "/campaigns/new", pairs: fields)
        #expect(response.status == 422)
        let page = response.text
        #expect(page.contains(##"<a href="#field-message-translations-fa-imageUrl">Persian (fa) — Image URL: Use an https:// image URL"##))
        #expect(page.contains(##"<a href="#field-message-translations-fa-primaryAction-url">Persian (fa) — Primary button action: “\##u{2068}javascript\##u{2069}:” links are not allowed"##))
        #expect(page.contains(#"id="field-message-translations-fa-imageUrl-error""#))
        // The version with problems is the one shown, its tab marked
        #expect(page.contains(#"aria-controls="field-message-translations-fa" aria-selected="true""#))
        #expect(page.contains("version-tab-invalid"))
    }

    @Test("The summary names the field of each problem: “Title: …”")
    func summaryNamesFields() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let fields = ComposerTests.cardFields(app: shop).filter { !["message.title.color", "frequency.days", "triggers.1.filters.1.value"].contains($0.0) } + [
            ("message.title.color", "blue"), ("frequency.days", "seven"), ("triggers.1.filters.1.value", "cheap"), ("intent", "draft"),
        ]
        let page = try admin.submit("/campaigns", from: "/campaigns/new", pairs: fields).text
        #expect(page.contains(##"<a href="#field-message-title-color">Title color: Use a color like #1A73E8"##))
        #expect(page.contains(##"<a href="#field-frequency-days">Days between showings: Enter the days as a whole number.</a>"##))
        #expect(page.contains(##"<a href="#field-triggers-1-filters-1-value">Trigger 2 — Property filter 2 — Value: Enter a number"##))
    }

    // MARK: The catalogue

    @Test("Every message field of the catalogue decodes and encodes back, in every layout and in versions")
    func catalogueRoundTrip() throws {
        for layout in Message.Layout.allCases {
            var form = FormData([("message.layout", layout.rawValue), ("message.translations", "fa")])
            for field in ComposerFields.message where field.layouts.contains(layout) {
                let value: String = switch field.kind {
                case .color: "#CC1A73E8"
                case .number: "7"
                case .select: field.options.last ?? ""
                case .url, .link: "https://example.com/\(field.key)"
                default: "Text of \(field.key)"
                }
                form.pairs.append((field.path, value))
                if let path = field.versionPath("fa") { form.pairs.append((path, "fa \(value)")) }
            }
            let (campaign, problems) = CampaignForm.decode(form, app: 1)
            #expect(problems.isEmpty, "\(layout)")
            let encoded = CampaignForm.encode(campaign)
            for (name, value) in form.pairs {
                #expect(encoded[name] == value, "\(layout): \(name)")
            }
            #expect(CampaignForm.decode(encoded, app: 1).campaign.message == campaign.message, "\(layout)")
        }
    }

    @Test("The script's words are a JSON object in the page's language, with nothing that could end the script element")
    func scriptStrings() throws {
        let german = Self.localization.localizer(.de)
        let json = ComposerScriptStrings.json(german)
        let strings = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(Set(strings.keys) == Set(ComposerScriptStrings.keys))
        #expect(strings["row_added"] == "{noun} {number} hinzugefügt.")
        #expect(!json.contains("<") && !json.contains(">") && !json.contains("&"))
    }

    @Test("Every field of the catalogue has its label (and hint, and options) in the catalog, and is found by its paths")
    func catalogueStrings() throws {
        let english = try #require(Self.localization.catalogs[.en])
        for field in ComposerFields.all {
            #expect(english.entries[field.labelKey] != nil, "\(field.labelKey)")
            if let hint = field.hintKey { #expect(english.entries[hint] != nil, "\(hint)") }
            if field.hasCardLabel { #expect(english.entries["fields.\(field.key).label_card"] != nil, "\(field.key)") }
            for option in field.options { #expect(english.entries[field.optionKey(option)] != nil, "\(field.optionKey(option))") }
            let concrete = field.path.replacingOccurrences(of: "*", with: "3")
            #expect(ComposerFields.field(for: concrete)?.key == field.key, "\(concrete)")
        }
        #expect(ComposerFields.label(for: "message.translations.fa.title.text", Self.english) == "Persian (fa) — Title")
        #expect(ComposerFields.label(for: "targeting.languages.2", Self.english) == "Languages")
        #expect(ComposerFields.label(for: "data.0.value", Self.english) == "Pair 1 — Value")
        #expect(ComposerFields.label(for: "targeting.userProperties.1.op", Self.english) == "Condition 2 — Comparison")
        #expect(ComposerFields.label(for: "message.translations.pt-BR", Self.english) == "Portuguese (Brazil) (pt-BR)")
        #expect(ComposerFields.label(for: "unknown.path", Self.english) == nil)
    }

    // MARK: History

    @Test("History names changed fields by their labels, versions by their language")
    func historyLabels() async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        let id = try app.database.campaigns.create(Self.translatedCard(app: shop), state: .draft, actor: .commandLine, now: app.clock.now)
        var fields = Self.formFields(admin.get("/campaigns/\(id)/edit").text).filter { $0.0 != "csrf_token" && $0.0 != "message.translations.fa.title.text" }
        fields += [("message.translations.fa.title.text", "حراج"), ("intent", "draft")]
        #expect(try admin.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: fields).status == 303)
        let history = admin.get("/campaigns/\(id)/history").text
        #expect(history.contains(#"<td><bdi>Persian (fa) — Title</bdi></td><td dir="auto">حراج بهاره</td><td dir="auto">حراج</td>"#))
        #expect(!history.contains("<code>message.translations.fa.title.text</code>"))
    }

    // MARK: Preview

    @Test("The preview of a version is laid out in its direction, with its texts and the default's for what it leaves out")
    func previewVersion() async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        let id = try app.database.campaigns.create(Self.translatedCard(app: shop), state: .draft, actor: .commandLine, now: app.clock.now)

        let persian = admin.get("/campaigns/\(id)/preview/frame?language=fa").text
        #expect(persian.contains(#"dir="rtl" lang="fa""#))
        #expect(persian.contains("حراج بهاره"))
        #expect(persian.contains("خرید کنید"))
        #expect(persian.contains("20% off everything"), "the body falls back to the default version's")
        #expect(!persian.contains(">Spring sale<"))

        let german = admin.get("/campaigns/\(id)/preview/frame?language=de-AT").text
        #expect(german.contains(#"dir="ltr" lang="de""#))
        #expect(german.contains("Frühlingsangebot"))

        let fallback = admin.get("/campaigns/\(id)/preview/frame?language=sv").text
        #expect(fallback.contains(">Spring sale<"))
        #expect(!fallback.contains("lang=\"sv\""))

        let page = admin.get("/campaigns/\(id)/preview?language=fa").text
        #expect(page.contains(#"name="language" value="fa" checked"#))
        #expect(page.contains(#"/preview/frame?device=phone&amp;orientation=portrait&amp;theme=light&amp;language=fa""#))
    }

    @Test("The composer's live preview draws the version being edited")
    func composedPreviewFollowsVersion() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let fields = ComposerTests.cardFields(app: shop) + [
            ("message.translations", "ar"), ("message.translations.ar.title.text", "تخفيضات الربيع"), ("preview.language", "ar"),
        ]
        let frame = try admin.submit("/campaigns/preview", from: "/campaigns/new", pairs: fields)
        #expect(frame.status == 200)
        #expect(frame.text.contains(#"dir="rtl" lang="ar""#))
        #expect(frame.text.contains("تخفيضات الربيع"))
        #expect(frame.text.contains("20% off everything"))
    }
}

/// The composer and preview pages in the pseudo-language: any English word left is text the catalog does not hold.
@Suite("Composer and preview: every word from the catalog")
struct ComposerTranslationTests {
    /// Words of four or more Latin letters outside the pseudo-language's marks, in the page's text (not in
    /// attributes), leaving out what is not the composer's or preview's to translate: user text and domain
    /// messages (elements with `dir="auto"`), product, app and user names, codes, language names from the
    /// system's locale data, the time zones and event IDs lists, and the layout's parts other sections own
    /// (flash messages, badges, the shared error summary's heading).
    static func untranslatedWords(_ html: String) -> Set<String> {
        var text = html
        for pattern in [#"<datalist[\s\S]*?</datalist>"#, #"<style[\s\S]*?</style>"#, #"<script[\s\S]*?</script>"#, #"<select id="field-composer-language"[\s\S]*?</select>"#,
                        #"<code>[\s\S]*?</code>"#, #"<(\w+)[^>]*dir="auto"[^>]*>[^<]*</\1>"#, #"<div class="flash[^"]*"[^>]*>[\s\S]*?</div>"#,
                        #"<span class="badge[^"]*">[^<]*</span>"#, #"<div class="error-summary"[^>]*>\s*<h2>[^<]*</h2>"#,
                        #"⟦[^⟧]*⟧"#, #"<[^>]*>"#, #"&[a-z#0-9]+;"#] {
            text = text.replacingOccurrences(of: pattern, with: " ", options: .regularExpression)
        }
        let allowed: Set<String> = ["Herald", "Shop", "Android", "Admin", "English", "Firebase", "Messaging", "Braze", "LANGNAME"]
        return Set(text.split(whereSeparator: { !$0.isLetter }).map(String.init).filter {
            $0.count >= 4 && $0.allSatisfy { $0.isASCII } && !allowed.contains($0)
        })
    }

    @Test("The composer, its preview frame, the preview page, the gallery and the history have no word outside the catalog")
    func pseudoLanguage() async throws {
        let (app, admin) = try await TestApp.withAdmin(configure: { $0.pseudoLocale = true })
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let pseudo = [("Accept-Language", "en-XA")]
        let id = try app.database.campaigns.create(ComposerVersionTests.translatedCard(app: shop.id), state: .draft, actor: .commandLine, now: app.clock.now)
        let pages = [
            "/campaigns/new", "/campaigns/\(id)/edit", "/campaigns/\(id)/preview", "/campaigns/\(id)/preview/frame?language=fa",
            "/campaigns/\(id)/history", "/preview/gallery", "/preview/blank",
        ]
        for page in pages {
            let response = admin.get(page, headers: pseudo)
            #expect(response.status == 200, "\(page)")
            #expect(Self.untranslatedWords(response.text).isEmpty, "\(page): \(Self.untranslatedWords(response.text).sorted())")
        }
        // A refused save: the error summary and the messages beside the fields
        let form = admin.get("/campaigns/new", headers: pseudo).text
        let token = try #require(TestBrowser.csrfToken(in: form))
        func post(_ fields: [(String, String)]) -> Response {
            admin.send(Request(
                method: "POST", target: "/campaigns",
                headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded"), ("Accept-Language", "en-XA")]),
                body: Array(FormData([("csrf_token", token), ("app", String(shop.id)), ("name", "N")] + fields).urlencoded.utf8)))
        }
        for refused in [post([("composer.otherLanguage", "not a tag"), ("intent", "add-language")]),
                        post([("frequency.type", "every_n_days"), ("frequency.days", "x"), ("intent", "draft")])] {
            #expect(refused.status == 422)
            #expect(refused.text.contains("error-summary"))
            #expect(Self.untranslatedWords(refused.text).isEmpty, "\(Self.untranslatedWords(refused.text).sorted())")
        }
    }
}
