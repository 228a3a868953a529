import Foundation
import HeraldDomain
import HeraldHTTP
@testable import HeraldStorage
import Testing
@testable import HeraldConsole

/// The campaign and report pages in Persian and German: words, digits, times in the user's zone, schedules in
/// the campaign's zone, the CSV's headers, and user text isolated from the page's direction.
@Suite("Localized campaign and report pages")
struct LocalizedPagesTests {
    static let localization = LocalizationTests.localization
    static let tehran = TimeZone(identifier: "Asia/Tehran")!
    /// 2026-09-21T05:30:00Z: 09:00 in Tehran, 07:30 in Berlin.
    static let start = UTCTime.date(rfc3339: "2026-09-21T05:30:00Z")!

    /// A campaign whose every text is Persian, with a URL, colors, custom data and a filtered trigger.
    static func persianCampaign(app: Int64) -> Campaign {
        Campaign(
            app: app, name: "حراج پاییزه", description: "تخفیف ویژهٔ «پاییز»",
            schedule: Schedule(start: start, end: start.addingTimeInterval(7 * 86_400), timeZone: "Europe/Berlin"),
            triggers: [Trigger(event: "purchase_done", filters: [PropertyFilter(property: "plan", op: .eq, value: .string("طلایی"))])],
            message: Message(
                layout: .card, title: .init(text: "پیشنهاد ویژه", color: "#202124"), body: .init(text: "تا ۵۰٪ تخفیف"),
                imageUrl: "https://cdn.example.com/a.png", backgroundColor: "#FFFFFF",
                primaryAction: .init(text: "خرید کنید", textColor: "#FFFFFF", buttonColor: "#1A73E8", url: "https://example.com/sale?a=1&b=2"),
                secondaryAction: .init(text: "بعداً")),
            data: CustomData([.init(key: "کلید", value: "مقدار")]))
    }

