import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

@Suite("Campaign management API")
struct CampaignAPITests {
    struct Fixture {
        let app: TestApp
        let shop: Int64
        let writeKey: String
        let readKey: String

        func call(_ method: String, _ target: String, key: String? = nil, json: String? = nil, headers: [(String, String)] = []) -> Response {
            var all = headers
            all.append(("Authorization", "Bearer \(key ?? writeKey)"))
            if json != nil { all.append(("Content-Type", "application/json")) }
            return app.respond(Request(method: method, target: target, headers: HTTPHeaders(all), body: Array((json ?? "").utf8)))
        }

        func document(_ response: Response) throws -> Campaign {
            try CampaignJSON.decoder().decode(Campaign.self, from: Data(response.body))
        }
    }

    static func fixture() async throws -> Fixture {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let write = try app.database.apiKeys.create(appID: shop.id, name: "CI script", scopes: [.campaignsRead, .campaignsWrite], actor: .commandLine, now: app.clock.now)
        let read = try app.database.apiKeys.create(appID: shop.id, name: "reader", scopes: [.campaignsRead], actor: .commandLine, now: app.clock.now)
        return Fixture(app: app, shop: shop.id, writeKey: write.secret, readKey: read.secret)
    }

    static func cardJSON(app: Int64, title: String = "Spring sale") -> String {
        """
        {"app": \(app), "name": "Spring sale", "priority": 2,
         "triggers": [{"event": "purchase", "filters": [{"property": "product_id", "op": "eq", "value": "sku_1"}]}],
         "message": {"layout": "card", "title": {"text": "\(title)", "color": "#1A73E8"}, "imageUrl": "https://example.com/p.png",
                     "backgroundColor": "#FFFFFF", "primaryAction": {"text": "Shop", "url": "https://example.com/shop"},
                     "secondaryAction": {"text": "Later"}},
         "data": [{"key": "promo", "value": "SPRING"}, {"key": "discount", "value": "20"}]}
        """
    }

    @Test("A card created by API reads back equal, with its id, status, revision and ETag")
    func createAndRead() async throws {
        let fixture = try await Self.fixture()
        let created = fixture.call("POST", "/api/v1/campaigns", json: Self.cardJSON(app: fixture.shop))
        #expect(created.status == 201)
        let document = try fixture.document(created)
        let id = try #require(document.id)
        #expect(created.headers["Location"] == "/api/v1/campaigns/\(id)")
        #expect(created.headers["ETag"] == "\"r1\"")
        #expect(document.status == .draft)
        #expect(document.revision == 1)

        let read = fixture.call("GET", "/api/v1/campaigns/\(id)", key: fixture.readKey)
        #expect(read.status == 200)
        #expect(read.headers["ETag"] == "\"r1\"")
        let sent = try CampaignJSON.decoder().decode(Campaign.self, from: Data(Self.cardJSON(app: fixture.shop).utf8))
        #expect(try fixture.document(read).content == sent.content)
        #expect(try fixture.app.database.auditLog.page(offset: 0, limit: 1).first?.actor == "API key CI script")
    }

