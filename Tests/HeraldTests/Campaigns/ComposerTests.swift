import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// The composer pages, in process: what a marketer does in the browser, form by form.
@Suite("Campaign composer")
struct ComposerTests {
    /// An admin with one app; returns the app's id too.
    static func setUp() async throws -> (TestApp, TestBrowser, Int64) {
        let (app, admin) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: app.clock.now)
        return (app, admin, shop.id)
    }

    /// A complete card with two buttons, three custom data pairs and two triggers (one filtered).
    static func cardFields(app: Int64, title: String = "Spring sale") -> [(String, String)] {
        [
            ("app", String(app)), ("name", "Spring sale"), ("priority", "3"),
            ("message.layout", "card"),
            ("message.title.text", title), ("message.title.color", "#1A73E8"),
            ("message.body.text", "20% off everything"),
            ("message.imageUrl", "https://example.com/portrait.png"),
            ("message.landscapeImageUrl", "https://example.com/landscape.png"),
            ("message.backgroundColor", "#FFFFFF"),
            ("message.primaryAction.text", "Shop now"), ("message.primaryAction.url", "https://example.com/shop"),
            ("message.primaryAction.buttonColor", "#CC1A73E8"),
            ("message.secondaryAction.text", "Later"),
            ("data.0.key", "promo_code"), ("data.0.value", "SPRING"),
            ("data.1.key", "discount"), ("data.1.value", "20"),
            ("data.2.key", "theme"), ("data.2.value", "green"),
            ("triggers.0.event", "app_launch"),
            ("triggers.1.event", "purchase"),
            ("triggers.1.filters.0.property", "product_id"), ("triggers.1.filters.0.op", "eq"),
            ("triggers.1.filters.0.type", "string"), ("triggers.1.filters.0.value", "sku_123"),
            ("triggers.1.filters.1.property", "value"), ("triggers.1.filters.1.op", "gte"),
            ("triggers.1.filters.1.type", "number"), ("triggers.1.filters.1.value", "9.99"),
            ("schedule.startMode", "publish"), ("schedule.endMode", "never"), ("schedule.timeZone", "Europe/Paris"),
            ("frequency.type", "every_n_days"), ("frequency.days", "7"),
            ("targeting.platforms", "ios"), ("targeting.languages", "en, fa"), ("targeting.percentage", "50"),
        ]
    }

    static func campaignID(_ response: Response) throws -> Int64 {
        let location = try #require(response.headers["Location"])
        return try #require(Int64(location.replacingOccurrences(of: "/campaigns/", with: "")))
    }

    @Test("The composer offers all six layouts and names every field by its JSON path")
    func composerForm() async throws {
        let (_, admin, _) = try await Self.setUp()
        let page = admin.get("/campaigns/new").text
        for layout in ["card", "modal", "image_only", "banner", "slideup", "fullscreen"] {
            #expect(page.contains(#"name="message.layout" value="\#(layout)""#), "\(layout)")
        }
        for name in ["message.title.text", "message.title.color", "message.imageUrl", "message.primaryAction.url",
                     "message.secondaryAction.text", "message.action.url", "message.dismiss.seconds", "message.slideFrom",
                     "message.orientation", "data.0.key", "data.0.value", "triggers.0.event", "schedule.start",
                     "schedule.timeZone", "frequency.days", "targeting.percentage", "testOnDevice", "priority"] {
            #expect(page.contains(#"name="\#(name)""#), "\(name)")
        }
        #expect(page.contains(#"<label for="field-message-title-text">Title</label>"#), "every input has a label")
        #expect(page.contains(#"name="intent" value="publish""#))
        #expect(page.contains(#"name="intent" value="draft""#))
    }

    @Test("A complete card is published and every part is stored as composed")
    func publishCard() async throws {
        // Given a composed card, when it is published
        let (app, admin, shop) = try await Self.setUp()
        let response = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.cardFields(app: shop) + [("intent", "publish")])
        #expect(response.status == 303)
        let id = try Self.campaignID(response)
        // Then it is stored live with everything
        let stored = try #require(try app.database.campaigns.find(id: id))
        #expect(stored.state == .published)
        #expect(stored.status(at: app.clock.now) == .running)
        let campaign = stored.campaign
        #expect(campaign.priority == 3)
        #expect(campaign.message.primaryAction == Message.Button(text: "Shop now", buttonColor: "#CC1A73E8", url: "https://example.com/shop"))
        #expect(campaign.message.secondaryAction == Message.Button(text: "Later"))
        #expect(campaign.data.pairs.map(\.key) == ["promo_code", "discount", "theme"])
        #expect(campaign.triggers == [
            Trigger(event: "app_launch"),
            Trigger(event: "purchase", filters: [
                PropertyFilter(property: "product_id", op: .eq, value: .string("sku_123")),
                PropertyFilter(property: "value", op: .gte, value: .number(9.99)),
            ]),
        ])
        #expect(campaign.frequency == Frequency(type: .everyNDays, days: 7))
        #expect(campaign.targeting.platforms == [.ios])
        #expect(campaign.targeting.languages == ["en", "fa"])
        #expect(campaign.schedule.timeZone == "Europe/Paris")
        // And the summary shows it, data in order
        let summary = admin.get("/campaigns/\(id)").text
        #expect(summary.contains("Running"))
        let positions = ["promo_code", "discount", "theme"].compactMap { summary.range(of: $0)?.lowerBound }
        #expect(positions.count == 3 && positions == positions.sorted())
        #expect(summary.contains(#"<code dir="ltr">product_id</code> equals <bdi>sku_123</bdi>"#))
        let audit = try app.database.auditLog.page(offset: 0, limit: 1)
        #expect(audit.first?.action == "campaign.create")
        #expect(audit.first?.actor == "admin@example.com")
    }

    @Test("An invalid publish is refused with each error named, input kept, and nothing saved")
    func invalidPublish() async throws {
        let (app, admin, shop) = try await Self.setUp()
        var fields = Self.cardFields(app: shop).filter { $0.0 != "message.imageUrl" && $0.0 != "message.title.color" && $0.0 != "triggers.0.event" && $0.0 != "message.primaryAction.url" }
        fields += [("message.title.color", "red"), ("triggers.0.event", "firebase_open"),
                   ("message.primaryAction.url", "javascript:alert(1)"), ("intent", "publish")]
        let response = try admin.submit("/campaigns", from: "/campaigns/new", pairs: fields)
        #expect(response.status == 422)
        let page = response.text
        #expect(page.contains("A card needs a portrait image"))
        #expect(page.contains(##"href="#field-message-imageUrl""##))
        #expect(page.contains("Use a color like #1A73E8"))
        #expect(page.contains("reserved; choose another name"))
        #expect(page.contains("“\u{2068}javascript\u{2069}:” links are not allowed"))
        #expect(page.contains(#"aria-describedby="field-message-title-color-error""#))
        #expect(page.contains(#"value="red""#), "input is kept")
        #expect(page.contains(#"value="firebase_open""#))
        #expect(page.contains(#"value="SPRING""#))
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)
    }

    @Test("A push_click trigger filters on campaign_id as a number; text, another property or “contains” is refused next to its field")
    func pushClickFilter() async throws {
        let (app, admin, shop) = try await Self.setUp()
        let base = Self.cardFields(app: shop).filter { !$0.0.hasPrefix("triggers.") } + [("intent", "publish")]
        func filter(_ property: String, _ op: String, _ type: String, _ value: String) -> [(String, String)] {
            [("triggers.0.event", "push_click"), ("triggers.0.filters.0.property", property), ("triggers.0.filters.0.op", op),
             ("triggers.0.filters.0.type", type), ("triggers.0.filters.0.value", value)]
        }

        // Given a message that follows the push campaign 42
        let published = try admin.submit("/campaigns", from: "/campaigns/new", pairs: base + filter("campaign_id", "eq", "number", "42"))
        #expect(published.status == 303, "\(published.text.components(separatedBy: "error-summary").dropFirst().first?.prefix(600) ?? "")")
        let stored = try #require(try app.database.campaigns.find(id: try Self.campaignID(published)))
        #expect(stored.campaign.triggers == [Trigger(event: "push_click", filters: [PropertyFilter(property: "campaign_id", op: .eq, value: .number(42))])])

        // When the id is typed as text, another property is named, or "contains" is chosen: refused at that field
        for (fields, field, message) in [
            (filter("campaign_id", "eq", "string", "42"), "triggers-0-filters-0-value", "set the value&#39;s type to number"),
            (filter("screen", "eq", "string", "home"), "triggers-0-filters-0-property", "can filter only on campaign_id"),
            (filter("campaign_id", "contains", "string", "4"), "triggers-0-filters-0-op", "compare it with equals"),
        ] {
            let refused = try admin.submit("/campaigns", from: "/campaigns/new", pairs: base + fields)
            #expect(refused.status == 422)
            #expect(refused.text.contains(#"id="field-\#(field)-error""#), "\(field)")
            #expect(refused.text.contains(message), "\(message)")
        }
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 1)
    }

    @Test("Drafts may be incomplete but not malformed")
    func drafts() async throws {
        let (app, admin, shop) = try await Self.setUp()
        let incomplete = try admin.submit("/campaigns", from: "/campaigns/new",
                                          pairs: [("app", String(shop)), ("name", "Idea"), ("message.layout", "fullscreen"), ("intent", "draft")])
        #expect(incomplete.status == 303)
        let id = try Self.campaignID(incomplete)
        #expect(try app.database.campaigns.find(id: id)?.state == .draft)
        let malformed = try admin.submit("/campaigns", from: "/campaigns/new", pairs: [
            ("app", String(shop)), ("name", "Bad"), ("message.layout", "banner"), ("message.backgroundColor", "#12"), ("intent", "draft"),
        ])
        #expect(malformed.status == 422)
        // Publishing the incomplete draft from its page is refused with the reasons
        let publish = try admin.submit("/campaigns/\(id)/publish", from: "/campaigns/\(id)", [:])
        #expect(publish.status == 422)
        #expect(publish.text.contains("needs an image"))
        #expect(publish.text.contains("Add at least one trigger"))
        #expect(try app.database.campaigns.find(id: id)?.state == .draft)
    }

    @Test("Layouts cannot be published without their parts", arguments: [
        ("image_only", [("message.action.url", "https://example.com")], "message.imageUrl"),
        ("fullscreen", [("message.title.text", "Hi"), ("message.body.text", "Body")], "message.imageUrl"),
        ("card", [("message.title.text", "Hi"), ("message.imageUrl", "https://example.com/p.png"), ("message.backgroundColor", "#FFFFFF"),
                  ("message.primaryAction.url", "https://example.com")], "message.primaryAction.text"),
        ("slideup", [("message.imageUrl", "https://example.com/p.png")], "message.body.text"),
        ("banner", [("message.body.text", "Body")], "message.title.text"),
    ])
    func layoutCompleteness(layout: String, fields: [(String, String)], missing: String) async throws {
        let (app, admin, shop) = try await Self.setUp()
        let response = try admin.submit("/campaigns", from: "/campaigns/new", pairs: [
            ("app", String(shop)), ("name", "Test"), ("message.layout", layout), ("triggers.0.event", "app_launch"), ("intent", "publish"),
        ] + fields)
        #expect(response.status == 422)
        #expect(response.text.contains(##"href="#field-\##(missing.replacingOccurrences(of: ".", with: "-"))""##))
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)
    }

    @Test("Text in any script round-trips byte for byte and is shown with dir=auto; markup shows as text")
    func anyScript() async throws {
        let (app, admin, shop) = try await Self.setUp()
        let persian = "تخفیف ویژه\u{200C}ای برای شما"
        var fields = Self.cardFields(app: shop, title: persian).filter { $0.0 != "name" }
        fields += [("name", "<script>alert('x')</script> 日本語 🎉"), ("data.3.key", "مفتاح"), ("data.3.value", "قيمة 🎁"), ("intent", "publish")]
        let id = try Self.campaignID(try admin.submit("/campaigns", from: "/campaigns/new", pairs: fields))
        let campaign = try #require(try app.database.campaigns.find(id: id)?.campaign)
        #expect(Array(campaign.message.title?.text.utf8 ?? "".utf8) == Array(persian.utf8))
        #expect(campaign.data.pairs.last == CustomData.Pair(key: "مفتاح", value: "قيمة 🎁"))
        for page in [admin.get("/campaigns/\(id)").text, admin.get("/campaigns").text, admin.get("/campaigns/\(id)/edit").text] {
            #expect(!page.contains("<script>alert"))
            #expect(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; 日本語 🎉"))
        }
        #expect(admin.get("/campaigns/\(id)").text.contains(#"<dd><bdi>\#(persian)</bdi> (<code dir="ltr">#1A73E8</code>)</dd>"#))
        #expect(admin.get("/campaigns/\(id)/edit").text.contains(#"value="\#(persian)" dir="auto""#))
    }

    @Test("Saving over a newer revision answers 409, shows the other change, and overwrites nothing")
    func staleEdit() async throws {
        // Given a campaign two people open at revision 1
        let (app, admin, shop) = try await Self.setUp()
        try app.createUser(email: "eve@example.com", role: .editor)
        let eve = app.browser(address: "10.3.0.1")
        _ = try eve.submit("/login", from: "/login", ["email": "eve@example.com", "password": "correct horse battery"])
        let id = try Self.campaignID(try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.cardFields(app: shop) + [("intent", "draft")]))
        let adminForm = admin.get("/campaigns/\(id)/edit").text
        let token = try #require(TestBrowser.csrfToken(in: adminForm))
        #expect(adminForm.contains(#"name="revision" value="1""#))

        // When Eve saves first
        let eveSave = try eve.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit",
                                     pairs: Self.cardFields(app: shop, title: "Eve's title") + [("revision", "1"), ("intent", "draft")])
        #expect(eveSave.status == 303)
        // And the admin saves from the stale revision
        let stale = admin.post("/campaigns/\(id)", [("csrf_token", token)] + Self.cardFields(app: shop, title: "Admin's title") + [("revision", "1"), ("intent", "draft")])

        // Then the admin gets 409 with Eve's change shown and their own input kept
        #expect(stale.status == 409)
        #expect(stale.text.contains("Someone else saved this campaign"))
        #expect(stale.text.contains("eve@example.com"))
        #expect(stale.text.contains("<td><bdi>Title</bdi></td>"))
        #expect(stale.text.contains("Eve&#39;s title"))
        #expect(stale.text.contains(#"value="Admin&#39;s title""#))
        #expect(stale.text.contains(#"name="revision" value="2""#))
        #expect(try app.database.campaigns.find(id: id)?.campaign.message.title?.text == "Eve's title")

        // And saving again, knowingly, on top of revision 2 works
        let again = admin.post("/campaigns/\(id)", [("csrf_token", token)] + Self.cardFields(app: shop, title: "Admin's title") + [("revision", "2"), ("intent", "draft")])
        #expect(again.status == 303)
        #expect(try app.database.campaigns.find(id: id)?.revision == 3)
    }

    @Test("History lists every revision with its author and what changed")
    func history() async throws {
        let (app, admin, shop) = try await Self.setUp()
        let id = try Self.campaignID(try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.cardFields(app: shop) + [("intent", "publish")]))
        var edited = Self.cardFields(app: shop, title: "Spring sale, last days").filter { !$0.0.hasPrefix("data.1") }
        edited += [("revision", "1"), ("intent", "draft")]
        #expect(try admin.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: edited).status == 303)
        _ = try admin.submit("/campaigns/\(id)/pause", from: "/campaigns/\(id)", [:])

        let page = admin.get("/campaigns/\(id)/history").text
        #expect(page.contains("Revision 3"))
        #expect(page.contains("Revision 2"))
        #expect(page.contains("Revision 1"))
        #expect(page.components(separatedBy: "admin@example.com").count - 1 == 3)
        #expect(page.contains("<bdi>Title</bdi></td><td dir=\"auto\">Spring sale</td><td dir=\"auto\">Spring sale, last days</td>"))
        #expect(page.contains("<bdi>Pair 2 — Key</bdi></td><td dir=\"auto\">discount</td><td dir=\"auto\">theme</td>"))
        #expect(page.contains("<bdi>State</bdi></td><td dir=\"auto\">Published</td><td dir=\"auto\">Paused</td>"))
        #expect(try app.database.campaigns.revisions(id: id).count == 3)
    }

    @Test("Lifecycle: publish, pause, resume, stop, archive; duplicate makes a draft copy; only drafts are deleted")
    func lifecycle() async throws {
        let (app, admin, shop) = try await Self.setUp()
        let id = try Self.campaignID(try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.cardFields(app: shop) + [("intent", "draft")]))
        func state() throws -> CampaignStatus? { try app.database.campaigns.find(id: id)?.status(at: app.clock.now) }
        #expect(try state() == .draft)
        for (action, expected) in [("publish", CampaignStatus.running), ("pause", .paused), ("resume", .running), ("stop", .ended), ("archive", .archived)] {
            let response = try admin.submit("/campaigns/\(id)/\(action)", from: "/campaigns/\(id)", [:])
            #expect(response.status == 303, "\(action)")
            #expect(try state() == expected, "\(action)")
        }
        let refused = try admin.submit("/campaigns/\(id)/pause", from: "/campaigns/\(id)", [:])
        #expect(admin.get(try #require(refused.headers["Location"])).text.contains("Only published campaigns can be paused."))
        #expect(admin.get("/campaigns/\(id)/edit").status == 409)
        #expect(admin.get("/campaigns/\(id)/delete").status == 409)

        let copy = try admin.submit("/campaigns/\(id)/duplicate", from: "/campaigns/\(id)", [:])
        let copyID = try Self.campaignID(copy)
        let duplicated = try #require(try app.database.campaigns.find(id: copyID))
        #expect(duplicated.state == .draft)
        #expect(duplicated.campaign.name == "Spring sale (copy)")
        #expect(duplicated.campaign.message == (try app.database.campaigns.find(id: id))?.campaign.message)

        #expect(admin.get("/campaigns/\(copyID)/delete").text.contains("deleted for good"))
        let deleted = try admin.submit("/campaigns/\(copyID)/delete", from: "/campaigns/\(copyID)/delete", [:])
        #expect(deleted.headers["Location"] == "/campaigns")
        #expect(try app.database.campaigns.find(id: copyID) == nil)
    }

    @Test("The status follows the schedule: scheduled before its start, running inside, ended after")
    func scheduleStatus() async throws {
        let (app, admin, shop) = try await Self.setUp()
        let now = app.clock.now
        let start = LocalDateTimeFormat.string(now.addingTimeInterval(3600), zone: "Asia/Tehran")
        let end = LocalDateTimeFormat.string(now.addingTimeInterval(7200), zone: "Asia/Tehran")
        var fields = Self.cardFields(app: shop).filter { !$0.0.hasPrefix("schedule.") }
        fields += [("schedule.startMode", "at"), ("schedule.start", start), ("schedule.endMode", "at"), ("schedule.end", end),
                   ("schedule.timeZone", "Asia/Tehran"), ("intent", "publish")]
        let id = try Self.campaignID(try admin.submit("/campaigns", from: "/campaigns/new", pairs: fields))
        let stored = try #require(try app.database.campaigns.find(id: id))
        #expect(abs((stored.campaign.schedule.start?.timeIntervalSince(now) ?? 0) - 3600) < 60)
        #expect(stored.status(at: now) == .scheduled)
        #expect(stored.status(at: now.addingTimeInterval(5400)) == .running)
        #expect(stored.status(at: now.addingTimeInterval(7200)) == .ended)
        #expect(admin.get("/campaigns?status=scheduled").text.contains("/campaigns/\(id)\""))
        #expect(!admin.get("/campaigns?status=running").text.contains("/campaigns/\(id)\""))

        let backwards = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.cardFields(app: shop).filter { !$0.0.hasPrefix("schedule.") } + [
            ("schedule.startMode", "at"), ("schedule.start", end), ("schedule.endMode", "at"), ("schedule.end", start),
            ("schedule.timeZone", "Mars/Olympus"), ("intent", "draft"),
        ])
        #expect(backwards.status == 422)
        #expect(backwards.text.contains("is not a time zone"))
    }

    @Test("Rows are added, removed and moved without JavaScript, and nothing is saved meanwhile")
    func rowsWithoutJavaScript() async throws {
        let (app, admin, shop) = try await Self.setUp()
        let base = Self.cardFields(app: shop)
        let added = try admin.submit("/campaigns", from: "/campaigns/new", pairs: base + [("intent", "add:triggers.0.filters")])
        #expect(added.status == 200)
        #expect(added.text.contains(#"name="triggers.0.filters.0.property""#))
        let blank = try admin.submit("/campaigns", from: "/campaigns/new", pairs: [
            ("app", String(shop)), ("message.layout", "card"), ("data.0.key", ""), ("data.0.value", ""), ("intent", "add:data"),
        ])
        #expect(blank.text.contains(#"name="data.1.key""#), "adding a pair gives a second row")
        #expect(!blank.text.contains(#"name="data.2.key""#), "and only one more")
        #expect(!blank.text.contains(#"data-layouts="""#), "fields every layout has carry no layout list")
        let keyField = try #require(blank.text.range(of: #"<input id="field-data-0-key""#))
        let wrapper = try #require(blank.text[..<keyField.lowerBound].range(of: "<div class=\"field", options: .backwards))
        #expect(!blank.text[wrapper.lowerBound..<keyField.lowerBound].contains("data-layouts"), "custom data fields show for every layout")
        let removed = try admin.submit("/campaigns", from: "/campaigns/new", pairs: base + [("intent", "remove:data.0")])
        #expect(removed.text.contains(#"name="data.0.key" type="text" value="discount""#))
        #expect(!removed.text.contains(#"value="promo_code""#))
        let moved = try admin.submit("/campaigns", from: "/campaigns/new", pairs: base + [("intent", "up:data.2")])
        #expect(moved.text.contains(#"name="data.1.key" type="text" value="theme""#))
        #expect(moved.text.contains(#"name="data.2.key" type="text" value="discount""#))
        let switched = try admin.submit("/campaigns", from: "/campaigns/new",
                                        pairs: base.filter { $0.0 != "message.layout" } + [("message.layout", "image_only"), ("intent", "refresh")])
        #expect(switched.text.contains(#"data-layouts="card modal banner fullscreen" hidden>"#), "title is hidden for image_only")
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)
    }

    @Test("The list filters by app and state, searches by name, sorts and pages")
    func list() async throws {
        let (app, admin, shop) = try await Self.setUp()
        #expect(admin.get("/campaigns").text.contains("No campaigns yet"))
        let other = try app.database.apps.create(name: "Blog", platforms: [.web], actor: .commandLine, now: app.clock.now)
        for index in 1...30 {
            var campaign = Campaign(app: index.isMultiple(of: 3) ? other.id : shop, name: "Campaign \(String(format: "%02d", index))",
                                    priority: index % 10 + 1, message: Message(layout: .banner, title: .init(text: "Hi")))
            campaign.triggers = [Trigger(event: "app_launch")]
            _ = try app.database.campaigns.create(campaign, state: index.isMultiple(of: 2) ? .published : .draft, actor: .commandLine, now: app.clock.now)
            app.clock.advance(1)
        }
        let first = admin.get("/campaigns").text
        #expect(first.contains("30 campaigns"))
        #expect(first.contains("Page 1 of 2"))
        #expect(first.contains("Campaign 30"))
        #expect(!first.contains("Campaign 05<"))
        #expect(admin.get("/campaigns?page=2").text.contains("Campaign 05<"))
        let far = admin.get("/campaigns?page=\(Int.max)")
        #expect(far.status == 200, "a page far past the end is empty, not an overflow")
        #expect(!far.text.contains("Campaign 05<"))
        #expect(admin.get("/campaigns?app=\(other.id)").text.contains("10 campaigns"))
        #expect(admin.get("/campaigns?status=draft").text.contains("15 campaigns"))
        #expect(admin.get("/campaigns?status=running&app=\(other.id)").text.contains("5 campaigns"))
        #expect(admin.get("/campaigns?q=Campaign%201").text.contains("10 campaigns"))
        let byName = admin.get("/campaigns?sort=name").text
        #expect(try #require(byName.range(of: "Campaign 01")).lowerBound < #require(byName.range(of: "Campaign 02")).lowerBound)
        #expect(admin.get("/campaigns?q=nothing%25like").text.contains("No campaign matches"))
    }

    @Test("Viewers read campaigns but cannot reach the composer or any action")
    func viewerAccess() async throws {
        let (app, admin, shop) = try await Self.setUp()
        let id = try Self.campaignID(try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.cardFields(app: shop) + [("intent", "draft")]))
        try app.createUser(email: "viv@example.com", role: .viewer)
        let viewer = app.browser(address: "10.4.0.1")
        _ = try viewer.submit("/login", from: "/login", ["email": "viv@example.com", "password": "correct horse battery"])
        #expect(viewer.get("/campaigns/\(id)").status == 200)
        #expect(!viewer.get("/campaigns/\(id)").text.contains("/campaigns/\(id)/edit"))
        #expect(viewer.get("/campaigns/\(id)/history").status == 200)
        #expect(viewer.get("/campaigns/new").status == 403)
        #expect(viewer.get("/campaigns/\(id)/edit").status == 403)
        let token = try #require(TestBrowser.csrfToken(in: viewer.get("/campaigns/\(id)").text))
        for action in ["publish", "duplicate", "archive", "delete"] {
            #expect(viewer.post("/campaigns/\(id)/\(action)", [("csrf_token", token)]).status == 403, "\(action)")
        }
        #expect(viewer.post("/campaigns", [("csrf_token", token)] + Self.cardFields(app: shop)).status == 403)
        #expect(try app.database.campaigns.find(id: id)?.state == .draft)
    }

    @Test("Per-app settings: minimum interval and test devices")
    func appSettings() async throws {
        let (app, admin, shop) = try await Self.setUp()
        #expect(admin.get("/apps/\(shop)").text.contains(#"value="30""#))
        let bad = try admin.submit("/apps/\(shop)/settings", from: "/apps/\(shop)", ["minIntervalSeconds": "-5"])
        #expect(bad.status == 422)
        _ = try admin.submit("/apps/\(shop)/settings", from: "/apps/\(shop)", ["minIntervalSeconds": "45"])
        #expect(try app.database.apps.find(id: shop)?.minIntervalSeconds == 45)

        let added = try admin.submit("/apps/\(shop)/devices", from: "/apps/\(shop)", ["deviceName": "Sara's iPhone", "installationId": "iid-123"])
        #expect(added.status == 303)
        let twice = try admin.submit("/apps/\(shop)/devices", from: "/apps/\(shop)", ["deviceName": "Again", "installationId": "iid-123"])
        #expect(twice.status == 422)
        #expect(twice.text.contains("already a test device"))
        let device = try #require(try app.database.apps.testDevices(appID: shop).first)
        #expect(device.name == "Sara's iPhone")
        _ = try admin.submit("/apps/\(shop)/devices/\(device.id)/remove", from: "/apps/\(shop)", [:])
        #expect(try app.database.apps.testDevices(appID: shop).isEmpty)
    }
}

/// `datetime-local` text for a time in a zone, as a browser would send it.
enum LocalDateTimeFormat {
    static func string(_ date: Date, zone: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: zone)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
        return formatter.string(from: date)
    }
}
