import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

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