    @Test("An invalid campaign gets 422 naming each field path")
    func invalid() async throws {
        let fixture = try await Self.fixture()
        let body = """
            {"app": \(fixture.shop), "name": "Bad", "message": {"layout": "card", "title": {"text": "Hi", "color": "blue"},
             "imageUrl": "http://example.com/p.png"}}
            """
        let response = fixture.call("POST", "/api/v1/campaigns", json: body)
        #expect(response.status == 422)
        let error = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: [String: Any]]
        #expect(error?["error"]?["code"] as? String == "invalid")
        let paths = (error?["error"]?["fields"] as? [[String: String]])?.compactMap { $0["path"] } ?? []
        #expect(paths.contains("message.imageUrl"))
        #expect(paths.contains("message.title.color"))
        #expect(try fixture.app.database.campaigns.list(CampaignQuery(), now: fixture.app.clock.now).total == 0)
    }

    @Test("A conversion goal is stored, read back and sent to devices in the feed; a bad one is a 422 naming each path")
    func conversionGoal() async throws {
        let fixture = try await Self.fixture()
        func campaign(_ goal: String) -> String {
            Self.cardJSON(app: fixture.shop).replacingOccurrences(of: #""priority": 2,"#, with: #""priority": 2, "conversion": \#(goal),"#)
        }
        let created = fixture.call("POST", "/api/v1/campaigns", json: campaign(
            #"{"event": "purchase", "filters": [{"property": "value", "op": "gte", "value": 10}], "windowHours": 48}"#))
        #expect(created.status == 201, "\(created.text)")
        let goal = ConversionGoal(event: "purchase", filters: [PropertyFilter(property: "value", op: .gte, value: .number(10))], windowHours: 48)
        #expect(try fixture.document(created).conversion == goal)
        let id = try #require(try fixture.document(created).id)
        #expect(fixture.call("POST", "/api/v1/campaigns/\(id)/publish").status == 200)
        let device = try fixture.app.database.apiKeys.create(
            appID: fixture.shop, name: "app", scopes: [.feedRead], actor: .commandLine, now: fixture.app.clock.now)
        let feed = try CampaignJSON.decoder().decode(Feed.self, from: Data(fixture.call("GET", "/api/v1/feed", key: device.secret).body))
        #expect(feed.campaigns.map(\.conversion) == [goal])
        // Without windowHours, the default
        let defaulted = fixture.call("POST", "/api/v1/campaigns", json: campaign(#"{"event": "signup"}"#))
        #expect(try fixture.document(defaulted).conversion == ConversionGoal(event: "signup", windowHours: 72))

        let refused = fixture.call("POST", "/api/v1/campaigns", json: campaign(
            #"{"event": "1st", "filters": [{"property": "value", "op": "gt", "value": "ten"}], "windowHours": 721}"#))
        #expect(refused.status == 422)
        let error = try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: [String: Any]]
        let paths = Set((error?["error"]?["fields"] as? [[String: String]] ?? []).compactMap { $0["path"] })
        #expect(paths == ["conversion.event", "conversion.filters.0.value", "conversion.windowHours"])
        #expect(refused.text.contains("Enter a window from 1 to 720 hours."))
        let unknownKey = fixture.call("POST", "/api/v1/campaigns", json: campaign(#"{"event": "purchase", "window": 3}"#))
        #expect(unknownKey.status == 422 && unknownKey.text.contains("conversion.window"))
    }

    @Test("A push_click trigger may filter on campaign_id as a number: stored and published; as text or on another property, a 422 at its path")
    func pushClickFilter() async throws {
        let fixture = try await Self.fixture()
        func campaign(_ filter: String) -> String {
            Self.cardJSON(app: fixture.shop).replacingOccurrences(
                of: #"{"event": "purchase", "filters": [{"property": "product_id", "op": "eq", "value": "sku_1"}]}"#,
                with: #"{"event": "push_click", "filters": [\#(filter)]}"#)
        }
        let created = fixture.call("POST", "/api/v1/campaigns", json: campaign(#"{"property": "campaign_id", "op": "eq", "value": 42}"#))
        #expect(created.status == 201, "\(created.text)")
        let document = try fixture.document(created)
        #expect(document.triggers == [Trigger(event: "push_click", filters: [PropertyFilter(property: "campaign_id", op: .eq, value: .number(42))])])
        let id = try #require(document.id)
        #expect(fixture.call("POST", "/api/v1/campaigns/\(id)/publish").status == 200)

        for (filter, path, words) in [
            (#"{"property": "campaign_id", "op": "eq", "value": "42"}"#, "triggers.0.filters.0.value", "is a number"),
            (#"{"property": "screen", "op": "exists"}"#, "triggers.0.filters.0.property", "only on campaign_id"),
            (#"{"property": "campaign_id", "op": "contains", "value": "4"}"#, "triggers.0.filters.0.op", "is a number"),
        ] {
            let refused = fixture.call("POST", "/api/v1/campaigns", json: campaign(filter))
            #expect(refused.status == 422, "\(filter)")
            let error = try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: [String: Any]]
            let fields = error?["error"]?["fields"] as? [[String: String]] ?? []
            #expect(fields.contains { $0["path"] == path && $0["message"]?.contains(words) == true }, "\(filter): \(fields)")
        }
        // The other built-in events still carry no properties
        let launch = fixture.call("POST", "/api/v1/campaigns", json: campaign(#"{"property": "campaign_id", "op": "eq", "value": 42}"#)
            .replacingOccurrences(of: "push_click", with: "app_launch"))
        #expect(launch.status == 422)
        #expect(launch.text.contains("triggers.0.filters"))
    }

    @Test("Bad input is a 4xx that says what is wrong, never a 5xx")
    func badInput() async throws {
        let fixture = try await Self.fixture()
        let malformed = fixture.call("POST", "/api/v1/campaigns", json: #"{"app": 1, "name": "x", "#)
        #expect(malformed.status == 400)
        #expect(malformed.text.contains("not valid JSON"))
        let wrongType = fixture.call("POST", "/api/v1/campaigns", json: #"{"app": 1, "name": "x", "priority": "high", "message": {"layout": "modal"}}"#)
        #expect(wrongType.status == 400)
        #expect(wrongType.text.contains("`priority`"))
        let badLayout = fixture.call("POST", "/api/v1/campaigns", json: #"{"app": 1, "name": "x", "message": {"layout": "popup"}}"#)
        #expect(badLayout.status == 400)
        #expect(badLayout.text.contains("`message.layout`"))
        let missing = fixture.call("POST", "/api/v1/campaigns", json: #"{"app": 1, "name": "x"}"#)
        #expect(missing.status == 400)
        #expect(missing.text.contains("Missing `message`"))
        let form = fixture.app.respond(Request(
            method: "POST", target: "/api/v1/campaigns",
            headers: HTTPHeaders([("Authorization", "Bearer \(fixture.writeKey)"), ("Content-Type", "text/plain")]), body: Array("{}".utf8)))
        #expect(form.status == 415)
        let otherApp = fixture.call("POST", "/api/v1/campaigns", json: Self.cardJSON(app: fixture.shop + 1))
        #expect(otherApp.status == 422)
        #expect(fixture.call("GET", "/api/v1/campaigns/999").status == 404)
        #expect(fixture.call("GET", "/api/v1/campaigns/abc").status == 404)
        #expect(fixture.call("GET", "/api/v1/campaigns?page=0").status == 400)
        #expect(fixture.call("GET", "/api/v1/campaigns?status=sleeping").status == 400)
        let sort = fixture.call("GET", "/api/v1/campaigns?sort=newest")
        #expect(sort.status == 400 && sort.text.contains("Unknown sort “newest”: use updated, name, priority, start."))
        #expect(fixture.call("PATCH", "/api/v1/campaigns/1").status == 405)
    }

    @Test("JSON that is not UTF-8, or nested past any campaign's depth, is a 400 saying so, before it is decoded")
    func unreadableJSON() async throws {
        // Given a valid campaign with a stray byte in its name, and bodies nested 100,000 levels deep
        let fixture = try await Self.fixture()
        var latin1 = Array(Self.cardJSON(app: fixture.shop).utf8)
        let stray = try #require(latin1.firstIndex(of: UInt8(ascii: "S")))
        latin1[stray] = 0xE9
        let nested = [
            String(repeating: "[", count: 100_000),
            String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000),
            String(repeating: #"{"a":"#, count: 100_000),
        ]

        // When they are posted, then each is refused with the reason and where it was found
        let notUTF8 = fixture.app.respond(Request(
            method: "POST", target: "/api/v1/campaigns",
            headers: HTTPHeaders([("Authorization", "Bearer \(fixture.writeKey)"), ("Content-Type", "application/json")]), body: latin1))
        #expect(notUTF8.status == 400)
        #expect(notUTF8.text.contains("not valid UTF-8 at byte \(stray)"))
        for body in nested {
            let response = fixture.call("POST", "/api/v1/campaigns", json: body)
            #expect(response.status == 400)
            #expect(response.text.contains("more than \(JSONBody.maxDepth) levels deep (at byte"))
        }
        #expect(try fixture.app.database.campaigns.list(CampaignQuery(), now: fixture.app.clock.now).total == 0)
    }

    @Test("Valid JSON with a number that does not fit its field is a 400 that says so, not 'not valid JSON'")
    func numbersThatDoNotFit() async throws {
        // Given campaigns whose priority has a fraction, and whose app id is past 64 bits
        let fixture = try await Self.fixture()
        let card = Self.cardJSON(app: fixture.shop)
        for body in [card.replacingOccurrences(of: #""priority": 2"#, with: #""priority": 2.5"#),
                     card.replacingOccurrences(of: #""app": \#(fixture.shop)"#, with: #""app": 3775896877046670705100697345038745600"#)] {
            #expect(body != card)

            // When it is posted, then the answer names the problem
            let response = fixture.call("POST", "/api/v1/campaigns", json: body)
            #expect(response.status == 400)
            #expect(response.text.contains("A number does not fit its field"))
        }
        #expect(fixture.call("POST", "/api/v1/campaigns", json: #"{"app": 1,"#).text.contains("not valid JSON"), "broken JSON still says so")
    }

    @Test("A 422's message lists each problem once, ending with one full stop")
    func invalidMessage() async throws {
        let fixture = try await Self.fixture()
        // (A card has no dismissal, so a banner's seconds are what is judged.)
        let body = Self.cardJSON(app: fixture.shop).replacingOccurrences(of: #""layout": "card","#, with: #""layout": "banner", "dismiss": {"seconds": 500},"#)
        let response = fixture.call("POST", "/api/v1/campaigns", json: body)
        #expect(response.status == 422)
        #expect(response.text.contains(#""message":"1 field is invalid: message.dismiss.seconds: Choose from 1 to 120 seconds.""#))
    }

    @Test("The depth check counts brackets outside strings only, and lets Herald's deepest documents through")
    func depthCheck() throws {
        // Given brackets inside strings (escaped quotes included) and a campaign export at full depth
        let quoted = #"{"name": "[[[[{{{{\"[[[[", "data": [{"key": "k", "value": "]]]]}}}}"}]}"#
        let limit = JSONBody.maxDepth
        let atLimit = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)

        // Then only real nesting counts, up to the limit
        #expect(JSONBody.firstTooDeep(Array(quoted.utf8), limit: 3) == nil)
        let thirdLevel = quoted.utf8.distance(from: quoted.startIndex, to: try #require(quoted.range(of: #"[{"key"#)).lowerBound) + 1
        #expect(JSONBody.firstTooDeep(Array(quoted.utf8), limit: 2) == thirdLevel)
        #expect(JSONBody.firstTooDeep(Array(atLimit.utf8), limit: limit) == nil)
        #expect(JSONBody.firstTooDeep(Array(("[" + atLimit + "]").utf8), limit: limit) == limit)
        #expect(JSONBody.firstInvalidUTF8(Array("مریم ✓ 🙂".utf8)) == nil)
        #expect(JSONBody.firstInvalidUTF8([0x61, 0xED, 0xA0, 0x80]) == 1, "an encoded surrogate is not UTF-8")
        #expect(JSONBody.firstInvalidUTF8([0x61, 0x62, 0xC3]) == 2, "a sequence cut short")
        let export = CampaignExport(
            schemaVersion: CampaignJSON.schemaVersion, exportedAt: Date(),
            campaigns: [try CampaignJSON.decoder().decode(Campaign.self, from: Data(Self.cardJSON(app: 1).utf8))])
        try JSONBody.check(Array(try CampaignJSON.encoder().encode(export)))
    }

    @Test("Scopes: a read-only key cannot write; a key without campaign scopes cannot read")
    func scopes() async throws {
        let fixture = try await Self.fixture()
        #expect(fixture.call("POST", "/api/v1/campaigns", key: fixture.readKey, json: Self.cardJSON(app: fixture.shop)).status == 403)
        let feedOnly = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "feed", scopes: [.feedRead], actor: .commandLine, now: fixture.app.clock.now)
        #expect(fixture.call("GET", "/api/v1/campaigns", key: feedOnly.secret).status == 403)
        #expect(fixture.call("GET", "/api/v1/campaigns", key: "nope").status == 401)
    }

    @Test("PUT replaces; If-Match with an older revision gets 412 and changes nothing")
    func putAndIfMatch() async throws {
        let fixture = try await Self.fixture()
        let id = try #require(try fixture.document(fixture.call("POST", "/api/v1/campaigns", json: Self.cardJSON(app: fixture.shop))).id)
        let updated = fixture.call("PUT", "/api/v1/campaigns/\(id)", json: Self.cardJSON(app: fixture.shop, title: "Second"), headers: [("If-Match", "\"r1\"")])
        #expect(updated.status == 200)
        #expect(updated.headers["ETag"] == "\"r2\"")
        #expect(try fixture.document(updated).message.title?.text == "Second")

        let stale = fixture.call("PUT", "/api/v1/campaigns/\(id)", json: Self.cardJSON(app: fixture.shop, title: "Stale"), headers: [("If-Match", "\"r1\"")])
        #expect(stale.status == 412)
        #expect(stale.text.contains(#""code":"precondition_failed""#))
        #expect(try fixture.app.database.campaigns.find(id: id)?.campaign.message.title?.text == "Second")
    }

    @Test("If-Match follows RFC 9110: `*` and lists match, weak and other ETags get 412, and only non-ETags a 400")
    func ifMatchForms() async throws {
        // Given a campaign at revision 1
        let fixture = try await Self.fixture()
        let id = try #require(try fixture.document(fixture.call("POST", "/api/v1/campaigns", json: Self.cardJSON(app: fixture.shop))).id)
        func put(_ ifMatch: String) -> Int {
            fixture.call("PUT", "/api/v1/campaigns/\(id)", json: Self.cardJSON(app: fixture.shop), headers: [("If-Match", ifMatch)]).status
        }

        // Then `*` and a list naming the current revision replace it; other tags are a failed precondition
        #expect(put("*") == 200)  // now at r2
        #expect(put(#""r1", "r2""#) == 200)  // now at r3
        #expect(put(#"W/"r3""#) == 412, "If-Match compares strongly")
        #expect(put(#""r1", "abc""#) == 412)
        #expect(put("r3") == 400)
        #expect(put(#""r3"#) == 400)
        #expect(put(#""r3""#) == 200)
    }

    @Test("Lifecycle actions, with 422 for an incomplete publish and 409 for a wrong state; DELETE only drafts")
    func lifecycle() async throws {
        let fixture = try await Self.fixture()
        let incomplete = try #require(try fixture.document(fixture.call(
            "POST", "/api/v1/campaigns", json: #"{"app": \#(fixture.shop), "name": "Idea", "message": {"layout": "image_only"}}"#)).id)
        let refused = fixture.call("POST", "/api/v1/campaigns/\(incomplete)/publish")
        #expect(refused.status == 422)
        #expect(refused.text.contains(#""path":"message.imageUrl""#))
        #expect(refused.text.contains(#""path":"triggers""#))
        #expect(fixture.call("DELETE", "/api/v1/campaigns/\(incomplete)").status == 204)
        #expect(fixture.call("GET", "/api/v1/campaigns/\(incomplete)").status == 404)

        let id = try #require(try fixture.document(fixture.call("POST", "/api/v1/campaigns", json: Self.cardJSON(app: fixture.shop))).id)
        for (action, status) in [("publish", CampaignStatus.running), ("pause", .paused), ("resume", .running), ("stop", .ended), ("archive", .archived)] {
            let response = fixture.call("POST", "/api/v1/campaigns/\(id)/\(action)")
            #expect(response.status == 200, "\(action)")
            #expect(try fixture.document(response).status == status, "\(action)")
        }
        #expect(fixture.call("POST", "/api/v1/campaigns/\(id)/pause").status == 409)
        #expect(fixture.call("DELETE", "/api/v1/campaigns/\(id)").status == 409)
    }

    @Test("Publishing a push campaign through the API publishes it, its answer saying what the app lacks to reach devices; in-app campaigns have none; the answer PUT back is read without them")
    func publishWarnings() async throws {
        let fixture = try await Self.fixture()
        let created = fixture.call("POST", "/api/v1/campaigns", json: #"{"app": \#(fixture.shop), "name": "Sale", "channel": "push", "push": {"title": "Sale"}}"#)
        let id = try #require(try fixture.document(created).id)
        let published = fixture.call("POST", "/api/v1/campaigns/\(id)/publish")
        #expect(published.status == 200)
        #expect(try fixture.document(published).status == .running, "published all the same: a script is told, not asked")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(published.body)) as? [String: Any])
        let warnings = try #require(answer["warnings"] as? [[String: String]])
        #expect(warnings.map { $0["code"] } == ["no_credentials", "no_devices"])
        #expect(warnings.first?["message"]?.contains("no APNs key and no FCM service account") == true)
        #expect(published.headers["ETag"] == "\"r2\"")

        // Sent back as it came, the document is read without its warnings.
        let replaced = fixture.call("PUT", "/api/v1/campaigns/\(id)", json: published.text, headers: [("If-Match", "\"r2\"")])
        #expect(replaced.status == 200, "\(replaced.text)")
        #expect((try JSONSerialization.jsonObject(with: Data(replaced.body)) as? [String: Any])?["warnings"] == nil)

        // A device registered with APNs, and APNs not set up: that is said, with the count.
        _ = try fixture.app.database.installations.upsert(
            appID: fixture.shop, installationID: "iphone",
            registration: InstallationRegistration(platform: .ios, pushProvider: .apns, pushToken: "ab01", notificationsAllowed: true), now: fixture.app.clock.now)
        let second = try #require(try fixture.document(fixture.call(
            "POST", "/api/v1/campaigns", json: #"{"app": \#(fixture.shop), "name": "More", "channel": "push", "push": {"title": "More"}}"#)).id)
        let told = try JSONSerialization.jsonObject(with: Data(fixture.call("POST", "/api/v1/campaigns/\(second)/publish").body)) as? [String: Any]
        #expect((told?["warnings"] as? [[String: String]])?.map { $0["code"] } == ["apns_not_set_up"])
        #expect((told?["warnings"] as? [[String: String]])?.first?["message"]?.hasPrefix("Installations registered with APNs: 1.") == true)

        let card = try #require(try fixture.document(fixture.call("POST", "/api/v1/campaigns", json: Self.cardJSON(app: fixture.shop))).id)
        let inApp = try JSONSerialization.jsonObject(with: Data(fixture.call("POST", "/api/v1/campaigns/\(card)/publish").body)) as? [String: Any]
        #expect((inApp?["warnings"] as? [Any])?.isEmpty == true)
    }

    @Test("Publishing says what would keep a campaign from ever showing: a campaign that always shows instead, targeting no registered installation matches, a push in devices' time that ends before the last zone reaches it")
    func reachWarnings() async throws {
        let fixture = try await Self.fixture()
        func codes(_ response: Response) throws -> [String: String] {
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let warnings = try #require(answer["warnings"] as? [[String: String]])
            return Dictionary(uniqueKeysWithValues: warnings.compactMap { warning in warning["code"].map { ($0, warning["message"] ?? "") } })
        }
        func created(_ json: String) throws -> Int64 { try #require(try fixture.document(fixture.call("POST", "/api/v1/campaigns", json: json)).id) }
        _ = try fixture.app.database.installations.upsert(
            appID: fixture.shop, installationID: "iphone", registration: InstallationRegistration(platform: .ios, language: "de", notificationsAllowed: true), now: fixture.app.clock.now)

        // A priority-1 message on every purchase, to everyone, each time; then the card (priority 2, purchase of sku_1).
        let always = try created(#"""
            {"app": \#(fixture.shop), "name": "Always first", "priority": 1, "triggers": [{"event": "purchase"}], "frequency": {"type": "always"},
             "message": {"layout": "modal", "title": {"text": "Thanks"}}}
            """#)
        #expect(try codes(fixture.call("POST", "/api/v1/campaigns/\(always)/publish")).isEmpty)
        let card = try created(Self.cardJSON(app: fixture.shop))
        let outranked = try codes(fixture.call("POST", "/api/v1/campaigns/\(card)/publish"))
        #expect(Array(outranked.keys) == ["outranked"])
        #expect(outranked["outranked"]?.contains(#""Always first""#) == true)

        // Persian devices only: the one registered installation speaks German.
        let persian = try created(Self.cardJSON(app: fixture.shop).replacingOccurrences(of: #""priority": 2,"#, with: #""priority": 1, "targeting": {"languages": ["fa"]},"#))
        #expect(Array(try codes(fixture.call("POST", "/api/v1/campaigns/\(persian)/publish")).keys) == ["no_audience"])

        // At 09:00 in each device's zone from an hour ago, for three hours: UTC−12 reaches 09:00 later than that.
        let start = UTCTime.rfc3339(fixture.app.clock.now - 3600), end = UTCTime.rfc3339(fixture.app.clock.now + 3 * 3600)
        let local = try created(#"""
            {"app": \#(fixture.shop), "name": "Morning", "channel": "push", "push": {"title": "Good morning", "inDeviceTimeZone": true},
             "schedule": {"start": "\#(start)", "end": "\#(end)", "timeZone": "Asia/Tokyo"}}
            """#)
        let late = try codes(fixture.call("POST", "/api/v1/campaigns/\(local)/publish"))
        #expect(late["ends_before_last_zone"]?.contains("(UTC−12)") == true, "\(late)")
    }

    @Test("The list pages through the key's app only, with filters")
    func list() async throws {
        let fixture = try await Self.fixture()
        for index in 0..<5 {
            _ = fixture.call("POST", "/api/v1/campaigns", json: Self.cardJSON(app: fixture.shop).replacingOccurrences(of: "\"Spring sale\", \"priority\"", with: "\"Sale \(index)\", \"priority\""))
        }
        let other = try fixture.app.database.apps.create(name: "Other", platforms: [.web], actor: .commandLine, now: fixture.app.clock.now)
        _ = try fixture.app.database.campaigns.create(
            Campaign(app: other.id, name: "Not yours", message: Message(layout: .modal, title: .init(text: "x"))),
            state: .draft, actor: .commandLine, now: fixture.app.clock.now)
        let page = fixture.call("GET", "/api/v1/campaigns?pageSize=2&page=2", key: fixture.readKey)
        #expect(page.status == 200)
        let body = try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any]
        #expect(body?["total"] as? Int == 5)
        #expect((body?["campaigns"] as? [Any])?.count == 2)
        #expect(!page.text.contains("Not yours"))
        // A page far past the end is empty, not an overflow (found by the schemathesis fuzz)
        let far = fixture.call("GET", "/api/v1/campaigns?page=\(Int.max)", key: fixture.readKey)
        #expect(far.status == 200)
        let farBody = try JSONSerialization.jsonObject(with: Data(far.body)) as? [String: Any]
        #expect((farBody?["campaigns"] as? [Any])?.isEmpty == true)
        #expect(farBody?["total"] as? Int == 5)
        let drafts = fixture.call("GET", "/api/v1/campaigns?status=draft&q=Sale%203", key: fixture.readKey)
        #expect((try JSONSerialization.jsonObject(with: Data(drafts.body)) as? [String: Any])?["total"] as? Int == 1)
    }
}
