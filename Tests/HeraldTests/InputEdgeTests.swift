import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// Values from outside at and past their edges: they get a 4xx that says what and where, never a
/// trap, and nothing is stored that would not read back.
@Suite("Input edges: dates, unknown keys, read-back")
struct InputEdgeTests {
    @Test("Year 0, year 10000 and impossible days in a report or stats range are a 400, not a crash", arguments: [
        "from=0000-01-01", "to=0000-01-01", "from=0000-01-01&to=0000-12-31", "from=1999-12-31", "to=10000-01-01",
        "from=2026-02-30", "from=-001-01-01", "to=2000-01-01&from=1999-01-01", "from=9999-12-31&to=9999-12-31x",
    ])
    func reportRanges(query: String) async throws {
        let fixture = try await CampaignAPITests.fixture()
        let created = fixture.call("POST", "/api/v1/campaigns", json: CampaignAPITests.cardJSON(app: fixture.shop))
        let id = try #require(try fixture.document(created).id)
        #expect(fixture.call("GET", "/api/v1/campaigns/\(id)/stats?\(query)", key: fixture.readKey).status == 400)
        let browser = try await Self.signedIn(fixture.app)
        #expect(browser.get("/reports?\(query)").status == 400)
        #expect(browser.get("/campaigns/\(id)/report?\(query)").status == 400)
        #expect(browser.get("/campaigns/\(id)/report.csv?\(query)").status == 400)
    }

    @Test("The first and last supported days make a report; a range ending on the first day starts there")
    func reportRangeEdges() async throws {
        let fixture = try await CampaignAPITests.fixture()
        let created = fixture.call("POST", "/api/v1/campaigns", json: CampaignAPITests.cardJSON(app: fixture.shop))
        let id = try #require(try fixture.document(created).id)
        for query in ["to=2000-01-01", "from=9999-12-01&to=9999-12-31", "from=2000-01-01&to=2000-12-31"] {
            let answer = fixture.call("GET", "/api/v1/campaigns/\(id)/stats?\(query)", key: fixture.readKey)
            #expect(answer.status == 200, "\(query): \(answer.text)")
        }
        let first = fixture.call("GET", "/api/v1/campaigns/\(id)/stats?to=2000-01-01", key: fixture.readKey)
        #expect(first.text.contains(#""from":"2000-01-01""#))
    }

    @Test("A schedule time outside the supported range (422) or not a time at all (400) is refused by the API and by import, and the app's feed and list keep working", arguments: [
        ("0000-01-01T00:00:00+18:00", 422), ("0000-01-01T00:00:00Z", 422), ("1999-12-31T23:59:59Z", 422), ("9999-12-31T23:59:59-01:00", 422),
        ("2000-01-01T00:30:00+01:00", 422), ("2026-02-29T10:00:00Z", 400), ("2026-11-21T24:00:00Z", 400), ("2026-11-21T10:00:00+24:00", 400),
        ("+10000-01-01T00:00:00Z", 400), ("2026-11-21", 400), ("2030-11-21T10:00:00+18:01", 400), ("2030-11-21T10:00:00.1234567891Z", 400),
    ])
    func scheduleTimes(time: String, status: Int) async throws {
        let fixture = try await CampaignAPITests.fixture()
        let json = #"{"app": \#(fixture.shop), "name": "x", "message": {"layout": "modal", "title": {"text": "hi"}}, "schedule": {"start": "\#(time)"}}"#
        let answer = fixture.call("POST", "/api/v1/campaigns", json: json)
        #expect(answer.status == status, "\(answer.status) \(answer.text)")
        #expect(answer.text.contains(#""path":"schedule.start""#))
        #expect(fixture.call("GET", "/api/v1/campaigns").status == 200)
        let plan = try CampaignTransfer(database: fixture.app.database).plan(Data(json.utf8), appID: fixture.shop)
        #expect(plan.unreadable?.contains("schedule.start") == true || plan.problems.map(\.path) == ["schedule.start"])
        #expect(try fixture.app.database.campaigns.list(CampaignQuery(), now: fixture.app.clock.now).total == 0)
    }

