import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
@testable import HeraldConsole
import Testing

@Suite("Delivery reports")
struct ReportTests {
    struct Fixture {
        let app: TestApp
        let browser: TestBrowser
        let shop: Int64
        let sale: Int64
        let welcome: Int64
        let readKey: String

        /// The stats API's totals for the same range, which the pages must agree with.
        func statsTotals(_ campaign: Int64, _ query: String) throws -> [String: Any] {
            let response = app.respond(Request(
                method: "GET", target: "/api/v1/campaigns/\(campaign)/stats?\(query)",
                headers: HTTPHeaders([("Authorization", "Bearer \(readKey)")])))
            let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            return try #require(body["totals"] as? [String: Any])
        }
    }

    static let range = "from=2026-09-20&to=2026-09-22"

    /// Given two campaigns of one app with events over three days (and a test device's events on the second day),
    /// and a campaign of another app.
    static func fixture() async throws -> Fixture {
        let (app, browser) = try await TestApp.withAdmin()
        let now = app.clock.now
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: now)
        let blog = try app.database.apps.create(name: "Blog", platforms: [.web], actor: .commandLine, now: now)
        func campaign(_ name: String, app id: Int64) throws -> Int64 {
            try app.database.campaigns.create(
                Campaign(app: id, name: name, triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "Hi"))),
                state: .published, actor: .commandLine, now: now)
        }
        let sale = try campaign("Sale", app: shop.id)
        let welcome = try campaign("Welcome", app: shop.id)
        let hello = try campaign("Hello", app: blog.id)
        _ = try app.database.apps.addTestDevice(appID: shop.id, installationID: "iid-qa", name: "QA", actor: .commandLine, now: now)

        let day1 = try #require(UTCTime.date(day: "2026-09-20")).addingTimeInterval(3600)
        let day2 = day1.addingTimeInterval(86_400), day3 = day2.addingTimeInterval(86_400)
        var events: [Event] = []
        func add(_ type: EventType, _ campaign: Int64, _ at: Date, app: Int64 = shop.id, platform: String = "ios", device: String? = "a",
                 detail: String = "", test: Bool = false, language: String? = nil) {
            events.append(Event(
                id: UUID().uuidString, appID: app, campaignID: campaign, type: type, occurredAt: at, platform: platform,
                installationID: device, detail: detail, url: nil, test: test, language: language))
        }
        // Device a reads Persian, b the default version, c Arabic.
        add(.impression, sale, day1, device: "a", language: "fa")
        add(.impression, sale, day1, device: "b")
        add(.impression, sale, day1, platform: "android", device: nil, language: "fa")
        add(.click, sale, day1, device: "a", detail: "primary", language: "fa")
        add(.impression, sale, day3, device: "a", language: "fa")
        add(.click, sale, day3, device: "a", detail: "secondary", language: "fa")
        add(.dismiss, sale, day3, device: "b", detail: "swipe")
        add(.dismiss, sale, day3, device: "b", detail: "auto")
        add(.error, sale, day3, platform: "android", device: "c", detail: "image_fetch", language: "ar")
        add(.conversion, sale, day3, device: "a", detail: "purchase", language: "fa")
        add(.impression, sale, day2, device: "iid-qa", test: true, language: "fa")
        add(.click, sale, day2, device: "iid-qa", detail: "body", test: true)
        for device in ["w1", "w2", "w3", "w4", "w5"] { add(.impression, welcome, day2, device: device) }
        add(.click, welcome, day2, device: "w1", detail: "primary")
        add(.impression, hello, day2, app: blog.id, platform: "web", device: "h1")
        // And devices chose Sale's message 5 more times without showing it (2 in the other orientation, 3 too soon
        // after another), and a test device once (its images were too slow)
        let discards = [
            Discard(id: UUID().uuidString, appID: shop.id, campaignID: sale, reason: .orientation, day: "2026-09-20", count: 2, test: false),
            Discard(id: UUID().uuidString, appID: shop.id, campaignID: sale, reason: .throttled, day: "2026-09-22", count: 3, test: false),
            Discard(id: UUID().uuidString, appID: shop.id, campaignID: sale, reason: .timeout, day: "2026-09-21", count: 1, test: true),
        ]
        _ = try app.database.events.ingest(events, discards: discards, now: now)

        let read = try app.database.apiKeys.create(appID: shop.id, name: "reader", scopes: [.campaignsRead], actor: .commandLine, now: now)
        return Fixture(app: app, browser: browser, shop: shop.id, sale: sale, welcome: welcome, readKey: read.secret)
    }

    // MARK: Reading the HTML

    /// The big figure under `label` in a list of metrics.
    static func metric(_ html: Substring, _ label: String) -> String? {
        let pattern = #"<dt>\#(label)</dt><dd class="metric-value">([^<]*)</dd>"#
        guard let match = html.firstMatch(of: try! Regex<(Substring, Substring)>(pattern)) else { return nil }
        return String(match.output.1)
    }

    /// The numeric cells of the table row whose header starts with `label`.
    static func cells(_ html: Substring, row label: String) -> [String] {
        var rest = html
        while let header = rest.range(of: #"<th scope="row""#) {
            let row = rest[header.lowerBound...]
            let end = row.range(of: "</tr>")?.lowerBound ?? row.endIndex
            let text = row[..<end]
            if let close = text.firstIndex(of: ">"), text[text.index(after: close)...].hasPrefix(label) {
                return text.matches(of: /<td class="numeric[^"]*">(?:<svg.*?<\/svg> )?([^<]*)<\/td>/).map { String($0.output.1) }
            }
            rest = row[end...]
        }
        return []
    }

    static func section(_ html: String, _ marker: String) -> Substring {
        guard let start = html.range(of: marker) else { return "" }
        let rest = html[start.lowerBound...]
        let end = rest.range(of: "</section>")?.upperBound ?? rest.endIndex
        return rest[..<end]
    }

    // MARK: One campaign

    @Test("A campaign's report shows the exact totals, breakdowns, platform and language splits, devices, a day-by-day chart and test figures apart")
    func campaignReport() async throws {
        let fixture = try await Self.fixture()
        let response = fixture.browser.get("/campaigns/\(fixture.sale)/report?\(Self.range)")
        #expect(response.status == 200)
        let html = response.text
        let totals = Self.section(html, #"<section class="report-totals""#)
        #expect(Self.metric(totals, "Impressions") == "4")
        #expect(Self.metric(totals, "Clicks") == "2")
        #expect(Self.metric(totals, "CTR") == "50.0%")
        #expect(Self.metric(totals, "Dismissals") == "2")
        #expect(Self.metric(totals, "Display errors") == "1")
        #expect(Self.metric(totals, "Conversions") == "1")
        #expect(Self.metric(totals, "Conversion rate") == "25.0%")
        #expect(Self.metric(totals, "Unique devices") == "3")

        let clicks = Self.section(html, #"aria-labelledby="clicks-heading""#)
        #expect(Self.cells(clicks, row: "Primary button") == ["1", "50.0%"])
        #expect(Self.cells(clicks, row: "Secondary button") == ["1", "50.0%"])
        #expect(Self.cells(clicks, row: "Message body") == ["0", "0.0%"])  // the test device's body click is not here
        let dismissals = Self.section(html, #"aria-labelledby="dismissals-heading""#)
        #expect(Self.cells(dismissals, row: "Timed out") == ["1", "50.0%"])
        #expect(Self.cells(dismissals, row: "Swiped away") == ["1", "50.0%"])
        #expect(Self.cells(dismissals, row: "Close button") == ["0", "0.0%"])
        let errors = Self.section(html, #"aria-labelledby="errors-heading""#)
        #expect(Self.cells(errors, row: "Image did not download") == ["1", "100.0%"])
        #expect(errors.contains(#"<code dir="ltr">image_fetch</code>"#))
        let conversions = Self.section(html, #"aria-labelledby="conversions-heading""#)
        #expect(Self.cells(conversions, row: "purchase") == ["1", "100.0%"])

        // The funnel: chosen (4 shown + 5 discarded) → shown → clicked, and the discards by reason, every reason listed
        let funnel = Self.section(html, #"class="panel report-funnel""#)
        #expect(Self.metric(funnel, "Chosen") == "9" && funnel.contains("shown + discarded"))
        #expect(Self.metric(funnel, "Shown") == "4" && funnel.contains("44.4% of chosen"))
        #expect(Self.metric(funnel, "Clicked") == "2" && funnel.contains("50.0% of shown"))
        // Devices, each once: two were shown it, one converted (the test device is in neither)
        #expect(Self.metric(funnel, "Devices shown") == "2" && funnel.contains("unique devices with an impression"))
        #expect(Self.metric(funnel, "Devices converted") == "1" && funnel.contains("50.0% of devices shown: the conversion rate"))
        let discards = Self.section(html, #"aria-labelledby="discards-heading""#)
        #expect(discards.contains("Discards by reason"))
        #expect(Self.cells(discards, row: "Screen in the other orientation") == ["2", "40.0%"])
        #expect(Self.cells(discards, row: "Too soon after the last message") == ["3", "60.0%"])
        #expect(Self.cells(discards, row: "Images too slow to load") == ["0", "0.0%"], "the test device's discard is not here")
        #expect(DiscardReason.allCases.allSatisfy { discards.contains(#"<code dir="ltr">\#($0.rawValue)</code>"#) })

        let platforms = Self.section(html, #"class="panel report-platforms""#)
        // share of impressions, impressions, clicks, CTR, dismissals, errors, conversions
        #expect(Self.cells(platforms, row: "iOS") == ["75.0%", "3", "2", "66.7%", "2", "0", "1"])
        #expect(Self.cells(platforms, row: "Android") == ["25.0%", "1", "0", "0.0%", "0", "1", "0"])

        // The language split, like the platforms', the default version labelled and each tag isolated from the text around it
        let languages = Self.section(html, #"class="panel report-languages""#)
        #expect(Self.cells(languages, row: "<code dir=\"ltr\">fa</code>") == ["75.0%", "3", "2", "66.7%", "0", "0", "1"])
        #expect(Self.cells(languages, row: "Default version") == ["25.0%", "1", "0", "0.0%", "2", "0", "0"])
        #expect(Self.cells(languages, row: "<code dir=\"ltr\">ar</code>") == ["0.0%", "0", "0", "—", "0", "1", "0"])
        #expect(languages.range(of: "ltr\">fa<")!.lowerBound < languages.range(of: "Default version")!.lowerBound, "most impressions first")

        // The chart: one bar per day, the empty middle day drawn at zero, each day's figures in a title.
        let chart = Self.section(html, #"class="panel report-daily""#)
        #expect(chart.contains("<svg class=\"report-chart\""))
        #expect(chart.matches(of: /class="chart-bar chart-impressions"/).count == 3)
        #expect(chart.matches(of: /class="chart-bar chart-clicks"/).count == 3)
        #expect(chart.contains("<title>Sep 20, 2026: 3 impressions, 1 click, CTR 33.3%, 0 conversions</title>"))
        #expect(chart.contains("<title>Sep 21, 2026: 0 impressions, 0 clicks, CTR —, 0 conversions</title>"))
        #expect(chart.contains("<title>Sep 22, 2026: 1 impression, 1 click, CTR 100.0%, 1 conversion</title>"))
        #expect(chart.contains(#"height="0""#))
        #expect(chart.contains("Impressions") && chart.contains("CTR"))  // the legend
        #expect(!chart.contains("style="))
        // The same days as a table: impressions, clicks, CTR, dismissals, errors, conversions.
        #expect(Self.cells(chart, row: #"<time datetime="2026-09-20">Sep 20, 2026</time>"#) == ["3", "1", "33.3%", "0", "0", "0"])
        #expect(Self.cells(chart, row: #"<time datetime="2026-09-21">Sep 21, 2026</time>"#) == ["0", "0", "—", "0", "0", "0"])
        #expect(Self.cells(chart, row: #"<time datetime="2026-09-22">Sep 22, 2026</time>"#) == ["1", "1", "100.0%", "2", "1", "1"])

        let test = Self.section(html, #"class="panel report-test""#)
        #expect(test.contains("Test devices"))
        #expect(Self.metric(test, "Impressions") == "1")
        #expect(Self.metric(test, "Clicks") == "1")
        #expect(Self.metric(test, "Test devices") == "1")

        #expect(html.contains(#"href="/campaigns/\#(fixture.sale)""#))
        #expect(html.contains(#"href="/campaigns/\#(fixture.sale)/report.csv?from=2026-09-20&amp;to=2026-09-22""#))
        #expect(fixture.browser.get("/campaigns/\(fixture.sale)").text.contains(#"href="/campaigns/\#(fixture.sale)/report""#))
    }

    @Test("The chart is drawn for one day and for 366 days; an empty range says so and draws zeros")
    func chartSizes() async throws {
        let fixture = try await Self.fixture()
        let one = fixture.browser.get("/campaigns/\(fixture.sale)/report?from=2026-09-20&to=2026-09-20")
        #expect(one.status == 200)
        #expect(one.text.matches(of: /class="chart-bar chart-impressions"/).count == 1)
        #expect(one.text.matches(of: /class="chart-point"/).count == 1)
        let year = fixture.browser.get("/campaigns/\(fixture.sale)/report?from=2025-09-22&to=2026-09-22")
        #expect(year.status == 200)
        #expect(year.text.matches(of: /class="chart-bar chart-impressions"/).count == 366)
        #expect(year.text.contains(">Oct 2025</text>"))
        #expect(!year.text.contains("e-0"))  // no coordinate in exponent notation
        let empty = fixture.browser.get("/campaigns/\(fixture.sale)/report?from=2026-01-01&to=2026-01-07")
        #expect(empty.status == 200)
        #expect(empty.text.contains("Nothing was delivered in this range"))
        #expect(empty.text.matches(of: /class="chart-bar chart-impressions" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="0"/).count == 7)
    }

    @Test("The CSV has a header and one row per day, then one per language shown, test devices left out, and sums to the stats totals")
    func csv() async throws {
        let fixture = try await Self.fixture()
        let response = fixture.browser.get("/campaigns/\(fixture.sale)/report.csv?\(Self.range)")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "text/csv; charset=utf-8")
        let disposition = try #require(response.headers["Content-Disposition"])
        #expect(disposition.hasPrefix("attachment;"))
        #expect(disposition.contains("campaign-\(fixture.sale)-report-2026-09-20-to-2026-09-22.csv"))
        // Four sections: the days, then after an empty line the languages shown, the funnel and the discards by reason
        let sections = response.text.components(separatedBy: "\r\n\r\n")
        #expect(sections.count == 4)
        let lines = sections[0].split(separator: "\r\n").map(String.init)
        #expect(lines.first == "date,impressions,clicks,ctr,dismissals,errors,conversions")
        #expect(lines.count == 4)
        #expect(lines.dropFirst().map { $0.split(separator: ",")[0] } == ["2026-09-20", "2026-09-21", "2026-09-22"])
        #expect(lines[1] == "2026-09-20,3,1,0.3333,0,0,0")
        #expect(lines[2] == "2026-09-21,0,0,0.0000,0,0,0")  // the test device's day counts nothing
        let columns = lines.dropFirst().map { $0.split(separator: ",").map(String.init) }
        func sum(_ index: Int) -> Int { columns.map { Int($0[index]) ?? -1 }.reduce(0, +) }
        let totals = try fixture.statsTotals(fixture.sale, Self.range)
        #expect(sum(1) == totals["impressions"] as? Int)
        #expect(sum(2) == totals["clicks"] as? Int)
        #expect(sum(4) == totals["dismissals"] as? Int)
        #expect(sum(5) == totals["errors"] as? Int)
        #expect(sum(6) == totals["conversions"] as? Int)
        #expect(sum(1) == 4 && sum(2) == 2)

        // The same columns per language, the default version labelled in the reader's words; they sum to the totals too
        #expect(sections[1].split(separator: "\r\n") == [
            "language,impressions,clicks,ctr,dismissals,errors,conversions",
            "fa,3,2,0.6667,0,0,1", "Default version,1,0,0.0000,2,0,0", "ar,0,0,0.0000,0,1,0",
        ])
        // The funnel's stages in the reader's words, then every discard reason by its code, test devices left out
        #expect(sections[2].split(separator: "\r\n") == [
            "stage,count", "Chosen,9", "Shown,4", "Clicked,2", "Converted,1", "Devices shown,2", "Devices converted,1",
        ])
        #expect(sections[3].split(separator: "\r\n") == [
            "discard reason,count", "orientation,2", "image_fetch,0", "timeout,0", "delegate,0", "renderer_timeout,0", "ineligible,0",
            "stack_full,0", "throttled,3",
        ])
    }

    // MARK: All campaigns

    @Test("/reports lists each campaign with its figures and a trend, sorts by any column, and filters by app")
    func allCampaigns() async throws {
        let fixture = try await Self.fixture()
        // Given, besides the campaigns with events, a published campaign with none yet, a draft and an archived one
        let now = fixture.app.clock.now
        func campaign(_ name: String, _ state: CampaignState) throws -> Int64 {
            try fixture.app.database.campaigns.create(
                Campaign(app: fixture.shop, name: name, triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "Hi"))),
                state: state, actor: .commandLine, now: now)
        }
        _ = try campaign("Quiet", .published)
        _ = try campaign("Idea", .draft)
        _ = try campaign("Old", .archived)
        let response = fixture.browser.get("/reports?\(Self.range)")
        #expect(response.status == 200)
        let html = response.text
        func row(_ html: String, _ name: String) -> [String] {
            guard let link = html.range(of: ">\(name)</a>") else { return [] }
            let rest = html[link.upperBound...]
            let end = rest.range(of: "</tr>")?.lowerBound ?? rest.endIndex
            return rest[..<end].matches(of: /<td class="numeric">([^<]*)<\/td>/).map { String($0.output.1) }
        }
        // impressions, clicks, CTR, dismissals, errors, conversions
        #expect(row(html, "Sale") == ["4", "2", "50.0%", "2", "1", "1"])
        #expect(row(html, "Welcome") == ["5", "1", "20.0%", "0", "0", "0"])
        #expect(row(html, "Hello") == ["1", "0", "0.0%", "0", "0", "0"])
        // The published campaign without impressions yet is listed with zeros; the draft and the archived one are not
        #expect(row(html, "Quiet") == ["0", "0", "—", "0", "0", "0"])
        #expect(!html.contains(">Idea</a>") && !html.contains(">Old</a>"))
        #expect(html.contains(#"<svg class="sparkline""#))
        #expect(html.contains("<title id=\"trend-\(fixture.sale)\">Daily impressions from Sep 20, 2026 to Sep 22, 2026: busiest day Sep 20, 2026 with 3</title>"))
        #expect(html.contains(#"href="/campaigns/\#(fixture.sale)/report?from=2026-09-20&amp;to=2026-09-22""#))
        #expect(html.contains("3 campaigns delivered"))

        func order(_ query: String) -> [String] {
            let page = fixture.browser.get("/reports?\(Self.range)&\(query)").text
            return ["Sale", "Welcome", "Hello"].compactMap { name in page.range(of: ">\(name)</a>").map { (name, $0.lowerBound) } }
                .sorted { $0.1 < $1.1 }.map(\.0)
        }
        #expect(order("") == ["Welcome", "Sale", "Hello"])  // impressions, most first
        #expect(order("sort=clicks") == ["Sale", "Welcome", "Hello"])
        #expect(order("sort=clicks&dir=asc") == ["Hello", "Welcome", "Sale"])
        #expect(order("sort=name") == ["Hello", "Sale", "Welcome"])
        #expect(order("sort=errors") == ["Sale", "Hello", "Welcome"])
        let sorted = fixture.browser.get("/reports?\(Self.range)&sort=clicks").text
        #expect(sorted.contains(#"aria-sort="descending"><a class="sort-link" href="/reports?from=2026-09-20&amp;to=2026-09-22&amp;sort=clicks&amp;dir=asc">Clicks"#))

        let shopOnly = fixture.browser.get("/reports?\(Self.range)&app=\(fixture.shop)").text
        #expect(row(shopOnly, "Sale").first == "4")
        #expect(!shopOnly.contains(">Hello</a>"))

        let far = fixture.browser.get("/reports?\(Self.range)&page=\(Int.max)")
        #expect(far.status == 200, "a page far past the end is empty, not an overflow")
        #expect(!far.text.contains(">Sale</a>"))

        let nothing = fixture.browser.get("/reports?from=2026-01-01&to=2026-01-31")
        #expect(nothing.status == 200)
        #expect(nothing.text.contains("Nothing delivered in this range"))
        #expect(row(nothing.text, "Quiet") == ["0", "0", "—", "0", "0", "0"] && row(nothing.text, "Sale").first == "0")
    }

    // MARK: Ranges and access

    @Test("A bad range is a 400 with a message on the page, never a crash")
    func badRanges() async throws {
        let fixture = try await Self.fixture()
        for path in ["/campaigns/\(fixture.sale)/report", "/reports"] {
            let reversed = fixture.browser.get("\(path)?from=2026-09-22&to=2026-09-20")
            #expect(reversed.status == 400)
            #expect(reversed.text.contains("The start date (Sep 22, 2026) is after the end date (Sep 20, 2026)"))
            #expect(reversed.text.contains(#"name="from" value="2026-09-22""#))
            #expect(reversed.text.contains("Last 30 days"))
            let garbled = fixture.browser.get("\(path)?from=2026-13-45&to=2026-09-20")
            #expect(garbled.status == 400)
            #expect(garbled.text.contains("is not a date"))
            let long = fixture.browser.get("\(path)?from=2024-01-01&to=2026-01-01")
            #expect(long.status == 400)
            #expect(long.text.contains("at most 366 days"))
        }
        #expect(fixture.browser.get("/campaigns/\(fixture.sale)/report.csv?from=2026-09-22&to=2026-09-20").status == 400)
        #expect(fixture.browser.get("/campaigns/999999/report").status == 404)
    }

    @Test("Viewers read reports; the default range is the last 30 days; the main navigation links Reports")
    func viewers() async throws {
        let fixture = try await Self.fixture()
        try fixture.app.createUser(email: "vera@example.com", role: .viewer)
        let vera = fixture.app.browser(address: "10.9.0.1")
        #expect(try vera.submit("/login", from: "/login", ["email": "vera@example.com", "password": "correct horse battery"]).status == 303)
        let reports = vera.get("/reports")
        #expect(reports.status == 200)
        #expect(reports.text.contains(#"<a href="/reports" aria-current="page">Reports</a>"#))
        #expect(reports.text.contains(#"name="from" value="2026-08-23""#))
        #expect(reports.text.contains(#"name="to" value="2026-09-21""#))
        #expect(reports.text.contains(#"href="/reports?from=2026-08-23&amp;to=2026-09-21" aria-current="true">Last 30 days"#))
        #expect(reports.text.contains(#"href="/reports?from=2026-09-15&amp;to=2026-09-21">Last 7 days"#))
        #expect(vera.get("/campaigns/\(fixture.sale)/report").status == 200)
        #expect(vera.get("/campaigns/\(fixture.sale)/report.csv").status == 200)
        #expect(fixture.app.browser(address: "10.9.0.2").get("/reports").status == 303)  // signed out: to the login page
    }

    @Test("Chart coordinates: one decimal at most, never an exponent or a minus zero, within a twentieth of the value; anything out of the frame stays a short number")
    func chartCoordinates() {
        #expect(DailyChart.number(0) == "0")
        #expect(DailyChart.number(-0.0) == "0")
        #expect(DailyChart.number(-0.04) == "0")
        #expect(DailyChart.number(12.25) == "12.3")
        #expect(DailyChart.number(895.96) == "896")
        #expect(DailyChart.number(-3.5) == "-3.5")
        #expect(DailyChart.number(.nan) == "0")
        #expect(DailyChart.number(.infinity) == "1000000")
        #expect(DailyChart.number(-1e300) == "-1000000")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let value = Double.random(in: -2_000...2_000, using: &generator)
            let text = DailyChart.number(value)
            let read = Double(text)
            #expect(read.map { abs($0 - value) <= 0.05 + 1e-9 } == true, "\(value) → \(text)")
            #expect(!text.contains("e") && text != "-0" && (text.split(separator: ".").dropFirst().first?.count ?? 1) == 1, "\(value) → \(text)")
        }
    }
}
