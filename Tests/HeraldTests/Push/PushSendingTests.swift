import Crypto
import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import PushMock
import TestSupport
import Testing

/// The dispatcher against the mock APNs and FCM on loopback: what each device is sent, and what each
/// of the providers' answers does to the outbox and the registrations.
@Suite("Push sending through the outbox", .serialized)
struct PushSendingTests {
    struct Fixture {
        let app: TestApp
        let mock: MockProviders
        let appID: Int64
        let box: SecretBox

        var outbox: any PushOutboxStore { app.database.pushOutbox }

        func register(_ id: String, provider: PushProvider, token: String, platform: Platform = .ios, language: String = "en",
                      country: String = "US", timeZone: String? = nil, allowed: Bool = true) throws {
            _ = try app.database.installations.upsert(
                appID: appID, installationID: id,
                registration: InstallationRegistration(
                    platform: platform, pushProvider: provider, pushToken: token, appVersion: "2.4.0", language: language,
                    country: country, timeZone: timeZone, notificationsAllowed: allowed),
                now: Date())
        }

        func publish(_ campaign: Campaign) throws -> Int64 {
            try app.database.campaigns.create(campaign, state: .published, actor: .commandLine, now: Date())
        }

        /// Waits (up to 20 s) until the campaign's send is done; returns its counts.
        func finished(_ campaignID: Int64) async throws -> PushProgress {
            for _ in 0..<400 {
                let progress = try outbox.progress(campaignID: campaignID)
                if progress.isDone { return progress }
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("campaign \(campaignID) did not finish sending: \(try outbox.progress(campaignID: campaignID))")
            return try outbox.progress(campaignID: campaignID)
        }

        func requests(_ provider: String, path: String? = nil) -> [RecordedRequest] {
            mock.requests().filter { $0.provider == provider && (path == nil || $0.path == path) }
        }
    }

    static func run(concurrency: Int = 16, _ body: (Fixture) async throws -> Void) async throws {
        let folder = try TemporaryFolder()
        let certificate = folder.url.appendingPathComponent("mock.pem")
        var options = MockProviders.Options()
        options.certificateFile = certificate
        let mock = try await MockProviders.start(options)
        let box = SecretBox(key: SymmetricKey(size: .bits256))
        do {
            let app = try await TestApp { configuration in
                configuration.secretBox = box
                configuration.push.trustRootsFile = certificate.path
                configuration.push.concurrency = concurrency
                configuration.push.ratePerSecond = nil
            }
            let created = try app.database.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: Date())
            let editor = PushSetupEditor(database: app.database, box: box)
            try editor.setAPNs(
                appID: created.id, keyPEM: mock.credentials.apnsKeyPEM, keyID: mock.credentials.apnsKeyID, teamID: mock.credentials.apnsTeamID,
                topic: "com.example.shop", url: mock.baseURL.absoluteString, actor: .commandLine, now: Date())
            try editor.setFCM(appID: created.id, serviceAccountJSON: mock.credentials.fcmServiceAccountJSON, url: mock.baseURL.absoluteString,
                              actor: .commandLine, now: Date())
            let fixture = Fixture(app: app, mock: mock, appID: created.id, box: box)
            try app.application.startPushing()
            do {
                try await body(fixture)
            } catch {
                await app.application.shutdown()
                throw error
            }
            await app.application.shutdown()
        } catch {
            try await mock.shutdown()
            throw error
        }
        try await mock.shutdown()
    }

    static let notification = PushNotification(
        title: "Sale", subtitle: "Shoes", body: "Half price today", badge: 1, sound: "default", category: "OFFER", threadId: "sales",
        url: "myapp://sale", translations: ["fa": PushTranslation(title: "حراج", body: "نیم‌بها، فقط امروز")])

