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
