import Foundation
import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

@Suite("Export and import of Campaign JSON")
struct TransferTests {
    /// One campaign of each layout, with text in several scripts.
    static func samples(app: Int64) -> [Campaign] {
        let persian = "حراج بهاره — ۲۰٪ تخفیف"
        let japanese = "春のセール 🌸"
        func campaign(_ name: String, _ message: Message) -> Campaign {
            Campaign(
                app: app, name: name, description: "وصف · 説明", priority: 4,
                schedule: Schedule(start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_600_000), timeZone: "Asia/Tokyo"),
                triggers: [Trigger(event: "purchase", filters: [PropertyFilter(property: "value", op: .gt, value: .number(10))]), Trigger(event: "spring_open")],
                frequency: Frequency(type: .everyNDays, days: 3),
                targeting: Targeting(platforms: [.ios, .android], languages: ["fa", "ja"], countries: ["IR", "JP"], percentage: 40),
                message: message,
                data: CustomData([.init(key: "کد", value: "SPRING"), .init(key: "絵文字", value: "🎉"), .init(key: "a", value: "1")]))
        }
        return [
            campaign("Card \(persian)", Message(layout: .card, title: .init(text: persian, color: "#1A73E8"), body: .init(text: japanese),
                                                 imageUrl: "https://example.com/p.png", landscapeImageUrl: "https://example.com/l.png",
                                                 backgroundColor: "#FFFFFF", primaryAction: .init(text: "خرید", url: "https://example.com/buy"),
                                                 secondaryAction: .init(text: "後で"))),
            campaign("Modal \(japanese)", Message(layout: .modal, title: .init(text: japanese), imageUrl: "https://example.com/m.png",
                                                   primaryAction: .init(text: "OK", textColor: "#FFFFFF", buttonColor: "#CC000000", url: "myapp://ok"))),
            campaign("Image only", Message(layout: .imageOnly, imageUrl: "https://example.com/i.png", action: .init(url: "myapp://offers/1"))),
            campaign("Banner", Message(layout: .banner, title: .init(text: persian), body: .init(text: japanese), dismiss: .init(seconds: 8))),
            campaign("Slide-up", Message(layout: .slideup, body: .init(text: "\(persian) \(japanese)"), action: .init(url: "https://example.com"), slideFrom: .top)),
            campaign("Full screen", Message(layout: .fullscreen, title: .init(text: japanese), imageUrl: "https://example.com/f.png",
                                            primaryAction: .init(text: "はい", url: "https://example.com/yes"),
                                            secondaryAction: .init(text: "نه", url: "https://example.com/no"), orientation: .portrait)),
        ]
    }

    @Test("Export then import into a fresh database gives identical campaigns of all six layouts")
    func roundTrip() async throws {
        // Given six published and draft campaigns in one database
        let source = try await TestApp()
        let shop = try source.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: source.clock.now)
        let originals = Self.samples(app: shop.id)
        for (index, campaign) in originals.enumerated() {
            _ = try source.database.campaigns.create(campaign, state: index.isMultiple(of: 2) ? .published : .draft, actor: .commandLine, now: source.clock.now)
        }
        // When they are exported and imported into another database's app
        let transfer = CampaignTransfer(database: source.database)
        let file = Data(try transfer.exportStream(CampaignQuery(), now: source.clock.now).collect())
        let target = try await TestApp()
        let other = try target.database.apps.create(name: "Other", platforms: [.web], actor: .commandLine, now: target.clock.now)
        let importer = CampaignTransfer(database: target.database)
        let plan = try importer.plan(file, appID: other.id)
        #expect(plan.problems.isEmpty)
        let ids = try importer.apply(plan, actor: .commandLine, now: target.clock.now)
        #expect(ids.count == 6)
        // Then every campaign is the same but for its id, app, state and times
        let imported = try ids.compactMap { try target.database.campaigns.find(id: $0) }
        #expect(imported.allSatisfy { $0.state == .draft })
        func normalized(_ campaign: Campaign) -> Campaign {
            var copy = campaign.content
            copy.app = 0
            return copy
        }
        #expect(Set(imported.map { try! String(decoding: CampaignJSON.encoder().encode(normalized($0.campaign)), as: UTF8.self) })
                == Set(originals.map { try! String(decoding: CampaignJSON.encoder().encode(normalized($0)), as: UTF8.self) }))
        let card = try #require(imported.first { $0.campaign.message.layout == .card })
        #expect(Array(card.campaign.message.title!.text.utf8) == Array("حراج بهاره — ۲۰٪ تخفیف".utf8))
        #expect(card.campaign.data.pairs.map(\.key) == ["کد", "絵文字", "a"])
    }

    /// A card with versions in six languages besides the default: right-to-left text with marks, emoji
    /// sequences, combining marks (not precomposed), each version overriding different parts.
    static func versioned(app: Int64) -> Campaign {
        Campaign(
            app: app, name: "Spring sale 🌸 حراج", description: "Versions: en, fa, ar, de, ja, pt-BR", priority: 3,
            triggers: [Trigger(event: "app_launch")], frequency: Frequency(type: .once),
            targeting: Targeting(languages: ["en", "fa", "ar", "de", "ja", "pt-BR"]),
            message: Message(
                layout: .card, title: .init(text: "Spring sale", color: "#1A73E8"), body: .init(text: "20% off everything 👩🏽‍💻"),
                imageUrl: "https://example.com/en.png", landscapeImageUrl: "https://example.com/en-wide.png", backgroundColor: "#FFFFFF",
                primaryAction: .init(text: "Shop now", buttonColor: "#CC1A73E8", url: "https://example.com/shop"),
                secondaryAction: .init(text: "Later"),
                translations: [
                    "fa": .init(title: .init(text: "حراج بهاره"), body: .init(text: "۲۰٪ تخفیف روی «همه چیز» — Herald 2.4 🎉"),
                                primaryAction: .init(text: "خرید", url: "https://example.com/fa/shop")),
                    "ar": .init(title: .init(text: "تخفيضات الربيع"), body: .init(text: "خصم ٢٠٪ على كلّ شيء\u{200F}!"),
                                imageUrl: "https://example.com/ar.png", secondaryAction: .init(text: "لاحقًا")),
                    "de": .init(title: .init(text: "Fru\u{308}hlingsangebot"), body: .init(text: "20 % Rabatt auf alles\nnur diese Woche"),
                                secondaryAction: .init(text: "Spa\u{308}ter")),
                    "ja": .init(title: .init(text: "春のセール 🌸"), body: .init(text: "全品20%オフ"), landscapeImageUrl: "https://example.com/ja-wide.png"),
                    "pt-BR": .init(title: .init(text: "Promoc\u{327}a\u{303}o de primavera"), primaryAction: .init(text: "Comprar")),
                ]),
            data: CustomData([.init(key: "promo", value: "SPRING")]))
    }

    @Test("A campaign with language versions survives export, import into a fresh database, and export again byte for byte: console and API")
    func versionsByteForByte() async throws {
        // Given a draft with versions in six languages, in a database and its app
        let (source, sourceBrowser) = try await TestApp.withAdmin()
        let shop = try source.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: source.clock.now)
        let id = try source.database.campaigns.create(Self.versioned(app: shop.id), state: .draft, actor: .commandLine, now: source.clock.now)
        let exported = sourceBrowser.get("/campaigns/\(id)/export")
        let listed = sourceBrowser.get("/campaigns/export")
        #expect(exported.status == 200 && listed.status == 200)

        // When the console's export is imported by the console into a fresh database, then exported again
        let (target, targetBrowser) = try await TestApp.withAdmin()
        let fresh = try target.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: target.clock.now)
        #expect(fresh.id == shop.id)
        let imported = try targetBrowser.upload("/campaigns/import", from: "/campaigns/import", fields: [("app", String(fresh.id))], file: exported.body)
        #expect(imported.status == 303, "\(imported.text.prefix(2000))")

        // Then both exports, one campaign's and the list's, are the same bytes as before
        #expect(targetBrowser.get("/campaigns/\(id)/export").body == exported.body)
        #expect(targetBrowser.get("/campaigns/export").body == listed.body)
        let file = try CampaignJSON.decoder().decode(CampaignExport.self, from: Data(exported.body))
        #expect(file.campaigns.first?.message.translations == Self.versioned(app: shop.id).message.translations)
        let bytes = Data(exported.body)
        #expect(bytes.range(of: Data("Promoc\u{327}a\u{303}o".utf8)) != nil && bytes.range(of: Data("Promo\u{E7}\u{E3}o".utf8)) == nil,
                "combining marks are not composed")

        // And the same through the API: GET, POST into another fresh database, GET again
        func key(_ app: TestApp, _ appID: Int64) throws -> String {
            try app.database.apiKeys.create(appID: appID, name: "ci", scopes: [.campaignsRead, .campaignsWrite], actor: .commandLine, now: app.clock.now).secret
        }
        let (third, _) = try await TestApp.withAdmin()
        let thirdShop = try third.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: third.clock.now)
        let sourceKey = try key(source, shop.id), thirdKey = try key(third, thirdShop.id)
        let got = source.respond(Request(method: "GET", target: "/api/v1/campaigns/\(id)", headers: HTTPHeaders([("Authorization", "Bearer \(sourceKey)")])))
        #expect(got.status == 200)
        let created = third.respond(Request(
            method: "POST", target: "/api/v1/campaigns",
            headers: HTTPHeaders([("Authorization", "Bearer \(thirdKey)"), ("Content-Type", "application/json")]), body: got.body))
        #expect(created.status == 201, "\(created.text.prefix(2000))")
        #expect(created.body == got.body)
        let again = third.respond(Request(method: "GET", target: "/api/v1/campaigns/\(id)", headers: HTTPHeaders([("Authorization", "Bearer \(thirdKey)")])))
        #expect(again.body == got.body)
    }

    @Test("An import with any invalid campaign imports nothing and names every problem by campaign and path")
    func invalidImport() async throws {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let file = """
            {"schemaVersion": 1, "exportedAt": "2026-11-21T00:00:00Z", "campaigns": [
              {"app": 99, "name": "Good", "message": {"layout": "modal", "title": {"text": "Hi"}}},
              {"app": 99, "name": "Bad", "message": {"layout": "card", "backgroundColor": "white", "imageUrl": "ftp://x"},
               "triggers": [{"event": "ga_open"}]}
            ]}
            """
        let transfer = CampaignTransfer(database: app.database)
        let plan = try transfer.plan(Data(file.utf8), appID: shop.id)
        #expect(!plan.canImport)
        #expect(plan.problems.map(\.campaign) == [2, 2, 2])
        #expect(Set(plan.problems.map(\.path)) == ["message.backgroundColor", "message.imageUrl", "triggers.0.event"])
        #expect(try transfer.apply(plan, actor: .commandLine, now: app.clock.now).isEmpty)
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)

        let newer = try transfer.plan(Data(#"{"schemaVersion": 9, "campaigns": []}"#.utf8), appID: shop.id)
        #expect(newer.unreadable?.contains("version 9") == true)
        let broken = try transfer.plan(Data(#"{"schemaVersion": 1, "campaigns": [{"app": 1, "name": 3}]}"#.utf8), appID: shop.id)
        #expect(broken.unreadable?.contains("`campaigns.0.name`") == true, "\(broken.unreadable ?? "")")
    }

    @Test("In the console: export downloads JSON; import checks first, then creates drafts")
    func console() async throws {
        let (app, admin) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let id = try app.database.campaigns.create(Self.samples(app: shop.id)[0], state: .published, actor: .commandLine, now: app.clock.now)

        let one = admin.get("/campaigns/\(id)/export")
        #expect(one.status == 200)
        #expect(one.headers["Content-Type"] == "application/json")
        #expect(one.headers["Content-Disposition"] == "attachment; filename=\"campaign-\(id).json\"")
        let listed = admin.get("/campaigns/export?status=scheduled")
        #expect(try CampaignJSON.decoder().decode(CampaignExport.self, from: Data(listed.body)).campaigns.count == 1)
        #expect(try CampaignJSON.decoder().decode(CampaignExport.self, from: Data(admin.get("/campaigns/export?status=draft").body)).campaigns.isEmpty)

        let check = try admin.upload("/campaigns/import", from: "/campaigns/import",
                                     fields: [("app", String(shop.id)), ("dryRun", "true")], file: one.body)
        #expect(check.status == 200)
        #expect(check.text.contains("These campaigns would be created as drafts"))
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 1)

        let imported = try admin.upload("/campaigns/import", from: "/campaigns/import", fields: [("app", String(shop.id))], file: one.body)
        #expect(imported.status == 303)
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 2)

        let bad = try admin.upload("/campaigns/import", from: "/campaigns/import", fields: [("app", String(shop.id))], file: Array("{nope".utf8))
        #expect(bad.status == 422)
        #expect(bad.text.contains("Nothing was imported"))
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 2)
    }
}

extension TestBrowser {
    /// Loads `page` for its CSRF token, then POSTs `multipart/form-data` with a JSON file part named `file`.
    func upload(_ target: String, from page: String, fields: [(String, String)], file: [UInt8]) throws -> Response {
        guard let token = Self.csrfToken(in: get(page).text) else { throw TestFailure("no csrf_token on \(page)") }
        let boundary = "----herald-test-boundary"
        var body: [UInt8] = []
        for (name, value) in [("csrf_token", token)] + fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"campaigns.json\"\r\nContent-Type: application/json\r\n\r\n".utf8)
        body += file + Array("\r\n--\(boundary)--\r\n".utf8)
        return send(Request(
            method: "POST", target: target,
            headers: HTTPHeaders([("Content-Type", "multipart/form-data; boundary=\(boundary)")]), body: body))
    }
}