    @Test("Each registered device gets its language's version once, through its provider, with APNs's headers and FCM's token")
    func sendsEachDeviceItsVersion() async throws {
        try await Self.run { fixture in
            try fixture.register("i-en", provider: .apns, token: "aaaa01")
            try fixture.register("i-fa", provider: .apns, token: "aaaa02", language: "fa-IR")
            try fixture.register("a-fa", provider: .fcm, token: "fcm-token-03", platform: .android, language: "fa")
            try fixture.register("i-off", provider: .apns, token: "aaaa04", allowed: false)
            let data = CustomData([.init(key: "screen", value: "sale")])
            let id = try fixture.publish(Campaign(app: fixture.appID, name: "Sale", push: Self.notification, data: data))
            fixture.app.application.services.push.dispatcher.wake()
            let progress = try await fixture.finished(id)
            #expect(progress.sent == 3)
            #expect(progress.planned == 3, "a device whose user turned notifications off is not targeted")

            let apns = fixture.requests("apns")
            #expect(Set(apns.map(\.path)) == ["/3/device/aaaa01", "/3/device/aaaa02"])
            let english = try #require(apns.first { $0.path == "/3/device/aaaa01" })
            #expect(english.body == String(decoding: PushPayload.apns(Self.notification.version(for: "en").notification, campaignID: id, data: data), as: UTF8.self))
            #expect(english.header("apns-topic") == "com.example.shop")
            #expect(english.header("apns-push-type") == "alert")
            #expect(english.header("apns-priority") == "10")
            #expect(english.header("apns-collapse-id") == "herald-\(id)")
            let expiration = try #require(english.header("apns-expiration").flatMap(Double.init))
            #expect(abs(expiration - Date().addingTimeInterval(86_400).timeIntervalSince1970) < 120)
            let persian = try #require(apns.first { $0.path == "/3/device/aaaa02" })
            #expect(persian.body.contains("حراج"))

            let fcm = try #require(fixture.requests("fcm").first { $0.path.hasSuffix("messages:send") })
            #expect(fcm.path == "/v1/projects/\(fixture.mock.credentials.fcmProjectID)/messages:send")
            #expect(fcm.body == String(decoding: PushPayload.fcm(Self.notification.version(for: "fa").notification, campaignID: id, data: data, token: "fcm-token-03", platform: .android), as: UTF8.self))
            #expect(fcm.header("authorization")?.hasPrefix("Bearer ") == true)
        }
    }

    @Test("An iPhone registered with an FCM token gets the apns override: its alert with subtitle, badge, sound, category and thread; a silent push wakes it as a background push at priority 5")
    func iPhoneThroughFCM() async throws {
        try await Self.run { fixture in
            try fixture.register("iphone", provider: .fcm, token: "fcm-iphone-01", platform: .ios)
            try fixture.register("pixel", provider: .fcm, token: "fcm-pixel-02", platform: .android)
            let id = try fixture.publish(Campaign(app: fixture.appID, name: "Sale", push: Self.notification))
            #expect(try await fixture.finished(id).sent == 2)
            let sends = fixture.requests("fcm").filter { $0.path.hasSuffix("messages:send") }
            #expect(sends.allSatisfy { $0.status == 200 }, "the mock FCM took both: \(sends.map(\.body))")
            let toIPhone = try #require(sends.first { $0.body.contains("fcm-iphone-01") })
            let received = try #require(FCMForwarding.apnsPayload(body: toIPhone.body), "what the iPhone gets through APNs")
            let aps = try #require(received["aps"] as? [String: Any])
            #expect(aps["alert"] as? [String: String] == ["title": "Sale", "subtitle": "Shoes", "body": "Half price today"])
            #expect(aps["badge"] as? Int == 1 && aps["sound"] as? String == "default")
            #expect(aps["category"] as? String == "OFFER" && aps["thread-id"] as? String == "sales")
            #expect(received["herald_campaign_id"] as? String == String(id))
            let headers = try #require(((try JSONSerialization.jsonObject(with: Data(toIPhone.body.utf8)) as? [String: Any])?["message"] as? [String: Any])?["apns"] as? [String: Any])
            #expect(headers["headers"] as? [String: String] == ["apns-push-type": "alert", "apns-priority": "10", "apns-collapse-id": "herald-\(id)"])
            let toPixel = try #require(sends.first { $0.body.contains("fcm-pixel-02") })
            #expect(!toPixel.body.contains(#""apns""#) && toPixel.body.contains(#""android""#))

            let silent = try fixture.publish(Campaign(app: fixture.appID, name: "Wake", push: PushNotification(silent: true)))
            #expect(try await fixture.finished(silent).sent == 2)
            let woken = try #require(fixture.requests("fcm").last { $0.body.contains("fcm-iphone-01") && $0.body.contains("background") })
            #expect(woken.status == 200)
            #expect(woken.body.contains(#""apns":{"headers":{"apns-push-type":"background","apns-priority":"5","apns-collapse-id":"herald-\#(silent)"},"payload":{"aps":{"content-available":1}}}"#))
        }
    }

