import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// Whatever is stored must read back.
@Suite("Stored campaigns read back, through the application")
struct StoredReadBackTests {
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
}
