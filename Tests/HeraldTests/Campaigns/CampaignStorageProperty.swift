import Foundation
import HeraldDomain
@testable import HeraldStorage
import TestSupport
import Testing

/// The storage contract's generated campaigns: here rather than in HeraldStorageTests because the campaign
/// document generator (`ValidCampaign`) is shared with the API's generated tests.
@Suite("Generated campaigns in storage")
struct CampaignStorageProperty {
    static let start = Date(timeIntervalSince1970: 1_790_000_000.123)

    /// Generated campaigns (every layout, push, triggers, targeting, data, text in many scripts, times to the
    /// millisecond) are stored and read back equal: the row, its revision and its export document.
    @Test(arguments: StorageEngine.available)
    func generatedCampaignsReadBackUnchanged(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios, .android, .web], actor: .commandLine, now: Self.start)
        let campaigns = database.stores.campaigns
        let decoder = CampaignJSON.decoder()
        var run = GeneratedRun("storage contract: campaigns on \(engine.rawValue)", cases: 60)
        run.run(Generated.cases { draw -> (campaign: Campaign, state: CampaignState)? in
            let document = ValidCampaign.document(&draw, app: shop.id).sent
            guard let campaign = try? decoder.decode(Campaign.self, from: Data(document.text.utf8)) else { return nil }
            return (campaign, draw.pick(CampaignState.allCases))
        }) { drawn, run in
            guard let (campaign, state) = drawn else { return run.note("not a campaign") }
            guard (try? CampaignSave.readableDocument(campaign.content)) != nil else {
                run.expect((try? campaigns.create(campaign, state: state, actor: .commandLine, now: Self.start)) == nil, "an unreadable one was stored", input: campaign)
                return run.note("refused")
            }
            let id = try campaigns.create(campaign, state: state, actor: .commandLine, now: Self.start)
            var expected = campaign.content
            expected.id = id
            let stored = try campaigns.find(id: id)
            run.expect(stored?.campaign == expected, "read back \(String(describing: stored?.campaign))", input: campaign)
            run.expect(stored?.state == state, "state \(String(describing: stored?.state))", input: campaign)
            run.expect(try campaigns.revisions(id: id).first?.campaign == expected, "its revision differs", input: campaign)
            let exported = try campaigns.documents(matching: CampaignQuery(), after: id - 1, limit: 1, now: Self.start).first
            let exportedCampaign = exported.flatMap { try? CampaignSave.decode($0.json) }
            run.expect(exportedCampaign == campaign.content, "its document differs", input: campaign)
            run.note("stored")
        }
        #expect(run.failures == 0)
    }
}