    /// An admin using `language` in `zone`, with an app and `campaigns` more published campaigns besides the Persian one.
    static func setUp(language: String, zone: String = "Asia/Tehran", campaigns: Int = 2) async throws -> (TestApp, TestBrowser, app: Int64, persian: Int64) {
        let (app, admin) = try await TestApp.withAdmin()
        let saved = try admin.submit("/account", from: "/account", ["language": language, "time_zone": zone])
        #expect(saved.status == 303)
        let now = app.clock.now
        let shop = try app.database.apps.create(name: "فروشگاه", platforms: [.ios], actor: .commandLine, now: now)
        let persian = try app.database.campaigns.create(persianCampaign(app: shop.id), state: .draft, actor: .commandLine, now: now)
        for index in 0..<campaigns {
            _ = try app.database.campaigns.create(
                Campaign(app: shop.id, name: "Campaign \(index)", triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "Hi"))),
                state: .published, actor: .commandLine, now: now)
        }
        return (app, admin, shop.id, persian)
    }

    @Test("The summary puts every user value in its own isolated element; URLs, colors and event ids never mirror")
    func summaryIsolatesUserText() throws {
        let stored = StoredCampaign(
            campaign: Self.persianCampaign(app: 1), state: .draft, revision: 2, startedAt: nil,
            createdAt: Self.start, updatedAt: Self.start, updatedBy: "مریم")
        let view = CampaignSummaryView(
            stored: stored, appName: "فروشگاه", now: Self.start, canEdit: true, problems: [],
            localizer: Self.localization.localizer(.fa, timeZone: Self.tehran))
        let html = view.sections.flatMap(\.rows).map { "<dt>\($0.label)</dt><dd>\($0.value)</dd>" }.joined() + view.saved
        for isolated in [
            "<bdi>خرید کنید</bdi>", "<bdi>بعداً</bdi>", "<bdi>پیشنهاد ویژه</bdi>", "<bdi>تا ۵۰٪ تخفیف</bdi>",
            #"<code dir="ltr">https://example.com/sale?a=1&amp;b=2</code>"#, #"<code dir="ltr">#1A73E8</code>"#,
            #"<code dir="ltr">#FFFFFF</code>"#, #"<code dir="ltr">#202124</code>"#, #"<code dir="ltr">https://cdn.example.com/a.png</code>"#,
            #"<code dir="ltr">purchase_done</code>"#, #"<code dir="ltr">plan</code>"#, "<bdi>طلایی</bdi>",
            "<dt><bdi>کلید</bdi></dt><dd><bdi>مقدار</bdi></dd>", "<bdi>فروشگاه</bdi>", "<bdi>مریم</bdi>",
            #"<span dir="ltr">Europe/Berlin</span>"#,
        ] {
            #expect(html.contains(isolated), "\(isolated) is not isolated in \(html)")
        }
        // The button reads «text» ← target in Persian, the color never glued to the text
        #expect(html.contains(#"«<bdi>خرید کنید</bdi>» ← <code dir="ltr">https://example.com/sale"#))
        #expect(!html.contains("1A73E8#") && !html.contains("&amp;amp;"))
        // No value stands outside an element of its own
        for value in ["خرید کنید", "https://example.com", "#1A73E8", "purchase_done", "طلایی", "مقدار", "Europe/Berlin"] {
            for range in html.ranges(of: value) {
                let before = html[..<range.lowerBound]
                #expect(before.hasSuffix("<bdi>") || before.hasSuffix(#"dir="ltr">"#), "\(value) follows \(before.suffix(20))")
            }
        }
    }

    @Test("A value with markup stays text on the summary and in translated sentences")
    func markupIsEscaped() {
        let localizer = Self.localization.localizer(.de)
        let html = localizer.markup("campaigns.history.by", ["name": Markup.user("<b>{time}</b>"), "time": Markup.time(Self.start, "x")])
        #expect(html == #"von <bdi>&lt;b&gt;{time}&lt;/b&gt;</bdi> am <time datetime="2026-09-21T05:30:00Z">x</time>"#)
    }

    @Test("Persian: headings, Persian digits in counts and pages, times in the user's zone, the schedule in the campaign's zone")
    func persianPages() async throws {
        let (app, admin, _, persian) = try await Self.setUp(language: "fa", campaigns: 2)
        let fa = Self.localization.localizer(.fa, timeZone: Self.tehran)
        let list = admin.get("/campaigns").text
        #expect(list.contains(#"<html lang="fa" dir="rtl">"#))
        #expect(list.contains("<h1>کارزارها</h1>"))
        #expect(list.contains("۳ کارزار"))
        let now = app.clock.now
        let edited = #"<time datetime="\#(UTCTime.rfc3339(now))">\#(fa.dateTime(now))</time>"#
        #expect(list.contains(edited))
        #expect(fa.dateTime(now) != Self.localization.localizer(.fa).dateTime(now), "Tehran is not UTC")
        #expect(list.contains("پیش‌نویس") && list.contains("کارت"))

        let summary = admin.get("/campaigns/\(persian)").text
        #expect(summary.contains("<h2>زمان‌بندی</h2>"))
        // 07:30 in Berlin, named, then 09:00 in Tehran, the user's zone
        let iso = #"<time datetime="2026-09-21T05:30:00Z">"#
        #expect(summary.contains(iso + fa.dateTime(Self.start, in: TimeZone(identifier: "Europe/Berlin")) + #"</time> (<span dir="ltr">Europe/Berlin</span>) · "#
            + iso + fa.clockTime(Self.start) + "</time> به وقت شما"))
        #expect(fa.clockTime(Self.start).contains("۹:۰۰") && fa.dateTime(Self.start, in: TimeZone(identifier: "Europe/Berlin")).contains("۷:۳۰"))
        #expect(summary.contains("نسخهٔ ۱، آخرین ذخیره توسط"))

        let history = admin.get("/campaigns/\(persian)/history").text
        #expect(history.contains("<h1>تاریخچهٔ <bdi>حراج پاییزه</bdi></h1>"))
        #expect(history.contains("<h2>نسخهٔ ۱ "))

        let published = try admin.submit("/campaigns/\(persian)/publish", from: "/campaigns/\(persian)", [:])
        #expect(published.status == 303, "\(published.text.components(separatedBy: "error-summary").dropFirst().first?.prefix(600) ?? "")")
        #expect(admin.get("/campaigns/\(persian)").text.contains("«\u{2068}حراج پاییزه\u{2069}» منتشر شد."))
    }

    @Test("German: list, summary, history, import and delete pages speak German")
    func germanPages() async throws {
        let (_, admin, _, persian) = try await Self.setUp(language: "de", zone: "Europe/Berlin", campaigns: 0)
        let list = admin.get("/campaigns").text
        #expect(list.contains("<h1>Kampagnen</h1>") && list.contains(">Neue Kampagne</a>") && list.contains("1 Kampagne<"))
        let summary = admin.get("/campaigns/\(persian)").text
        #expect(summary.contains("<h2>Zielgruppe</h2>") && summary.contains("Revision 1, zuletzt gespeichert von"))
        // The campaign's zone is the user's: one time, named
        let de = Self.localization.localizer(.de, timeZone: TimeZone(identifier: "Europe/Berlin")!)
        #expect(summary.contains(de.dateTime(Self.start) + #"</time> (<span dir="ltr">Europe/Berlin</span>)</dd>"#))
        #expect(summary.contains(#"<code dir="ltr">plan</code> ist gleich <bdi>طلایی</bdi>"#))
        #expect(admin.get("/campaigns/\(persian)/history").text.contains("Verlauf von <bdi>حراج پاییزه</bdi>"))
        #expect(admin.get("/campaigns/import").text.contains("<h1>Kampagnen importieren</h1>"))
        let delete = admin.get("/campaigns/\(persian)/delete").text
        #expect(delete.contains("<h1>Den Entwurf „<bdi>حراج پاییزه</bdi>“ löschen?</h1>"))
        #expect(delete.contains("<title>Den Entwurf „\u{2068}حراج پاییزه\u{2069}“ löschen?"))
    }

    @Test("Reports: German headings and CSV headers in the same order; Persian digits and percentages")
    func reports() async throws {
        let (app, admin, shop, _) = try await Self.setUp(language: "de", zone: "Europe/Berlin", campaigns: 1)
        let campaign = try #require(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).campaigns.first { $0.name == "Campaign 0" })
        let day = try #require(UTCTime.date(day: "2026-09-20")).addingTimeInterval(3600)
        let events = (0..<1234).map { index in
            Event(id: UUID().uuidString, appID: shop, campaignID: campaign.id, type: index < 8 ? .click : .impression, occurredAt: day,
                  platform: "ios", installationID: "i\(index)", detail: index < 8 ? "primary" : "", url: nil, test: false)
        }
        _ = try app.database.events.ingest(events, now: app.clock.now)
        let range = "from=2026-09-20&to=2026-09-22"

        let index = admin.get("/reports?\(range)").text
        #expect(index.contains("<h1>Berichte</h1>") && index.contains("1 Kampagne hat ausgeliefert."))
        #expect(index.contains("20.09.2026") || index.contains("20. Sept. 2026"))
        let report = admin.get("/campaigns/\(campaign.id)/report?\(range)").text
        #expect(report.contains("Tag für Tag") && report.contains("1.226"))
        let csv = admin.get("/campaigns/\(campaign.id)/report.csv?\(range)")
        let lines = csv.text.split(separator: "\r\n")
        #expect(lines.first == "Datum,Impressionen,Klicks,CTR,Geschlossen,Fehler,Conversions")
        #expect(lines.dropFirst().first == "2026-09-20,1226,8,0.0065,0,0,0")

        _ = try admin.submit("/account", from: "/account", ["language": "fa", "time_zone": "Asia/Tehran"])
        let persian = admin.get("/campaigns/\(campaign.id)/report?\(range)").text
        #expect(persian.contains("۱٬۲۲۶"))
        #expect(persian.contains("۰٫۷٪") || persian.contains("٪۰٫۷"))
        #expect(persian.contains("۳ روز"))
        let persianCSV = admin.get("/campaigns/\(campaign.id)/report.csv?\(range)").text
        #expect(persianCSV.hasPrefix("تاریخ,نمایش‌ها,کلیک‌ها,نرخ کلیک,"))
        let bad = admin.get("/reports?from=2026-09-22&to=2026-09-20")
        #expect(bad.status == 400 && bad.text.contains("تاریخ شروع"))
    }

    @Test("In the pseudo-language every word of these pages comes from the catalog; only user values and times do not")
    func everyWordFromTheCatalog() async throws {
        let (app, admin) = try await TestApp.withAdmin { $0.pseudoLocale = true }
        let now = app.clock.now
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: now)
        let id = try app.database.campaigns.create(Self.persianCampaign(app: shop.id), state: .draft, actor: .commandLine, now: now)
        let day = try #require(UTCTime.date(day: "2026-09-20")).addingTimeInterval(3600)
        _ = try app.database.events.ingest([
            Event(id: "e1", appID: shop.id, campaignID: id, type: .impression, occurredAt: day, platform: "ios", installationID: "a",
                  detail: "", url: nil, test: false),
        ], now: now)
        let pseudo = [("Accept-Language", "en-XA")]
        _ = admin.get("/campaigns", headers: pseudo)  // shows, and so clears, the sign-up's message
        let range = "from=2026-09-20&to=2026-09-22"
        for path in [
            "/campaigns", "/campaigns?q=nothing", "/campaigns/\(id)", "/campaigns/\(id)/history", "/campaigns/import", "/campaigns/\(id)/delete",
            "/reports?\(range)", "/reports?from=2026-01-01&to=2026-01-02", "/campaigns/\(id)/report?\(range)", "/reports?from=x",
        ] {
            var html = admin.get(path, headers: pseudo).text
            html = "<main" + (html.components(separatedBy: "<main").last ?? html)
            // What is not the catalog's: user values, codes and times (each in its own element), and the chart's day labels
            for pattern in [
                #"<(\w+)[^>]*dir="(auto|ltr)"[^>]*>.*?</\1>"#, #"<bdi>.*?</bdi>"#, #"<code[^>]*>.*?</code>"#, #"<time[^>]*>.*?</time>"#,
                #"<text x="[^"]*" y="[^"]*">[^<]*</text>"#, #"<[^>]*>"#,
            ] {
                html = html.replacingOccurrences(of: pattern, with: " ", options: [.regularExpression])
            }
            var previous = ""
            while previous != html {
                previous = html
                html = html.replacingOccurrences(of: "⟦[^⟦⟧]*⟧", with: " ", options: .regularExpression)
            }
            let left = html.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { $0.unicodeScalars.contains { CharacterSet.letters.contains($0) } && $0 != "command line" }
            #expect(left.isEmpty, "\(path) shows text that is not from the catalog: \(left)")
        }
    }

    @Test("Long lists page in the language's digits")
    func pagination() async throws {
        let (_, admin, _, _) = try await Self.setUp(language: "fa", campaigns: CampaignPages.pageSize)
        #expect(admin.get("/campaigns").text.contains("صفحهٔ ۱ از ۲"))
    }

    @Test("Persian: the chart's day labels are written in the calendar of every other date on the page")
    func chartCalendar() throws {
        let fa = Self.localization.localizer(.fa, timeZone: Self.tehran)
        let day = try #require(UTCTime.date(day: "2026-10-25"))
        let month = fa.formatted(day, Date.FormatStyle().month(.abbreviated), in: .gmt)
        #expect(fa.day("2026-10-25").contains(month), "the header's day names the same month")
        let ticks = DailyChart.dayTickIndices(["2026-10-25", "2026-10-26"], fa)
        #expect(ticks.map(\.0) == [0, 1])
        #expect(ticks[0].1.contains(month) && ticks[0].1.contains("۲۵"))
        #expect(!ticks[0].1.contains("آبان"), "not the solar calendar's month")

        // Past three months, each month's first day: Gregorian months, so 1 Aug, 1 Sep, 1 Oct, 1 Nov.
        let start = try #require(UTCTime.date(day: "2026-08-01"))
        let dates = (0..<100).map { UTCTime.day(start.addingTimeInterval(Double($0) * 86_400)) }
        #expect(DailyChart.dayTickIndices(dates, fa).map(\.0) == [0, 31, 61, 92])
    }

    @Test("A preview frame's own words are in the console's language and direction; the message keeps its version's")
    func previewFrameLanguage() async throws {
        let (_, admin, _, persian) = try await Self.setUp(language: "de")
        let frame = admin.get("/campaigns/\(persian)/preview/frame").text
        #expect(frame.contains(#"<html lang="de" dir="ltr">"#))
        #expect(frame.contains(#"dir="rtl" lang="" data-message"#), "the default version's language is not recorded: unknown, not German")
        let blank = admin.get("/preview/blank").text
        #expect(blank.contains(#"<html lang="de" dir="ltr">"#))
        let sample = admin.get("/preview/gallery/frame?layout=card&lang=fa").text
        #expect(sample.contains(#"<html lang="de" dir="ltr">"#))
        #expect(sample.contains(#"dir="rtl" lang="fa" data-message"#))
    }
}
