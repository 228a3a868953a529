import Foundation
@testable import HeraldConsole
@testable import HeraldDelivery
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// Exports are streamed a bounded page at a time.
extension TransferTests {
    @Test("An export is made a page at a time: 300 campaigns arrive in several pieces, each bounded, as one valid file")
    func streamedExport() async throws {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let campaigns = (0..<300).map { Campaign(app: shop.id, name: "Campaign \($0)", message: Message(layout: .modal, title: .init(text: "Hi \($0)"))) }
        _ = try app.database.campaigns.createAll(campaigns, state: .draft, actor: .commandLine, now: app.clock.now)
        let stream = CampaignTransfer(database: app.database).exportStream(CampaignQuery(), now: app.clock.now)
        var pieces: [[UInt8]] = []
        while let piece = try stream.next() { pieces.append(piece) }
        #expect(pieces.count == 300 / CampaignTransfer.exportPageSize + 1)
        #expect(pieces.allSatisfy { $0.count < 1024 * 1024 })
        let file = try CampaignJSON.decoder(refusingUnknownKeys: true).decode(CampaignExport.self, from: Data(pieces.joined()))
        #expect(file.campaigns.map(\.name) == campaigns.map(\.name))
        #expect(try stream.next() == nil)
        // An export of nothing is a valid file too.
        var none = CampaignQuery()
        none.search = "no such campaign"
        let empty = try CampaignTransfer(database: app.database).exportStream(none, now: app.clock.now).collect()
        #expect(try CampaignJSON.decoder().decode(CampaignExport.self, from: Data(empty)).campaigns.isEmpty)
    }
}
