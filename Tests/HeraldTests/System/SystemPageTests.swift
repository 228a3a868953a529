import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

@testable import HeraldConsole

@Suite("The System page")
struct SystemPageTests {
    @Test("Admins see the build, uptime, database size, raw events, retention, the last backup and the metrics address; others are refused")
    func systemPage() async throws {
        let (app, admin) = try await TestApp.withAdmin { $0.metricsAddress = "127.0.0.1:9464"; $0.retentionDays = 30 }
        let before = admin.get("/system")
        #expect(before.status == 200)
        let page = before.text
        #expect(page.contains("<code>\(HeraldBuild.version)</code>") && page.contains(HeraldBuild.commit))
        #expect(page.contains(#"<a href="/system""#), "in the admin's navigation")
        #expect(page.contains("None yet"), "no raw events")
        #expect(page.contains("None recorded: run herald backup"))
        #expect(page.contains("Raw events older than 30 days are deleted"))
        #expect(page.contains("Installations that have not registered for as long are deleted too."))
        #expect(page.contains("No retention run has deleted anything"))
        #expect(page.contains("http://127.0.0.1:9464/metrics"))
        #expect(page.contains(app.folder.url.appendingPathComponent("herald.sqlite").path))

        // Given events, a backup and a retention run
        let now = app.clock.now
        _ = try app.database.events.ingest(RetentionTests.impressions(3, campaign: 1, app: 1, at: now), now: now)
        let copy = app.folder.url.appendingPathComponent("copy.sqlite").path
        try app.database.backup(to: copy, now: now)
        let shop = try app.database.apps.create(name: "Shop", platforms: [.android], actor: .commandLine, now: now)
        _ = try app.database.installations.upsert(
            appID: shop.id, installationID: "phone-in-a-drawer",
            registration: InstallationRegistration(platform: .android, pushProvider: .fcm, pushToken: "tok", notificationsAllowed: true), now: now)
        try app.application.retention.run(now: now.addingTimeInterval(31 * 86_400))
        let after = admin.get("/system").text
        #expect(after.contains(copy), "the last backup's file")
        #expect(after.contains("3 raw events deleted. 1 installation that had stopped registering deleted."))
        #expect(admin.get("/audit").text.contains("Database backed up"))

        // Editors and viewers have no System page
        try app.createUser(email: "editor@example.com", role: .editor)
        let editor = app.browser(address: "10.0.0.2")
        _ = try editor.submit("/login", from: "/login", ["email": "editor@example.com", "password": "correct horse battery"])
        #expect(editor.get("/system").status == 403)
        #expect(!editor.get("/campaigns").text.contains(#"<a href="/system""#))
    }
}
