import Foundation
import HeraldDomain
import HeraldStorage
import Testing

@Suite("Push campaigns in the console")
struct PushConsoleTests {
    static let notification = PushNotification(
        title: "Sale", body: "Half price today", imageUrl: "https://cdn.example.com/sale.png",
        translations: ["fa": PushTranslation(title: "حراج", body: "نیم‌بها، فقط امروز")])

    @Test("The preview shows the notification on iOS and Android lock screens, collapsed and expanded with its image, light and dark; a Persian version right to left")
    func preview() async throws {
        let (app, browser) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let id = try app.database.campaigns.create(Campaign(app: shop.id, name: "Sale", push: Self.notification), state: .draft, actor: .commandLine, now: app.clock.now)
        let page = browser.get("/campaigns/\(id)/preview")
        #expect(page.status == 200)
        #expect(page.text.components(separatedBy: "<figure class=\"push-screen").count - 1 == 8)
        for caption in ["iOS, light, lock screen", "iOS, dark, expanded", "Android, light, lock screen", "Android, dark, expanded"] {
            #expect(page.text.contains("<figcaption>\(caption)</figcaption>"), "\(caption)")
        }
        #expect(page.text.components(separatedBy: "class=\"push-image\" src=\"https://cdn.example.com/sale.png\"").count - 1 == 4, "the image only when expanded")
        #expect(page.text.contains("Half price today"))
        let persian = browser.get("/campaigns/\(id)/preview?language=fa")
        #expect(persian.text.contains(#"<div class="push-card" dir="rtl" lang="fa">"#))
        #expect(persian.text.contains("نیم‌بها، فقط امروز"))
        #expect(persian.text.contains(#"aria-current="page"><strong>"#))
    }

    @Test("The composer, which writes in-app messages, does not open or save a push campaign (it would lose its notification)")
    func composerRefusesPush() async throws {
        let (app, browser) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let id = try app.database.campaigns.create(Campaign(app: shop.id, name: "Sale", push: Self.notification), state: .draft, actor: .commandLine, now: app.clock.now)
        #expect(!browser.get("/campaigns/\(id)").text.contains("/campaigns/\(id)/edit"))
        let edit = browser.get("/campaigns/\(id)/edit")
        #expect(edit.status == 409)
        #expect(edit.text.contains("PUT /api/v1/campaigns/\(id)"))
        #expect(try app.database.campaigns.find(id: id)?.campaign.push == Self.notification)
    }
}