    @Test("Times keep their millisecond and read back equal through the API")
    func millisecondTimes() async throws {
        let fixture = try await CampaignAPITests.fixture()
        for (sent, written) in [("2030-01-01T10:00:00.250+02:00", "2030-01-01T08:00:00.250Z"), ("2030-01-01T10:00:00.0004Z", "2030-01-01T10:00:00Z"),
                                ("2030-01-01T10:00:00.9996Z", "2030-01-01T10:00:01Z"), ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z")] {
            let json = #"{"app": \#(fixture.shop), "name": "x", "message": {"layout": "modal", "title": {"text": "hi"}}, "schedule": {"end": "\#(sent)"}}"#
            let created = fixture.call("POST", "/api/v1/campaigns", json: json)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.text.contains(#""end":"\#(written)""#), "\(created.text)")
            let id = try #require(try fixture.document(created).id)
            #expect(try fixture.document(fixture.call("GET", "/api/v1/campaigns/\(id)")).schedule.end == UTCTime.date(rfc3339: written))
        }
    }

    @Test("The store refuses a campaign that would not read back, and commits nothing")
    func storeReadBack() async throws {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        var campaign = Campaign(app: shop.id, name: "x", message: Message(layout: .modal, title: .init(text: "hi")))
        // 0000-01-01T00:00:00+18:00, what the poisoning request stored: year -1 in UTC, which no reader takes back.
        campaign.schedule.start = Date(timeIntervalSince1970: -62_167_284_000)
        #expect(throws: CampaignStoreError.self) {
            try app.database.campaigns.create(campaign, state: .draft, actor: .commandLine, now: app.clock.now)
        }
        #expect(try app.database.campaigns.feedCandidates(appID: shop.id).isEmpty)
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)
        #expect(try app.database.auditLog.page(offset: 0, limit: 10).allSatisfy { $0.action != "campaign.create" })
    }

    @Test("An unknown key anywhere in Campaign JSON is a 422 naming its path, with the key it resembles", arguments: [
        (#""priorty": 1"#, "priorty", "priority"),
        (##""message": {"layout": "modal", "title": {"text": "hi", "colour": "#000000"}}"##, "message.title.colour", "color"),
        (#""triggers": [{"event": "app_launch", "filter": []}]"#, "triggers.0.filter", "filters"),
        (#""targeting": {"percent": 5}"#, "targeting.percent", nil),
        (#""data": [{"key": "a", "value": "b", "note": "c"}]"#, "data.0.note", nil),
        (#""schedule": {"timezone": "UTC"}"#, "schedule.timezone", "timeZone"),
    ] as [(String, String, String?)])
    func unknownKeys(extra: String, path: String, suggestion: String?) async throws {
        let fixture = try await CampaignAPITests.fixture()
        var json = #"{"app": \#(fixture.shop), "name": "x", "message": {"layout": "modal", "title": {"text": "hi"}}}"#
        if extra.hasPrefix(#""message""#) {
            json = #"{"app": \#(fixture.shop), "name": "x", \#(extra)}"#
        } else {
            json.removeLast()
            json += ", \(extra)}"
        }
        let answer = fixture.call("POST", "/api/v1/campaigns", json: json)
        #expect(answer.status == 422, "\(answer.text)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: [String: Any]])
        let fields = try #require(body["error"]?["fields"] as? [[String: String]])
        #expect(fields.first?["path"] == path)
        if let suggestion { #expect(fields.first?["message"]?.contains("`\(suggestion)`") == true) }
        #expect(try fixture.app.database.campaigns.list(CampaignQuery(), now: fixture.app.clock.now).total == 0)
    }

    @Test("Feeds and stored documents are read leniently: a newer server's extra keys do not break a client")
    func lenientReading() throws {
        let json = #"{"app": 1, "name": "x", "futureField": true, "message": {"layout": "modal", "shape": "round"}}"#
        let campaign = try CampaignJSON.decoder().decode(Campaign.self, from: Data(json.utf8))
        #expect(campaign.name == "x")
    }

    @Test("Control characters are refused in every text; line breaks only where text may span lines")
    func controlCharacters() {
        var campaign = Campaign(app: 1, name: "a\u{0}b", message: Message(layout: .modal, title: .init(text: "line one\nline two")))
        campaign.data = CustomData([.init(key: "k\u{1B}", value: "v\n2")])
        campaign.message.primaryAction = .init(text: "Go\nnow", url: "https://example.com")
        let paths = campaign.problems(for: .draft).map(\.path)
        #expect(paths.contains("name"))
        #expect(paths.contains("data.0.key"))
        #expect(paths.contains("message.primaryAction.text"))
        #expect(!paths.contains("message.title.text"))
        #expect(!paths.contains("data.0.value"))
    }

    static func signedIn(_ app: TestApp) async throws -> TestBrowser {
        try app.createUser(email: "viewer@example.com", role: .admin)
        let browser = app.browser()
        let answer = try browser.submit("/login", from: "/login", ["email": "viewer@example.com", "password": "correct horse battery"])
        #expect(answer.status == 303)
        return browser
    }
}

/// What a marketer types in the composer is used or explained, never dropped.
@Suite("Composer: typed values and their options")
struct ComposerChoiceTests {
    static func fields(_ shop: Int64, _ changes: [(String, String)]) -> [(String, String)] {
        let changed = Set(changes.map(\.0))
        return ComposerTests.cardFields(app: shop).filter { !changed.contains($0.0) } + changes + [("intent", "draft")]
    }

    @Test("A date or a number of days typed under another option is explained next to the field, and nothing is saved", arguments: [
        ([("schedule.startMode", "publish"), ("schedule.start", "2030-01-01T09:00")], "schedule.start", "“When published” is chosen"),
        ([("schedule.endMode", "never"), ("schedule.end", "2030-01-01T09:00")], "schedule.end", "“Never” is chosen"),
        ([("frequency.type", "once"), ("frequency.days", "7")], "frequency.days", "“Once per device” is chosen"),
        ([("frequency.type", "always"), ("frequency.days", "7")], "frequency.days", "“Every time it triggers” is chosen"),
    ])
    func typedUnderAnotherOption(changes: [(String, String)], field: String, message: String) async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        let response = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.fields(shop, changes))
        #expect(response.status == 422)
        let id = FieldView.id(for: field)
        #expect(response.text.contains(#"id="\#(id)-error""#), "the error is next to \(field)")
        #expect(response.text.contains(message))
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 0)
    }

    @Test("A date under its own option is used; each date field tells the script which option it chooses")
    func typedUnderItsOption() async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        let response = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.fields(shop, [
            ("schedule.startMode", "at"), ("schedule.start", "2030-01-01T09:00"), ("schedule.endMode", "at"), ("schedule.end", "2030-02-01T09:00"),
        ]))
        #expect(response.status == 303)
        let stored = try #require(try app.database.campaigns.find(id: try ComposerTests.campaignID(response)))
        #expect(stored.campaign.schedule.start == UTCTime.date(rfc3339: "2030-01-01T09:00:00+01:00"))
        #expect(stored.campaign.schedule.end == UTCTime.date(rfc3339: "2030-02-01T09:00:00+01:00"))
        let page = admin.get("/campaigns/new").text
        #expect(page.contains(#"data-chooses="field-schedule-startMode-at""#))
        #expect(page.contains(#"data-chooses="field-schedule-endMode-at""#))
        #expect(page.contains(#"data-chooses="field-frequency-type-every-n-days""#))
    }

    @Test("A bad time zone is named as the problem, not blamed on the dates")
    func badTimeZone() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let response = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.fields(shop, [
            ("schedule.timeZone", "Mars/Olympus"), ("schedule.startMode", "at"), ("schedule.start", "2030-01-01T09:00"),
        ]))
        #expect(response.status == 422)
        #expect(response.text.contains(#"id="field-schedule-timeZone-error""#))
        #expect(!response.text.contains(#"id="field-schedule-start-error""#))
        #expect(response.text.contains("Mars/Olympus"))
    }

    @Test("A time the clocks skip is explained as such; a year outside the calendar is refused with the range")
    func skippedAndOutOfRangeTimes() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let skipped = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.fields(shop, [
            ("schedule.startMode", "at"), ("schedule.start", "2030-03-31T02:30"),
        ]))
        #expect(skipped.status == 422)
        #expect(skipped.text.contains("does not exist in \u{2068}Europe/Paris\u{2069}"))
        let ancient = try admin.submit("/campaigns", from: "/campaigns/new", pairs: Self.fields(shop, [
            ("schedule.startMode", "at"), ("schedule.start", "0001-01-01T00:00"),
        ]))
        #expect(ancient.status == 422)
        #expect(ancient.text.contains(#"id="field-schedule-start-error""#))
        #expect(ancient.text.contains("2000-01-01"))
    }
}

