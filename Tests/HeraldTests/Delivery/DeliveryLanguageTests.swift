import Foundation
import GRDB
import HeraldDelivery
import HeraldDomain
import HeraldHTTP
@testable import HeraldSQLite
import Testing

/// The delivery client shows each device the version for its language and reports it with every event,
/// against a real Herald on loopback.
@Suite("Delivery client: language versions", .serialized)
struct DeliveryLanguageTests {
    /// A card whose default version is English, with versions in five languages: right-to-left text,
    /// combining marks and emoji included.
    static func versionedCard(app: Int64) -> Campaign {
        Campaign(
            app: app, name: "Spring sale", triggers: [Trigger(event: "app_launch")], frequency: Frequency(type: .always),
            message: Message(
                layout: .card, title: .init(text: "Spring sale", color: "#1A73E8"), body: .init(text: "20% off"),
                imageUrl: "https://example.com/en.png", backgroundColor: "#FFFFFF",
                primaryAction: .init(text: "Shop", url: "https://example.com/shop"),
                translations: [
                    "fa": .init(title: .init(text: "حراج بهاره"), primaryAction: .init(text: "خرید")),
                    "ar": .init(title: .init(text: "تخفيضات الربيع"), imageUrl: "https://example.com/ar.png"),
                    "de": .init(title: .init(text: "Fru\u{308}hlingsangebot")),
                    "ja": .init(title: .init(text: "春のセール 🌸"), body: .init(text: "全品20%オフ")),
                    "pt-BR": .init(title: .init(text: "Promoção de primavera")),
                    "pt": .init(title: .init(text: "Promoção")),
                ]))
    }

    @Test("Each device sees its language's version (pt-BR, then pt, then the default) and every event of the display reports it", arguments: [
        ("en-US", nil, "Spring sale"), ("fa", "fa", "حراج بهاره"), ("ar-EG", "ar", "تخفيضات الربيع"), ("de", "de", "Fru\u{308}hlingsangebot"),
        ("ja", "ja", "春のセール 🌸"), ("pt-BR", "pt-BR", "Promoção de primavera"), ("pt", "pt", "Promoção"), ("pt-PT", "pt", "Promoção"),
        ("xx", nil, "Spring sale"),
    ] as [(String, String?, String)])
    func versionPerDevice(deviceLanguage: String, shown: String?, title: String) async throws {
        // Given a published card with versions, and a device in `deviceLanguage`
        let fixture = try await DeliveryClientTests.Fixture()
        let id = try fixture.app.database.campaigns.create(
            Self.versionedCard(app: fixture.shop), state: .published, actor: .commandLine, now: fixture.app.clock.now)
        let device = DeviceContext(platform: .ios, appVersion: "2.4.0", language: deviceLanguage, country: "US")
        let (client, display) = try await DeliveryClientTests.ready(fixture, device: device)

        // When the message shows and its user sees it, converts and clicks; then it shows again and fails
        #expect(await client.triggerEvent("app_launch") == .displayed(id))
        let message = try #require(display.shown.withLock { $0.last })
        await client.impressionDetected(message)
        await client.recordConversion("purchase", for: message)
        await client.messageClicked(message, action: .primary, url: message.message.primaryAction?.url)
        fixture.app.clock.advance(60)
        #expect(await client.triggerEvent("app_launch") == .displayed(id))
        let again = try #require(await client.currentMessage)
        await client.displayError(again, code: .imageFetch)

        // Then the app drew that language's version, over the default for what the version leaves out
        #expect(message.language == shown)
        #expect(Array(message.message.title?.text.unicodeScalars ?? "".unicodeScalars) == Array(title.unicodeScalars))
        #expect(message.message.title?.color == "#1A73E8")
        #expect(message.message.primaryAction?.url == "https://example.com/shop")
        #expect(message.message.primaryAction?.text == (shown == "fa" ? "خرید" : "Shop"))
        #expect(message.message.imageUrl == (shown == "ar" ? "https://example.com/ar.png" : "https://example.com/en.png"))
        #expect(message.message.translations == nil)

        // And every queued event carries the version's tag; the default version's leave `language` out
        let queued = await client.queuedEvents
        #expect(queued.map(\.type) == [.impression, .conversion, .click, .error])
        #expect(queued.allSatisfy { $0.language == shown })
        let wire = String(decoding: try CampaignJSON.encoder().encode(queued), as: UTF8.self)
        #expect(wire.contains(#""language""#) == (shown != nil))

        // And the server stored and counted them under that language
        #expect(await client.flushEvents() == .uploaded(accepted: 4, duplicates: 0, rejected: 0))
        let stored = try await fixture.app.database.pool.read { db in
            try String?.fetchAll(db, sql: "SELECT language FROM events WHERE campaign_id = ?", arguments: [id])
        }
        #expect(stored == Array(repeating: shown, count: 4))
        let stats = fixture.app.respond(Request(
            method: "GET", target: "/api/v1/campaigns/\(id)/stats", headers: HTTPHeaders([("Authorization", "Bearer \(fixture.key)")])))
        let body = try #require(try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any])
        let rows = try #require(body["byLanguage"] as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(rows.first?["language"] as? String == shown)
        #expect(rows.first?["impressions"] as? Int == 1 && rows.first?["clicks"] as? Int == 1)
        #expect(rows.first?["conversions"] as? Int == 1 && rows.first?["errors"] as? Int == 1)
    }

    @Test("A message that waited on the stack shows in the device's language at the time it shows")
    func languageChangesWhileStacked() async throws {
        let fixture = try await DeliveryClientTests.Fixture()
        let first = try fixture.campaign("First", event: "a")
        var card = Self.versionedCard(app: fixture.shop)
        card.triggers = [Trigger(event: "b")]
        let second = try fixture.app.database.campaigns.create(card, state: .published, actor: .commandLine, now: fixture.app.clock.now)
        let (client, display) = try await DeliveryClientTests.ready(fixture)
        #expect(await client.triggerEvent("a") == .displayed(first))
        #expect(await client.triggerEvent("b") == .stacked(second))
        #expect(await client.pendingMessages.first?.language == nil)

        await client.updateDevice(DeviceContext(platform: .ios, appVersion: "2.4.0", language: "ja-JP", country: "JP"))
        await client.messageDismissed(try #require(await client.currentMessage), type: .click)
        fixture.app.clock.advance(30)
        let shown = try #require(await client.displayNext())
        #expect(shown.language == "ja")
        #expect(shown.message.body?.text == "全品20%オフ")
        #expect(display.shown.withLock { $0.last } == shown)
        await client.impressionDetected(shown)
        #expect(await client.queuedEvents.last?.language == "ja")
    }
}