    @Test("A dead token is pruned (410 / UNREGISTERED), a 429's Retry-After is waited out before the retry, a bad token fails with its reason")
    func providerAnswers() async throws {
        try await Self.run { fixture in
            try fixture.register("gone-apns", provider: .apns, token: "gone01")
            try fixture.register("gone-fcm", provider: .fcm, token: "gone-fcm-02", platform: .android)
            try fixture.register("busy", provider: .apns, token: "busy03")
            try fixture.register("bad", provider: .apns, token: "bad04")
            try fixture.register("fine", provider: .fcm, token: "fine05", platform: .android)
            let id = try fixture.publish(Campaign(app: fixture.appID, name: "Answers", push: PushNotification(title: "Hi", body: "There")))
            let progress = try await fixture.finished(id)
            #expect(progress.sent == 2)
            #expect(progress.unregistered == 2)
            #expect(progress.failed == 1)
            #expect(try fixture.outbox.failures(campaignID: id).contains { $0.state == "failed" && $0.reason == "BadDeviceToken" })
            #expect(try fixture.outbox.failures(campaignID: id).contains { $0.state == "unregistered" && $0.reason == "UNREGISTERED" },
                    "FCM's reason is its errorCode, not the status NOT_FOUND")
            for gone in ["gone-apns", "gone-fcm"] {
                let installation = try #require(try fixture.app.database.installations.installation(appID: fixture.appID, id: gone))
                #expect(installation.pushToken == nil)
                #expect(installation.tokenRemovedAt != nil)
            }
            #expect(try fixture.app.database.installations.installation(appID: fixture.appID, id: "fine")?.pushToken == "fine05")
            let busy = fixture.requests("apns", path: "/3/device/busy03")
            #expect(busy.map(\.status) == [429, 200])
            if busy.count == 2 {
                #expect(busy[1].receivedAt - busy[0].receivedAt >= 0.95, "the retry came \(busy[1].receivedAt - busy[0].receivedAt) s after a Retry-After of 1 s")
            }
        }
    }

    @Test("Targeting is evaluated on the server: platform, language, country and percentage; test campaigns reach only test devices")
    func targeting() async throws {
        try await Self.run { fixture in
            for index in 0..<200 {
                try fixture.register("device-\(index)", provider: index % 2 == 0 ? .apns : .fcm, token: "tok\(index)",
                                     platform: index % 2 == 0 ? .ios : .android, language: index % 4 < 2 ? "de" : "en", country: index % 3 == 0 ? "DE" : "US")
            }
            let targeting = Targeting(platforms: [.ios], languages: ["de"], percentage: 50)
            let id = try fixture.publish(Campaign(app: fixture.appID, name: "Targeted", targeting: targeting, push: PushNotification(title: "Hallo")))
            let progress = try await fixture.finished(id)
            let expected = (0..<200).filter { index in
                index % 2 == 0 && index % 4 < 2 && Targeting.rolloutBucket(installationID: "device-\(index)", campaignID: id) < 50
            }
            #expect(progress.sent == expected.count)
            #expect(Set(fixture.requests("apns").map(\.path)) == Set(expected.map { "/3/device/tok\($0)" }))

            _ = try fixture.app.database.apps.addTestDevice(appID: fixture.appID, installationID: "device-7", name: "QA", actor: .commandLine, now: Date())
            var test = Campaign(app: fixture.appID, name: "Test", push: PushNotification(title: "Test"))
            test.testOnDevice = true
            test.schedule.start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 86_400).rounded())
            let testID = try fixture.publish(test)
            let testProgress = try await fixture.finished(testID)
            #expect(testProgress.sent == 1, "a test campaign goes to the test devices at once, whatever its schedule")
        }
    }

    @Test("Rows left sending by a stopped process are settled unknown and never sent again")
    func interruptedRowsAreNotResent() async throws {
        try await Self.run { fixture in
            await fixture.app.application.services.push.dispatcher.shutdown()
            try fixture.register("one", provider: .apns, token: "one01")
            try fixture.register("two", provider: .apns, token: "two02")
            let id = try fixture.app.database.campaigns.create(
                Campaign(app: fixture.appID, name: "Crash", push: PushNotification(title: "Hi")), state: .draft, actor: .commandLine, now: Date())
            try fixture.app.database.campaigns.setState(id: id, to: .published, actor: .commandLine, now: Date())
            // What a process killed mid-send leaves: both rows planned, one claimed (`sending`).
            let page = try fixture.app.database.installations.withTokens(appID: fixture.appID, pageSize: 10)
            try fixture.outbox.plan(campaignID: id, appID: fixture.appID, entries: page.installations.map { ($0, Date()) },
                                    through: page.installations.last?.rowID, complete: true, now: Date())
            let claimed = try fixture.outbox.claim(limit: 1, now: Date())
            #expect(claimed.count == 1)
            let restarted = PushDispatcher(
                database: fixture.app.database, credentials: fixture.app.database.pushCredentials(box: fixture.box),
                settings: { var settings = PushSettings(); settings.trustRootsFile = fixture.app.application.services.push.dispatcher.settings.trustRootsFile; return settings }(),
                logger: .init(label: "test"))
            try restarted.start()
            let progress = try await fixture.finished(id)
            await restarted.shutdown()
            #expect(progress.unknown == 1)
            #expect(progress.sent == 1)
            #expect(fixture.requests("apns").map(\.path) == ["/3/device/two02"], "the claimed row is not sent again")
        }
    }

    @Test("A paused campaign's rows wait; resumed, they are sent")
    func pausedCampaignsWait() async throws {
        try await Self.run { fixture in
            try fixture.register("one", provider: .apns, token: "one01")
            let id = try fixture.app.database.campaigns.create(
                Campaign(app: fixture.appID, name: "Paused", push: PushNotification(title: "Hi")), state: .paused, actor: .commandLine, now: Date())
            let page = try fixture.app.database.installations.withTokens(appID: fixture.appID, pageSize: 10)
            try fixture.outbox.plan(campaignID: id, appID: fixture.appID, entries: page.installations.map { ($0, Date()) },
                                    through: page.installations.last?.rowID, complete: true, now: Date())
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try fixture.outbox.progress(campaignID: id).pending == 1)
            #expect(fixture.requests("apns").isEmpty)
            try fixture.app.database.campaigns.setState(id: id, to: .published, actor: .commandLine, now: Date())
            #expect(try await fixture.finished(id).sent == 1)
        }
    }

    @Test("Sent at each device's time: 09:00 in the schedule's zone is 09:00 in each device's zone, the next day where it has passed")
    func deviceTime() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        let start = calendar.date(from: DateComponents(year: 2030, month: 6, day: 1, hour: 9))!
        var campaign = Campaign(app: 1, name: "Morning", schedule: Schedule(start: start, timeZone: "Europe/Berlin"),
                                push: PushNotification(title: "Good morning", inDeviceTimeZone: true))
        let early = Date(timeIntervalSince1970: 1_900_000_000 - 86_400 * 365)
        let tehran = PushAudience.due(campaign, timeZone: "Asia/Tehran", publishedAt: early, now: early)
        #expect(tehran == start.addingTimeInterval(-90 * 60), "Tehran (+03:30) is 1 h 30 ahead of Berlin in summer (+02:00)")
        #expect(PushAudience.due(campaign, timeZone: nil, publishedAt: early, now: early) == start, "no zone: the schedule's")
        #expect(PushAudience.due(campaign, timeZone: "Not/AZone", publishedAt: early, now: early) == start)
        let justAfterTehranNine = start.addingTimeInterval(-90 * 60 + 60)
        #expect(PushAudience.due(campaign, timeZone: "Asia/Tehran", publishedAt: early, now: justAfterTehranNine) == tehran?.addingTimeInterval(86_400))

        // Published days after its start: the next 09:00 on each device, not at once at whatever hour it is there.
        let fourDaysLater = start.addingTimeInterval(4 * 86_400 + 3 * 3600)
        var losAngeles = Calendar(identifier: .gregorian)
        losAngeles.timeZone = TimeZone(identifier: "America/Los_Angeles")!
        let due = try #require(PushAudience.due(campaign, timeZone: "America/Los_Angeles", publishedAt: fourDaysLater, now: fourDaysLater))
        #expect(due > fourDaysLater && due.timeIntervalSince(fourDaysLater) <= 86_400)
        #expect(losAngeles.dateComponents([.hour, .minute], from: due) == DateComponents(hour: 9, minute: 0), "09:00 in Los Angeles, not 21:22")

        // A start near the end of the range: a device west of the schedule's zone would have it in the year 10000.
        var last = Campaign(app: 1, name: "Last", schedule: Schedule(start: UTCTime.date(rfc3339: "9999-12-31T23:00:00Z"), timeZone: "UTC"),
                            push: PushNotification(title: "Bye", inDeviceTimeZone: true))
        #expect(PushAudience.due(last, timeZone: "Pacific/Honolulu", publishedAt: early, now: early) == nil, "never inside Herald's range")
        #expect(PushAudience.due(last, timeZone: "Asia/Tokyo", publishedAt: early, now: early) == UTCTime.date(rfc3339: "9999-12-31T14:00:00Z"))
        last.push?.inDeviceTimeZone = false
        #expect(PushAudience.due(last, timeZone: "Pacific/Honolulu", publishedAt: early, now: early) == UTCTime.date(rfc3339: "9999-12-31T23:00:00Z"))
        campaign.push?.inDeviceTimeZone = false
        #expect(PushAudience.due(campaign, timeZone: "Asia/Tehran", publishedAt: early, now: early) == start)
    }

    @Test("The campaign page shows the notification, its versions and the send's counts; the JSON the page's script polls gives them too")
    func campaignPage() async throws {
        try await Self.run { fixture in
            try fixture.register("i-en", provider: .apns, token: "aaaa01")
            try fixture.register("gone", provider: .apns, token: "gone02")
            let id = try fixture.publish(Campaign(app: fixture.appID, name: "Sale", push: Self.notification))
            let progress = try await fixture.finished(id)
            #expect(progress.sent == 1 && progress.unregistered == 1)
            let browser = fixture.app.browser()
            _ = try browser.submit("/setup", from: "/setup", [
                "name": "Ada", "email": "ada@example.com", "password": "correct horse battery", "password_confirmation": "correct horse battery",
            ])
            let page = browser.get("/campaigns/\(id)")
            #expect(page.status == 200)
            #expect(page.text.contains("Half price today"))
            #expect(page.text.contains("نیم‌بها، فقط امروز"), "the Persian version is listed")
            #expect(page.text.contains(#"data-push-progress="/campaigns/\#(id)/push-progress" data-done="true""#))
            #expect(page.text.contains(#"<progress id="push-progress-bar" max="2" value="2">"#))
            #expect(page.text.contains("Done: 1 of 2 notifications sent"))
            #expect(page.text.contains(#"<code dir="ltr">Unregistered</code>"#), "failures by the provider's reason")
            #expect(!page.text.contains("Triggers"), "a push campaign has no triggers section")
            let json = browser.get("/campaigns/\(id)/push-progress")
            #expect(json.status == 200)
            #expect(json.headers["cache-control"] == "no-store")
            let counts = try #require(try JSONSerialization.jsonObject(with: Data(json.body)) as? [String: Any])
            #expect(counts["planned"] as? Int == 2 && counts["sent"] as? Int == 1 && counts["unregistered"] as? Int == 1 && counts["done"] as? Bool == true)
            #expect(fixture.app.browser().get("/campaigns/\(id)/push-progress").status == 303, "signed out: to the sign-in page")

            // The report: the send's figures, and what the app reported (a test device's events left out)
            let now = Date()
            let day = UTCTime.day(now)
            _ = try fixture.app.database.events.ingest([
                Event(id: UUID().uuidString, appID: fixture.appID, campaignID: id, type: .pushReceived, occurredAt: now, platform: "ios",
                      installationID: "i-en", detail: "", url: nil, test: false),
                Event(id: UUID().uuidString, appID: fixture.appID, campaignID: id, type: .pushOpen, occurredAt: now, platform: "ios",
                      installationID: "i-en", detail: "", url: nil, test: false),
                Event(id: UUID().uuidString, appID: fixture.appID, campaignID: id, type: .pushOpen, occurredAt: now, platform: "ios",
                      installationID: "qa", detail: "", url: nil, test: true),
            ], now: now)
            let report = browser.get("/campaigns/\(id)/report?from=\(day)&to=\(day)")
            #expect(report.status == 200)
            let figures = report.text.matches(of: /<dt>([^<]+)<\/dt><dd class="metric-value">([^<]+)<\/dd>/).map { "\($0.output.1)=\($0.output.2)" }
            #expect(Array(figures.prefix(6)) == ["Targeted=2", "Sent=1", "Not sent=1", "Delivered=1", "Opened=1", "Open rate=100%"])
            #expect(report.text.contains("<th scope=\"row\">iOS</th><td>2</td><td>1</td><td>1</td><td>1</td>"))
            let csv = browser.get("/campaigns/\(id)/report.csv?from=\(day)&to=\(day)")
            #expect(csv.text.contains("date,push sent,push delivered,push opened\r\n\(day),1,1,1\r\n"))

            // The stats endpoint gives scripts the same figures as the report.
            let key = try fixture.app.database.apiKeys.create(appID: fixture.appID, name: "bi", scopes: [.campaignsRead], actor: .commandLine, now: now).secret
            let stats = fixture.app.respond(Request(
                method: "GET", target: "/api/v1/campaigns/\(id)/stats?from=\(day)&to=\(day)", headers: HTTPHeaders([("Authorization", "Bearer \(key)")])))
            #expect(stats.status == 200)
            let push = try #require(try JSONValue.parse(stats.body)["push"], "a push campaign's stats have a push section: \(stats.text)")
            let expected = JSONValue.object([
                ("byPlatform", .object([("ios", .object([("delivered", .number(1)), ("opened", .number(1)), ("sent", .number(1)), ("targeted", .number(2))]))])),
                ("daily", .array([.object([("date", .string(day)), ("delivered", .number(1)), ("opened", .number(1)), ("sent", .number(1))])])),
                ("delivered", .number(1)), ("notSent", .number(1)),
                ("notSentByReason", .array([.object([("count", .number(1)), ("reason", .string("Unregistered")), ("state", .string("unregistered"))])])),
                ("openRate", .number(1)), ("opened", .number(1)), ("sent", .number(1)), ("targeted", .number(2)),
            ])
            #expect(firstDifference(push, expected) == nil, "\(stats.text)")

            // `/reports` lists it beside in-app campaigns, marked, its receipt and open in the impressions and clicks columns.
            let list = browser.get("/reports?from=\(day)&to=\(day)")
            #expect(list.status == 200)
            let row = try #require(list.text.firstMatch(of: /<tr>\s*<td><a href="\/campaigns\/\d+\/report[^"]*" dir="auto">Sale<\/a>([\s\S]*?)<\/tr>/)?.output.1)
            #expect(row.contains(#"<span class="badge badge-push">Push notification</span>"#))
            let cells = row.matches(of: /<td class="numeric">([^<]*)<\/td>/).map { String($0.output.1) }
            #expect(cells == ["1", "1", "100.0%", "0", "0", "0"], "received, opened, open rate; the test device's open left out")
            #expect(list.text.contains("For push notifications, impressions are notifications devices reported receiving"))
        }
    }

    @Test("Pausing and resuming an in-app campaign in a loop for 10 s sends each of 100 devices one silent refresh, and the changes after it wait for one at the end of the quiet period")
    func refreshStorm() async throws {
        try await Self.run(concurrency: 64) { fixture in
            for index in 0..<100 {
                try fixture.register("device-\(index)", provider: index.isMultiple(of: 2) ? .apns : .fcm, token: String(format: "%064x", index),
                                     platform: index.isMultiple(of: 2) ? .ios : .android)
            }
            try fixture.app.database.apps.setPushSettings(
                AppPushSettings(refreshOnChange: true, refreshMinutes: 1), appID: fixture.appID, actor: .commandLine, now: Date())
            var inApp = RulesFixtures.campaign(.modal)
            inApp.app = fixture.appID
            inApp.schedule = Schedule()
            let id = try fixture.app.database.campaigns.create(inApp, state: .published, actor: .commandLine, now: Date())
            let lifecycle = CampaignLifecycle(store: fixture.app.database.campaigns, changed: fixture.app.application.services.push.campaignChanged)
            let began = Date()
            var changes = 0
            while Date().timeIntervalSince(began) < 10 {
                let stored = try #require(try fixture.app.database.campaigns.find(id: id))
                try lifecycle.perform(stored.state == .published ? .pause : .resume, on: stored, actor: .commandLine, now: Date())
                changes += 1
                if changes.isMultiple(of: 50) { try await Task.sleep(for: .milliseconds(1)) }
            }
            try await Task.sleep(for: .seconds(2))
            let refreshes = fixture.mock.requests().filter { $0.body.contains("herald_refresh") }.count
            print("[measured] \(changes) pauses and resumes in 10 s sent \(refreshes) silent refreshes to 100 devices")
            #expect(changes > 100, "the loop ran")
            #expect(refreshes == 100, "one a device, not one a change")
            let next = try #require(try fixture.outbox.nextDue(), "the changes after the first refresh wait for one more")
            #expect(next.timeIntervalSince(began) > 55 && next.timeIntervalSince(began) <= 61, "at the end of the minute: \(next.timeIntervalSince(began)) s")
        }
    }

    @Test("With silent refresh on, publishing an in-app campaign sends the app's devices a background push; a daily cap of 1 skips a device's second campaign")
    func refreshAndDailyCap() async throws {
        try await Self.run { fixture in
            try fixture.register("one", provider: .apns, token: "one01")
            try fixture.register("two", provider: .fcm, token: "two02", platform: .android)
            try fixture.app.database.apps.setPushSettings(AppPushSettings(dailyCap: 1, refreshOnChange: true), appID: fixture.appID, actor: .commandLine, now: Date())
            var inApp = RulesFixtures.campaign(.modal)
            inApp.app = fixture.appID
            inApp.schedule = Schedule()
            let inAppID = try fixture.app.database.campaigns.create(inApp, state: .draft, actor: .commandLine, now: Date())
            let draft = try #require(try fixture.app.database.campaigns.find(id: inAppID))
            try CampaignLifecycle(store: fixture.app.database.campaigns, changed: fixture.app.application.services.push.campaignChanged)
                .perform(.publish, on: draft, actor: .commandLine, now: Date())
            for _ in 0..<200 where fixture.mock.requests().filter({ $0.path.hasPrefix("/3/device/") || $0.path.hasSuffix("messages:send") }).count < 2 {
                try await Task.sleep(for: .milliseconds(50))
            }
            let refresh = try #require(fixture.requests("apns", path: "/3/device/one01").first)
            #expect(refresh.header("apns-push-type") == "background")
            #expect(refresh.header("apns-priority") == "5")
            #expect(refresh.body == #"{"aps":{"content-available":1},"herald_refresh":1}"#)
            #expect(fixture.requests("fcm").contains { $0.body.contains(#""data":{"herald_refresh":"1"},"android":{"priority":"normal"}"#) })

            let first = try fixture.publish(Campaign(app: fixture.appID, name: "First", push: PushNotification(title: "One")))
            #expect(try await fixture.finished(first).sent == 2, "silent refreshes do not count against the cap")
            let second = try fixture.publish(Campaign(app: fixture.appID, name: "Second", push: PushNotification(title: "Two")))
            let progress = try await fixture.finished(second)
            #expect(progress.skipped == 2 && progress.sent == 0)
            #expect(try fixture.outbox.failures(campaignID: second).map(\.reason) == ["frequency_cap"])
        }
    }
}
