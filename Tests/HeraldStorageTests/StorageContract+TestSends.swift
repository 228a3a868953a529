import Foundation
import HeraldDomain
@testable import HeraldStorage
import TestSupport
import Testing

/// The storage contract for test sends, on every engine: what is sent reads back, in-app tests live an
/// hour in the app's feeds, push tests are outbox rows apart from the campaign's, and a campaign keeps
/// its newest sends only.
extension StorageContractTests {
    @Test(arguments: StorageEngine.available)
    func testSendsReadBackAndKeepApart(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let stores = database.stores
        let shop = try stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Self.start)
        let sara = try stores.apps.addTestDevice(appID: shop.id, installationID: "iid-sara", name: "Sara «سارا»", actor: .commandLine, now: Self.start)
        let omid = try stores.apps.addTestDevice(appID: shop.id, installationID: "iid-omid", name: "Omid", actor: .commandLine, now: Self.start)
        let actor = AuditActor(userID: nil, keyID: nil, label: "editor@example.com")

        // In-app: each device once, in the order chosen, in the feeds for an hour.
        let inAppID = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Card", triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "سلام"))),
            state: .draft, actor: .commandLine, now: Self.start)
        let inApp = try #require(try stores.campaigns.find(id: inAppID))
        let sent = try stores.testSends.send(inApp, to: [omid, sara, omid], actor: actor, now: Self.start)
        #expect(sent.channel == .inApp && sent.revision == 1 && sent.campaignID == inAppID && sent.appID == shop.id)
        #expect(sent.campaign == inApp.campaign)
        #expect(sent.devices.map(\.installationID) == ["iid-omid", "iid-sara"])
        #expect(sent.devices.map(\.name) == ["Omid", "Sara «سارا»"])
        #expect(sent.devices.allSatisfy { $0.outcome == .inFeed && $0.delivery == nil })
        #expect(sent.sentBy == "editor@example.com")
        #expect(sent.sentAt.asStored == Self.start.asStored)
        #expect(sent.expiresAt.asStored == Self.start.addingTimeInterval(TestSend.inAppLifetime).asStored)
        #expect(try stores.testSends.find(id: sent.id) == sent)
        #expect(try stores.testSends.live(appID: shop.id, now: Self.start).map(\.id) == [sent.id])
        #expect(try stores.testSends.live(appID: shop.id, now: Self.start.addingTimeInterval(TestSend.inAppLifetime)).isEmpty)
        #expect(try stores.campaigns.find(id: inAppID) == inApp, "the campaign is not written")
        let line = try #require(try stores.auditLog.latest(action: "campaign.test_send"))
        #expect(line.details == "revision 1 to 2 test devices: Omid, Sara «سارا»")
        #expect(throws: TestSendError.deviceCount) { try stores.testSends.send(inApp, to: [], actor: actor, now: Self.start) }

        // Push: one outbox row per device with a token, due now, no campaign id; none for a device without one.
        _ = try stores.installations.upsert(appID: shop.id, installationID: "iid-sara", registration: InstallationRegistration.sample(token: "aaaa01"), now: Self.start)
        _ = try stores.installations.upsert(appID: shop.id, installationID: "iid-other", registration: InstallationRegistration.sample(token: "aaaa09"), now: Self.start)
        let pushID = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Push", push: PushNotification(title: "Hi")), state: .draft, actor: .commandLine, now: Self.start)
        let push = try #require(try stores.campaigns.find(id: pushID))
        let pushed = try stores.testSends.send(push, to: [sara, omid], actor: actor, now: Self.start)
        #expect(pushed.devices.map(\.outcome) == [.queued, .noToken])
        #expect(pushed.devices[0].delivery == TestSend.Delivery(state: "pending", reason: nil, sentAt: nil))
        #expect(pushed.status(of: pushed.devices[0], at: Self.start) == .pending)
        #expect(pushed.expiresAt.asStored == Self.start.asStored && !pushed.isLive(at: Self.start))
        #expect(try stores.testSends.live(appID: shop.id, now: Self.start).map(\.id) == [sent.id], "a push test is never in a feed")

        // A refresh is queued beside the pending test row; the claim takes both, the test's with its send's id.
        #expect(try stores.pushOutbox.queueRefresh(appID: shop.id, now: Self.start, spacing: 0) == 2)
        let claimed = try stores.pushOutbox.claim(limit: 10, now: Self.start)
        let test = try #require(claimed.first { $0.testSendID != nil })
        #expect(test.testSendID == pushed.id && test.campaignID == nil && test.token == "aaaa01" && test.installationID == "iid-sara")
        #expect(claimed.filter { $0.testSendID == nil && $0.campaignID == nil }.count == 2, "the two refreshes")
        try stores.pushOutbox.record([(test, .sent(at: Self.start))], now: Self.start)
        let after = try #require(try stores.testSends.find(id: pushed.id))
        guard case .sent(let at) = after.status(of: after.devices[0], at: Self.start) else {
            Issue.record("not sent: \(after.devices[0])")
            return
        }
        #expect(at?.asStored == Self.start.asStored)
        #expect(try stores.pushOutbox.progress(campaignID: pushID).planned == 0, "the campaign's sending counts no test")

        // A campaign keeps its newest sends; deleting a draft takes its tests with it.
        for _ in 0..<TestSend.keptPerCampaign { _ = try stores.testSends.send(inApp, to: [sara], actor: actor, now: Self.start) }
        let kept = try stores.testSends.recent(campaignID: inAppID, limit: 100)
        #expect(kept.count == TestSend.keptPerCampaign && !kept.contains { $0.id == sent.id })
        #expect(kept.map(\.id) == kept.map(\.id).sorted(by: >))
        #expect(try stores.campaigns.deleteDraft(id: pushID, actor: actor, now: Self.start))
        #expect(try stores.testSends.find(id: pushed.id) == nil)
    }
}