/// UTCTime is total and exact: every supported instant reads back from what it writes, and no text traps.
@Suite("UTC time text")
struct UTCTimeTests {
    @Test("Every supported instant, written as RFC 3339 and as a day, reads back to itself")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        let low = Int64(UTCTime.supported.lowerBound.timeIntervalSince1970 * 1000)
        let high = Int64(UTCTime.supported.upperBound.timeIntervalSince1970 * 1000)
        let samples = [low, high, 0, 951_782_400_000, 4_102_444_799_999].filter { (low...high).contains($0) }
            + (0..<5000).map { _ in Int64.random(in: low...high, using: &generator) }
        for milliseconds in samples {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = UTCTime.rfc3339(date)
            #expect(UTCTime.date(rfc3339: text) == date, "\(text)")
            let day = UTCTime.day(date)
            #expect(UTCTime.date(day: day).map(UTCTime.day) == day)
        }
    }

    @Test("Writing is total: dates far outside any calendar give text, not a trap")
    func writingIsTotal() {
        for seconds in [-1e20, -62_167_219_200, -1, 253_402_300_800, 1e20, .infinity, -.infinity, .nan] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(!UTCTime.day(date).isEmpty)
            #expect(!UTCTime.timestamp(date).isEmpty)
            let readBack = UTCTime.date(rfc3339: UTCTime.rfc3339(date))
            #expect(readBack == nil || readBack == date || seconds.isNaN, "\(seconds)")
        }
        #expect(UTCTime.day(Date(timeIntervalSince1970: -62_167_219_200)) == "0000-01-01")
        #expect(UTCTime.day(Date(timeIntervalSince1970: -62_198_755_200)) == "-0001-01-01")
    }

    @Test("Reading is total: random and mutated text is refused, or read to a date that writes back to itself")
    func readingIsTotal() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789-+:.TZtz 9".utf8)
        let seeds = ["2026-11-21T10:15:00Z", "0000-01-01T00:00:00+18:00", "9999-12-31T23:59:59.9999-23:59", "2000-01-01"]
        for _ in 0..<20_000 {
            var bytes = Array(seeds.randomElement(using: &generator)!.utf8)
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let index = Int.random(in: 0...bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where index < bytes.count: bytes[index] = alphabet.randomElement(using: &generator)!
                case 1 where index < bytes.count: bytes.remove(at: index)
                default: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let date = UTCTime.date(rfc3339: text), UTCTime.supported.contains(date) {
                #expect(UTCTime.date(rfc3339: UTCTime.rfc3339(date)) == date, "\(text)")
            }
            if let date = UTCTime.date(day: text) { #expect(UTCTime.supported.contains(date), "\(text)") }
        }
    }
}
