import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import PushMock
import Testing

@testable import HeraldConsole

/// A push campaign's test, through the outbox and the mock APNs and FCM: each chosen device's outcome, and
/// nothing for the live campaign or anyone else.
@Suite("Test sends of push campaigns", .serialized)
struct TestSendPushTests {
    @Test("A push test goes to the chosen test devices' tokens at once and says per device what happened: sent, no token, failed, dead token")
    func pushTestOutcomes() async throws {
        try await PushSendingTests.run { fixture in
            let database = fixture.app.database
            let now = Date()
            try fixture.register("iid-ok", provider: .apns, token: "aaaa01", language: "fa")
            try fixture.register("iid-bad", provider: .apns, token: "bad02")
            try fixture.register("iid-gone", provider: .fcm, token: "gone-fcm-03", platform: .android)
            try fixture.register("iid-stranger", provider: .apns, token: "aaaa09")
            for (installation, name) in [("iid-ok", "Sara"), ("iid-bad", "Bad"), ("iid-gone", "Gone"), ("iid-none", "Unregistered")] {
                _ = try database.apps.addTestDevice(appID: fixture.appID, installationID: installation, name: name, actor: .commandLine, now: now)
            }
            let id = try database.campaigns.create(
                Campaign(app: fixture.appID, name: "Sale", push: PushSendingTests.notification), state: .draft, actor: .commandLine, now: now)
            let key = try database.apiKeys.create(appID: fixture.appID, name: "ci", scopes: [.campaignsRead, .campaignsWrite], actor: .commandLine, now: now)
            let sent = fixture.app.respond(Request(
                method: "POST", target: "/api/v1/campaigns/\(id)/test-sends",
                headers: HTTPHeaders([("Authorization", "Bearer \(key.secret)"), ("Content-Type", "application/json")]),
                body: Array(#"{"installationIds": ["iid-ok", "iid-bad", "iid-gone", "iid-none"]}"#.utf8)))
            #expect(sent.status == 201, "\(sent.text)")
            let testID = try #require((try JSONSerialization.jsonObject(with: Data(sent.body)) as? [String: Any])?["id"] as? Int)

            var settled: TestSend?
            for _ in 0..<400 {
                let send = try #require(try database.testSends.find(id: Int64(testID)))
                if send.devices.allSatisfy({ send.status(of: $0, at: Date()).isSettled }) {
                    settled = send
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            let send = try #require(settled, "the test's notifications did not all get an answer")
            let statuses = Dictionary(uniqueKeysWithValues: send.devices.map { ($0.installationID, send.status(of: $0, at: Date())) })
            if case .sent = statuses["iid-ok"] {} else { Issue.record("iid-ok: \(String(describing: statuses["iid-ok"]))") }
            #expect(statuses["iid-bad"] == .failed(reason: "BadDeviceToken"))
            #expect(statuses["iid-gone"] == .unregistered(reason: "UNREGISTERED") || statuses["iid-gone"] == .unregistered(reason: "Unregistered"))
            #expect(statuses["iid-none"] == .noToken)

            // Each chosen token got the campaign's notification, in its language, as the test's; nobody else got anything.
            let apns = fixture.requests("apns").filter { $0.path.hasPrefix("/3/device/") }
            #expect(Set(apns.map(\.path)) == ["/3/device/aaaa01", "/3/device/bad02"])
            let persian = try #require(apns.first { $0.path == "/3/device/aaaa01" })
            #expect(persian.body.contains("حراج"))
            #expect(persian.body.contains(#""herald_campaign_id":\#(id)"#))
            #expect(persian.header("apns-collapse-id") == "herald-test-\(testID)")
            #expect(fixture.requests("fcm").filter { $0.path.hasSuffix("messages:send") }.count == 1)

            // The live campaign: a draft at revision 1, nothing planned or sent, the dead token pruned all the same.
            let stored = try #require(try database.campaigns.find(id: id))
            #expect(stored.state == .draft && stored.revision == 1)
            let progress = try fixture.outbox.progress(campaignID: id)
            #expect(progress.planned == 0 && !progress.plannedAll && progress.started == nil)
            #expect(try database.installations.installation(appID: fixture.appID, id: "iid-gone")?.pushToken == nil)
        }
    }
}
