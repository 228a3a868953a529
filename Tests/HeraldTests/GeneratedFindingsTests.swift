import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// What generated inputs (Tests/HeraldTests/Generated, Fuzz/, schemathesis) found, each pinned by a
/// hand-written case.
@Suite("Found by generated inputs")
struct GeneratedFindingsTests {
    @Test("The API and imports drop the message fields a layout does not use, as the composer does and Campaign JSON documents")
    func layoutFieldsDroppedOnEveryPath() async throws {
        let fixture = try await CampaignAPITests.fixture()
        let json = #"""
            {"app": \#(fixture.shop), "name": "Image", "message": {"layout": "image_only", "imageUrl": "https://example.com/p.png",
             "title": {"text": "not shown"}, "orientation": "portrait", "action": {"url": "myapp://offers"}}}
            """#
        let created = fixture.call("POST", "/api/v1/campaigns", json: json)
        #expect(created.status == 201, "\(created.text)")
        let expected = Message(layout: .imageOnly, imageUrl: "https://example.com/p.png", action: .init(url: "myapp://offers"))
        #expect(try fixture.document(created).message == expected)
        let id = try #require(try fixture.document(created).id)
        #expect(try fixture.document(fixture.call("GET", "/api/v1/campaigns/\(id)")).message == expected)
        let plan = try CampaignTransfer(database: fixture.app.database).plan(Data(json.utf8), appID: fixture.shop)
        #expect(plan.campaigns.map(\.message) == [expected])
    }
}
