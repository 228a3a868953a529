import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// Report and stats ranges at and past their edges: a 400, never a trap; breakdowns bounded however many
/// names the events bring.
extension ReportTests {
    @Test("Year 0, year 10000 and impossible days in a report or stats range are a 400, not a crash", arguments: [
        "from=0000-01-01", "to=0000-01-01", "from=0000-01-01&to=0000-12-31", "from=1999-12-31", "to=10000-01-01",
        "from=2026-02-30", "from=-001-01-01", "to=2000-01-01&from=1999-01-01", "from=9999-12-31&to=9999-12-31x",
    ])
    func reportRanges(query: String) async throws {
        let fixture = try await CampaignAPITests.fixture()
        let created = fixture.call("POST", "/api/v1/campaigns", json: CampaignAPITests.cardJSON(app: fixture.shop))
        let id = try #require(try fixture.document(created).id)
        #expect(fixture.call("GET", "/api/v1/campaigns/\(id)/stats?\(query)", key: fixture.readKey).status == 400)
        let browser = try await TestApp.signedIn(fixture.app)
        #expect(browser.get("/reports?\(query)").status == 400)
        #expect(browser.get("/campaigns/\(id)/report?\(query)").status == 400)
        #expect(browser.get("/campaigns/\(id)/report.csv?\(query)").status == 400)
    }

    @Test("The first and last supported days make a report; a range ending on the first day starts there")
    func reportRangeEdges() async throws {
        let fixture = try await CampaignAPITests.fixture()
        let created = fixture.call("POST", "/api/v1/campaigns", json: CampaignAPITests.cardJSON(app: fixture.shop))
        let id = try #require(try fixture.document(created).id)
        for query in ["to=2000-01-01", "from=9999-12-01&to=9999-12-31", "from=2000-01-01&to=2000-12-31"] {
            let answer = fixture.call("GET", "/api/v1/campaigns/\(id)/stats?\(query)", key: fixture.readKey)
            #expect(answer.status == 200, "\(query): \(answer.text)")
        }
        let first = fixture.call("GET", "/api/v1/campaigns/\(id)/stats?to=2000-01-01", key: fixture.readKey)
        #expect(first.text.contains(#""from":"2000-01-01""#))
    }

    @Test("Thirty thousand conversion names make a bounded answer: the top 20 and the rest counted together")
    func conversionBreakdown() async throws {
        // Given a campaign with 30,000 distinct conversion events on one day (and two of one name)
        let fixture = try await EventTests.fixture()
        let now = fixture.app.clock.now
        var events = (0..<30_000).map { index in
            Event(id: UUID().uuidString, appID: fixture.shop, campaignID: fixture.campaign, type: .conversion, occurredAt: now, platform: "ios",
                  installationID: nil, detail: "event_\(index)", url: nil, test: false)
        }
        events += (0..<5).map { _ in
            Event(id: UUID().uuidString, appID: fixture.shop, campaignID: fixture.campaign, type: .conversion, occurredAt: now, platform: "ios",
                  installationID: nil, detail: "purchase", url: nil, test: false)
        }
        for batch in stride(from: 0, to: events.count, by: 1000) {
            _ = try fixture.app.database.events.ingest(Array(events[batch..<min(batch + 1000, events.count)]), now: now)
        }
        // When the stats and the report are read
        let stats = try fixture.stats("")
        let byEvent = try #require(stats["conversionsByEvent"] as? [String: Int])
        // Then 20 names are listed, the most recorded first among them, and the others are counted, not listed
        #expect(byEvent.count == EventCounts.topConversionEvents)
        #expect(byEvent["purchase"] == 5)
        #expect(stats["otherConversions"] as? Int == 30_005 - byEvent.values.reduce(0, +))
        #expect((stats["totals"] as? [String: Any])?["conversions"] as? Int == 30_005)
        let browser = try await TestApp.signedIn(fixture.app)
        let page = browser.get("/campaigns/\(fixture.campaign)/report")
        #expect(page.status == 200)
        #expect(page.body.count < 200_000, "the page is \(page.body.count) bytes")
        #expect(page.text.contains("All other events"))
    }
}
