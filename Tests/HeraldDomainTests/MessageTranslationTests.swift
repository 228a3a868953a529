import Foundation
import HeraldDomain
import Testing

/// Language versions of a message, in the domain: which version a device gets, what falls back, and
/// where a version's problems are reported.
@Suite("Message language versions")
struct MessageTranslationTests {
    static let card = Message(
        layout: .card, title: .init(text: "Spring sale", color: "#1A73E8"), body: .init(text: "20% off"),
        imageUrl: "https://example.com/en.png", backgroundColor: "#FFFFFF",
        primaryAction: .init(text: "Shop", buttonColor: "#CC1A73E8", url: "https://example.com/shop"),
        secondaryAction: .init(text: "Later"),
        translations: [
            "fa": .init(title: .init(text: "حراج بهاره"), primaryAction: .init(text: "خرید")),
            "pt": .init(title: .init(text: "Promoção")),
            "pt-BR": .init(title: .init(text: "Promoção de primavera"), imageUrl: "https://example.com/br.png"),
        ])

    @Test("A device gets its language's version, then its language without region, then the default", arguments: [
        ("pt-BR", "pt-BR", "Promoção de primavera"), ("pt-br", "pt-BR", "Promoção de primavera"), ("pt_BR", "pt-BR", "Promoção de primavera"),
        ("pt-PT", "pt", "Promoção"), ("pt", "pt", "Promoção"), ("fa-IR", "fa", "حراج بهاره"), ("de-DE", nil, "Spring sale"), ("", nil, "Spring sale"),
    ] as [(String, String?, String)])
    func fallbacks(language: String, tag: String?, title: String) {
        let version = Self.card.version(for: language)
        #expect(version.tag == tag)
        #expect(version.message.title?.text == title)
        #expect(version.message.translations == nil)
    }

    @Test("What a version leaves out is the default's: colors, the other texts, a button's action")
    func partsFallBack() {
        let persian = Self.card.version(for: "fa").message
        #expect(persian.title == .init(text: "حراج بهاره", color: "#1A73E8"))
        #expect(persian.body?.text == "20% off")
        #expect(persian.primaryAction == .init(text: "خرید", buttonColor: "#CC1A73E8", url: "https://example.com/shop"))
        #expect(persian.imageUrl == "https://example.com/en.png")
        #expect(Self.card.version(for: "pt-BR").message.imageUrl == "https://example.com/br.png")
    }

    @Test("A version's problems are named by its path; the default's are reported once, at the default's")
    func problemsByVersion() {
        var campaign = Campaign(app: 1, name: "x", triggers: [Trigger(event: "app_launch")], message: Self.card)
        campaign.message.translations?["de"] = .init(title: .init(text: String(repeating: "t", count: 201)), imageUrl: "http://example.com/x.png")
        campaign.message.translations?["ja"] = .init(primaryAction: .init(text: " "))
        campaign.message.translations?["not a tag"] = .init()
        campaign.message.body = .init(text: String(repeating: "b", count: 1001))
        let paths = Set(campaign.problems(for: .publish).map(\.path))
        #expect(paths == [
            "message.body.text", "message.translations.de.title.text", "message.translations.de.imageUrl",
            "message.translations.ja.primaryAction.text", "message.translations.not a tag",
        ])
    }

    @Test("A version that adds a button the default lacks hears of the button's missing part at its own path")
    func versionAddsButton() {
        var campaign = Campaign(app: 1, name: "x", triggers: [Trigger(event: "app_launch")], message: Message(
            layout: .modal, title: .init(text: "Hi"), secondaryAction: .init(text: "Later"),
            translations: ["fa": .init(primaryAction: .init(url: "https://example.com/fa")), "de": .init(secondaryAction: .init(url: "https://example.com/de"))]))
        #expect(Set(campaign.problems(for: .publish).map(\.path)) == ["message.translations.fa.primaryAction.text"])
        campaign.message.translations?["fa"]?.primaryAction?.text = "خرید"
        #expect(campaign.problems(for: .publish).isEmpty)
    }

    @Test("Versions survive Campaign JSON byte for byte, refuse unknown keys, and lose only what the layout does not use")
    func json() throws {
        let campaign = Campaign(app: 1, name: "x", message: Self.card)
        let encoded = try CampaignJSON.encoder().encode(campaign)
        let decoded = try CampaignJSON.decoder(refusingUnknownKeys: true).decode(Campaign.self, from: encoded)
        #expect(decoded == campaign)
        #expect(try CampaignJSON.encoder().encode(decoded) == encoded)
        let misspelt = #"{"app": 1, "name": "x", "message": {"layout": "modal", "translations": {"fa": {"titel": {"text": "x"}}}}}"#
        #expect(throws: UnknownKeyError.self) { try CampaignJSON.decoder(refusingUnknownKeys: true).decode(Campaign.self, from: Data(misspelt.utf8)) }
        var imageOnly = Self.card
        imageOnly.layout = .imageOnly
        #expect(imageOnly.keepingLayoutFields.translations?["pt-BR"] == .init(imageUrl: "https://example.com/br.png"))
        #expect(imageOnly.keepingLayoutFields.translations?["fa"] == .init())
    }

    @Test("Tags are checked by hand exactly as the documented pattern reads them, and written in canonical case")
    func tagShape() {
        let pattern = /[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?/
        let pieces = ["a", "Z", "q", "0", "9", "-", "-", "é", "e\u{301}", "٣", "_", " ", "@", "[", "`", "{", "\u{0}", "Ａ"]
        var generator = SystemRandomNumberGenerator()
        var samples = ["fa", "pt-BR", "zh-Hant-TW", "es-419", "yue-Hant-419", "fa-", "-fa", "pt--BR", "aaaa", "a", "", "zh-Hant-Hant", "fa-IR-x"]
        samples += (0..<20_000).map { _ in (0..<Int.random(in: 0...14, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined() }
        for tag in samples {
            #expect(LanguageTag.isValid(tag) == (tag.wholeMatch(of: pattern) != nil), "\(tag.unicodeScalars.map(\.value))")
        }
        #expect(["fa", "PT-br", "zh-hant-tw", "YUE-HANT-419"].map(LanguageTag.canonical) == ["fa", "pt-BR", "zh-Hant-TW", "yue-Hant-419"])
        #expect(!LanguageTag.isValid(String(repeating: "a", count: 1_000_000)))
    }

    @Test("Right-to-left versions are known by their language", arguments: [("fa", true), ("ar-EG", true), ("he", true), ("de", false), ("ja", false), ("ur-PK", true)])
    func rightToLeft(tag: String, rtl: Bool) {
        #expect(LanguageTag.isRightToLeft(tag) == rtl)
    }
}
