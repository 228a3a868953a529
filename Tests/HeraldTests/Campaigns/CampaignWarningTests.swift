import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldStorage
import TestSupport
import Testing

/// Pre-flight warnings in the console: on the campaign's page while it is a draft or live, and asked about
/// before an in-app campaign is published, in the reader's language.
@Suite("Campaign warnings")
struct CampaignWarningTests {
    static func modal(_ app: Int64, _ name: String, priority: Int, frequency: Frequency = Frequency(type: .always), targeting: Targeting = Targeting()) -> Campaign {
        Campaign(
            app: app, name: name, priority: priority, triggers: [Trigger(event: "app_launch")], frequency: frequency, targeting: targeting,
            message: Message(layout: .modal, title: .init(text: "Hello")))
    }

    @Test("A draft always outranked says so on its page and is asked about at publish; once nothing outranks it, it publishes at once")
    func outrankedDraft() async throws {
        let (app, browser) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now).id
        let winner = try app.database.campaigns.create(Self.modal(shop, "Welcome", priority: 1), state: .published, actor: .commandLine, now: app.clock.now)
        let draft = try app.database.campaigns.create(Self.modal(shop, "Tips", priority: 3), state: .draft, actor: .commandLine, now: app.clock.now)

        let warning = "Campaigns with a higher priority show instead on every trigger of this one, to every device it reaches, each time: “\u{2068}Welcome\u{2069}”. This campaign would never show."
        let page = browser.get("/campaigns/\(draft)")
        #expect(page.text.contains(#"<h2 id="warnings-heading">What may keep it from showing</h2>"#))
        #expect(page.text.contains("<li>\(warning)</li>"))

        let asked = try browser.submit("/campaigns/\(draft)/publish", from: "/campaigns/\(draft)", [:])
        #expect(asked.status == 200)
        #expect(asked.text.contains("Published as it is, this would keep it from showing:"))
        #expect(asked.text.contains("<li>\(warning)</li>"))
        #expect(asked.text.contains("Publish it anyway?"))
        #expect(try app.database.campaigns.find(id: draft)?.state == .draft)

        // In Persian, the same warning in its words, the name in Persian quotation marks.
        _ = try browser.submit("/account", from: "/account", ["language": "fa", "time_zone": "UTC"])
        #expect(browser.get("/campaigns/\(draft)").text.contains("کارزارهایی با اولویت بالاتر"))
        _ = try browser.submit("/account", from: "/account", ["language": "en", "time_zone": "UTC"])

        // The winner paused: nothing outranks the draft, no warning, published without asking.
        try app.database.campaigns.setState(id: winner, to: .paused, actor: .commandLine, now: app.clock.now)
        #expect(!browser.get("/campaigns/\(draft)").text.contains("warnings-heading"))
        #expect(try browser.submit("/campaigns/\(draft)/publish", from: "/campaigns/\(draft)", [:]).status == 303)
        #expect(try app.database.campaigns.find(id: draft)?.state == .published)
    }

    @Test("Published from the composer, an outranked message is asked about above the form in the words of showing; Publish anyway publishes it")
    func composerAsks() async throws {
        let (app, browser) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now).id
        var welcome = Self.modal(shop, "Welcome", priority: 1)
        welcome.triggers = [Trigger(event: "app_launch"), Trigger(event: "purchase")]
        _ = try app.database.campaigns.create(welcome, state: .published, actor: .commandLine, now: app.clock.now)

        let fields = ComposerTests.cardFields(app: shop)
        let asked = try browser.submit("/campaigns", from: "/campaigns/new", pairs: fields + [("intent", "publish")])
        #expect(asked.status == 200)
        #expect(asked.text.contains("<h2>This message may rarely or never show</h2>"))
        #expect(asked.text.contains("“\u{2068}Welcome\u{2069}”. This campaign would never show.</li>"))
        #expect(asked.text.contains("Publish it anyway with the button below, or change it first."))
        #expect(asked.text.contains(#"value="publish_anyway">Publish anyway</button>"#))
        #expect(try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).total == 1, "nothing saved yet")

        let published = try browser.submit("/campaigns", from: "/campaigns/new", pairs: fields + [("intent", "publish_anyway")])
        #expect(published.status == 303)
        let stored = try app.database.campaigns.list(CampaignQuery(), now: app.clock.now).campaigns.first { $0.name == "Spring sale" }
        #expect(stored?.state == .published)
    }

    @Test("Targeting that no registered installation matches is said on the page; an app without registrations says nothing")
    func nobodyMatches() async throws {
        let (app, browser) = try await TestApp.withAdmin()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now).id
        let persian = try app.database.campaigns.create(
            Self.modal(shop, "Nowruz", priority: 2, targeting: Targeting(languages: ["fa"])), state: .draft, actor: .commandLine, now: app.clock.now)
        #expect(!browser.get("/campaigns/\(persian)").text.contains("warnings-heading"), "nothing is known of an app without registrations")

        let other = try app.database.apps.create(name: "Other", platforms: [.ios], actor: .commandLine, now: app.clock.now).id
        _ = try app.database.installations.upsert(
            appID: other, installationID: "berlin", registration: InstallationRegistration(platform: .ios, language: "de", notificationsAllowed: true),
            now: app.clock.now)
        var moved = Self.modal(other, "Nowruz", priority: 2, targeting: Targeting(languages: ["fa"]))
        moved.frequency = Frequency(type: .once)
        let there = try app.database.campaigns.create(moved, state: .published, actor: .commandLine, now: app.clock.now)
        #expect(browser.get("/campaigns/\(there)").text.contains(
            "<li>No registered installation of \u{2068}Other\u{2069} matches this targeting, so it would show to none of them.</li>"))

        // Ended, it is no longer warned about.
        try app.database.campaigns.setState(id: there, to: .stopped, actor: .commandLine, now: app.clock.now)
        #expect(!browser.get("/campaigns/\(there)").text.contains("warnings-heading"))
    }
}
