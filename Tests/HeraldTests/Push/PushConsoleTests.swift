import Foundation
import HeraldDomain
import HeraldStorage
import PushMock
import Testing

@testable import HeraldConsole

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

    /// An admin with one app.
    static func setUp() async throws -> (TestApp, TestBrowser, Int64) {
        let (app, browser) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: app.clock.now)
        return (app, browser, shop.id)
    }

    static func composed(app: Int64, _ fields: [(String, String)]) -> [(String, String)] {
        [("channel", "push"), ("app", String(app)), ("name", "Sale"), ("schedule.startMode", "publish"), ("schedule.endMode", "never"),
         ("schedule.timeZone", "UTC")] + fields
    }

    /// The composer's words for a version's count, as the console writes numbers in English.
    static func bytesLeft(_ sizes: [(tag: String?, provider: PushProvider, bytes: Int)], tag: String?) -> String {
        sizes.filter { $0.tag == tag }.map { size in
            let number = { (value: Int) in value.formatted(.number.locale(Locale(identifier: "en"))) }
            return "\(size.provider.title): \(number(size.provider.payloadLimit - size.bytes)) bytes left of \(number(size.provider.payloadLimit))"
        }.joined(separator: " · ")
    }

    @Test("The push composer offers the notification's fields, not the in-app message's, and shows the bytes left for APNs and FCM")
    func pushComposerForm() async throws {
        let (_, browser, shop) = try await Self.setUp()
        let list = browser.get("/campaigns").text
        #expect(list.contains(#"href="/campaigns/new?channel=push""#))
        let page = browser.get("/campaigns/new?channel=push").text
        #expect(page.contains("<h1 dir=\"auto\">New push notification</h1>"))
        for name in ["push.title", "push.subtitle", "push.imageUrl", "push.url", "push.badge", "push.sound", "push.category", "push.threadId",
                     "push.silent", "push.inDeviceTimeZone", "data.0.key", "schedule.start", "targeting.platforms", "targeting.percentage",
                     "testOnDevice"] {
            #expect(page.contains(#"name="\#(name)""#), "\(name)")
        }
        #expect(page.contains(#"<textarea id="field-push-body" name="push.body""#), "a body may span lines")
        #expect(page.contains(#"<input type="hidden" name="channel" value="push">"#))
        for absent in ["message.layout", "message.title.text", "triggers.0.event", "targeting.userProperties.0.property",
                       "targeting.daysSinceFirstOpen.min", "frequency.days"] {
            #expect(!page.contains(#"name="\#(absent)""#), "\(absent)")
        }
        // Nothing typed yet: the count is that of the payload an empty notification would be sent as.
        let empty = Campaign(app: shop, name: "", push: PushNotification()).payloadSizes()
        #expect(page.contains(#"data-push-bytes="" aria-live="polite">\#(Self.bytesLeft(empty, tag: nil))</p>"#))
    }

    @Test("A notification composed in the console with a Persian version is saved as composed, and its edit form saves it unchanged")
    func composeAndEdit() async throws {
        let (app, browser, shop) = try await Self.setUp()
        let fields = Self.composed(app: shop, [
            ("push.title", "Sale"), ("push.body", "Half price\ntoday"), ("push.badge", "3"), ("push.sound", "default"),
            ("push.category", "OFFER"), ("push.url", "https://example.com/sale"),
            ("push.translations", "fa"), ("push.translations.fa.title", "حراج"), ("push.translations.fa.body", "نیم‌بها، فقط امروز"),
            ("data.0.key", "promo"), ("data.0.value", "SPRING"), ("targeting.platforms", "ios"), ("priority", "2"),
        ])
        // The app has no credentials and no device yet: publishing says so first, and saves nothing.
        let asked = try browser.submit("/campaigns", from: "/campaigns/new?channel=push", pairs: fields + [("intent", "publish")])
        #expect(asked.status == 200)
        #expect(asked.text.contains("This notification cannot reach everyone yet"))
        #expect(asked.text.contains(#"<button class="button button-primary" type="submit" name="intent" value="publish_anyway">Publish anyway</button>"#))
        #expect(asked.text.contains("Half price\ntoday"), "what was typed is kept")
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)
        let answer = try browser.submit("/campaigns", from: "/campaigns/new?channel=push", pairs: fields + [("intent", "publish_anyway")])
        #expect(answer.status == 303, "\(answer.text.prefix(2000))")
        let id = try ComposerTests.campaignID(answer)
        let stored = try #require(try app.database.campaigns.find(id: id))
        #expect(stored.state == .published)
        #expect(stored.campaign.channel == .push)
        #expect(stored.campaign.push == PushNotification(
            title: "Sale", body: "Half price\ntoday", badge: 3, sound: "default", category: "OFFER", url: "https://example.com/sale",
            translations: ["fa": PushTranslation(title: "حراج", body: "نیم‌بها، فقط امروز")]))
        #expect(stored.campaign.data == CustomData([.init(key: "promo", value: "SPRING")]))
        #expect(stored.campaign.targeting.platforms == [.ios])
        #expect(stored.campaign.priority == 2)

        // The campaign page leads to the composer, which shows what was saved; saved again as shown, nothing changes.
        #expect(browser.get("/campaigns/\(id)").text.contains("/campaigns/\(id)/edit"))
        let edit = browser.get("/campaigns/\(id)/edit")
        #expect(edit.status == 200)
        #expect(edit.text.contains(#"name="push.translations.fa.title" type="text" value="حراج" dir="rtl" lang="fa""#))
        #expect(edit.text.contains(#"name="composer.campaign" value="\#(id)""#))
        let sizes = stored.campaign.payloadSizes()
        #expect(edit.text.contains(#"data-push-bytes="fa" aria-live="polite">\#(Self.bytesLeft(sizes, tag: "fa"))</p>"#), "measured with its id")
        let shown = ComposerVersionTests.formFields(edit.text).filter { $0.0 != "csrf_token" } + [("intent", "draft")]
        let saved = try browser.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: shown)
        #expect(saved.status == 303, "\(saved.text.prefix(2000))")
        #expect(try app.database.campaigns.find(id: id)?.campaign.content == stored.campaign.content)
        // The form cannot turn it into an in-app campaign.
        let current = ComposerVersionTests.formFields(browser.get("/campaigns/\(id)/edit").text).filter { $0.0 != "csrf_token" }
        let switched = try browser.submit(
            "/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: current.map { $0.0 == "channel" ? ("channel", "in_app") : $0 } + [("intent", "draft")])
        #expect(switched.status == 303)
        #expect(try app.database.campaigns.find(id: id)?.campaign.channel == .push)
    }

    @Test("A notification over APNs's 4096 bytes is refused at its field with the count, and nothing is saved; the live count says how far over")
    func tooLarge() async throws {
        let (app, browser, shop) = try await Self.setUp()
        // Japanese takes 3 bytes a letter: 3,000 bytes of body, 600 of title, 1,200 of custom data.
        let fields = Self.composed(app: shop, [
            ("push.title", String(repeating: "日", count: 200)), ("push.body", String(repeating: "本", count: 1000)),
            ("data.0.key", "note"), ("data.0.value", String(repeating: "語", count: 400)), ("intent", "draft"),
        ])
        let answer = try browser.submit("/campaigns", from: "/campaigns/new?channel=push", pairs: fields)
        #expect(answer.status == 422)
        #expect(answer.text.contains(#"<p class="field-error" id="field-push-body-error">"#))
        #expect(answer.text.contains("4,096"))
        #expect(answer.text.contains("push-bytes push-bytes-over"))
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)

        let count = try browser.submit("/campaigns/push-bytes", from: "/campaigns/new?channel=push", pairs: fields)
        #expect(count.status == 200)
        #expect(count.headers["Content-Type"]?.hasPrefix("application/json") == true)
        let versions = try #require((try JSONSerialization.jsonObject(with: Data(count.body)) as? [String: Any])?["versions"] as? [[String: Any]])
        #expect(versions.count == 1)
        #expect(versions.first?["over"] as? Bool == true)
        let text = try #require(versions.first?["text"] as? String)
        #expect(text.contains("bytes over the 4,096-byte limit") && text.contains("bytes over the 4,000-byte limit"), "\(text)")

        // Shorter, it fits: the count is exactly what is left.
        let fitting = Self.composed(app: shop, [("push.title", "日本"), ("push.translations", "ja"), ("push.translations.ja.body", "語")])
        let small = try browser.submit("/campaigns/push-bytes", from: "/campaigns/new?channel=push", pairs: fitting)
        var campaign = Campaign(app: shop, name: "Sale", push: PushNotification(title: "日本", translations: ["ja": PushTranslation(body: "語")]))
        campaign.id = nil
        let expected = campaign.payloadSizes()
        let answered = try #require((try JSONSerialization.jsonObject(with: Data(small.body)) as? [String: Any])?["versions"] as? [[String: Any]])
        #expect(answered.map { $0["tag"] as? String } == ["", "ja"])
        #expect(answered.map { $0["text"] as? String } == [Self.bytesLeft(expected, tag: nil), Self.bytesLeft(expected, tag: "ja")])
    }

    @Test("Publishing a push campaign whose app lacks credentials or devices lists what is missing and asks first, from its page and from the composer; confirmed, it publishes")
    func publishAsksWhatIsMissing() async throws {
        let (app, browser, shop) = try await Self.setUp()
        let id = try app.database.campaigns.create(Campaign(app: shop, name: "Sale", push: Self.notification), state: .draft, actor: .commandLine, now: app.clock.now)

        // Neither credentials nor devices: both said, nothing published.
        let asked = try browser.submit("/campaigns/\(id)/publish", from: "/campaigns/\(id)", [:])
        #expect(asked.status == 200)
        #expect(asked.text.contains("<h1>Publish “\u{2068}Sale\u{2069}”?</h1>"))
        #expect(asked.text.contains("<li>\u{2068}Shop\u{2069} has no APNs key and no FCM service account, so no notification can be sent."))
        #expect(asked.text.contains("<li>No device of \u{2068}Shop\u{2069} has registered a push token, so nobody would get it.</li>"))
        #expect(asked.text.contains(#"<input type="hidden" name="confirmed" value="yes">"#))
        #expect(try app.database.campaigns.find(id: id)?.state == .draft)
        // Whom it would reach is said on the question, as beside Publish on the draft's page.
        let nobody = "0 registered installations match this targeting. 0 of them can receive pushes."
        #expect(asked.text.contains(#"<p class="audience">\#(nobody)</p>"#))
        #expect(browser.get("/campaigns/\(id)").text.contains(#"<p class="hint audience">\#(nobody)</p>"#))

        // Devices registered with both providers, only APNs set up: the FCM devices are named, counted.
        for index in 0..<3 {
            _ = try app.database.installations.upsert(
                appID: shop, installationID: "pixel-\(index)",
                registration: InstallationRegistration(platform: .android, pushProvider: .fcm, pushToken: "fcm-\(index)", notificationsAllowed: true),
                now: app.clock.now)
        }
        _ = try app.database.installations.upsert(
            appID: shop, installationID: "iphone", registration: InstallationRegistration(platform: .ios, pushProvider: .apns, pushToken: "ab01", notificationsAllowed: true),
            now: app.clock.now)
        let credentials = try MockCredentials.generate(tokenURI: "https://oauth2.example.test/token")
        try app.application.services.push.editor.setAPNs(
            appID: shop, keyPEM: credentials.apnsKeyPEM, keyID: credentials.apnsKeyID, teamID: credentials.apnsTeamID, topic: "com.example.shop",
            url: nil, actor: .commandLine, now: app.clock.now)
        let partly = try browser.submit("/campaigns/\(id)/publish", from: "/campaigns/\(id)", [:])
        #expect(partly.status == 200)
        let warnings = partly.text.matches(of: /<li>([^<]*)<\/li>/).map { String($0.output.1) }
        #expect(warnings == ["Devices registered with FCM: 3. \u{2068}Shop\u{2069} has no FCM service account, so they would not get it."])

        // Saved and published from its edit form: the same, above the form, and the draft stays a draft.
        let edited = try browser.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: Self.composed(app: shop, [
            ("push.title", "Sale"), ("push.body", "Half price today"), ("revision", "1"), ("intent", "publish"),
        ]))
        #expect(edited.status == 200, "\(edited.text.prefix(2000))")
        #expect(edited.text.contains("Devices registered with FCM: 3."))
        #expect(edited.text.contains(#"value="publish_anyway">Publish anyway</button>"#))
        #expect(try app.database.campaigns.find(id: id)?.state == .draft)

        // In German, then confirmed: published.
        _ = try browser.submit("/account", from: "/account", ["language": "de", "time_zone": "UTC"])
        let german = try browser.submit("/campaigns/\(id)/publish", from: "/campaigns/\(id)", [:])
        #expect(german.text.contains("Bei FCM registrierte Geräte: 3."))
        #expect(german.text.contains("Trotzdem veröffentlichen"))
        let confirmed = try browser.submit("/campaigns/\(id)/publish", from: "/campaigns/\(id)", ["confirmed": "yes"])
        #expect(confirmed.status == 303)
        #expect(try app.database.campaigns.find(id: id)?.state == .published)

        // Every device reachable: published at once, without asking.
        try app.application.services.push.editor.setFCM(
            appID: shop, serviceAccountJSON: credentials.fcmServiceAccountJSON, url: nil, actor: .commandLine, now: app.clock.now)
        let other = try app.database.campaigns.create(Campaign(app: shop, name: "More", push: Self.notification), state: .draft, actor: .commandLine, now: app.clock.now)
        #expect(try browser.submit("/campaigns/\(other)/publish", from: "/campaigns/\(other)", [:]).status == 303)
        #expect(try app.database.campaigns.find(id: other)?.state == .published)
    }
}
