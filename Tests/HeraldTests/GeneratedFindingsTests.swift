import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
@testable import HeraldDelivery
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

    @Test("An event time on a day or at a time that does not exist is rejected, not counted on the day Foundation rolls it over to", arguments: [
        "2026-04-31T10:00:00Z", "2026-02-29T10:00:00Z", "2026-09-20T24:00:00Z", "2026-09-20T10:15:60Z", "2026-09-20T10:15:00+0100",
    ])
    func impossibleEventTimes(time: String) async throws {
        let fixture = try await EventTests.fixture()
        var event = EventTests.event("impression", campaign: fixture.campaign, at: fixture.app.clock.now)
        event["occurredAt"] = time
        let answer = try fixture.answer(fixture.post([event]))
        #expect(answer["accepted"] as? Int == 0)
        let rejected = try #require(answer["rejected"] as? [[String: Any]])
        #expect((rejected.first?["error"] as? String)?.contains("occurredAt") == true, "\(rejected)")
    }

    @Test("Times are read only in the documented form: an upper-case T and Z, an offset up to ±18:00, at most nine fractional digits", arguments: [
        ("2026-11-21t10:00:00Z", false), ("2026-11-21T10:00:00z", false), ("2026-11-21T10:00:00+18:01", false),
        ("2026-11-21T10:00:00-23:59", false), ("2026-11-21T10:00:00.1234567890Z", false),
        ("2026-11-21T10:00:00+18:00", true), ("2026-11-21T10:00:00-18:00", true), ("2026-11-21T10:00:00.123456789Z", true),
    ])
    func documentedTimesOnly(time: String, read: Bool) async throws {
        #expect((UTCTime.date(rfc3339: time) != nil) == read)
        let fixture = try await CampaignAPITests.fixture()
        let json = #"{"app": \#(fixture.shop), "name": "x", "message": {"layout": "modal", "title": {"text": "hi"}}, "schedule": {"start": "\#(time)"}}"#
        #expect(fixture.call("POST", "/api/v1/campaigns", json: json).status == (read ? 201 : 400))
    }

    @Test("If-Match reads entity tags as RFC 9110 writes them, commas inside the quotes included", arguments: [
        (#"W/"5T,A""#, 412), (#""a,b", "r1""#, 200), (#" "r1" , W/"x""#, 200), (#", "r1",,"#, 200), (#" , "#, 400), (#""r 1""#, 400), (#"W/ "r1""#, 400),
    ])
    func ifMatchWithCommas(ifMatch: String, status: Int) async throws {
        let fixture = try await CampaignAPITests.fixture()
        let id = try #require(try fixture.document(fixture.call("POST", "/api/v1/campaigns", json: CampaignAPITests.cardJSON(app: fixture.shop))).id)
        let answer = fixture.call("PUT", "/api/v1/campaigns/\(id)", json: CampaignAPITests.cardJSON(app: fixture.shop), headers: [("If-Match", ifMatch)])
        #expect(answer.status == status, "\(answer.text)")
    }

    @Test("A field the layout does not use is dropped when well formed and refused when malformed, through the API as through imports")
    func droppedFieldsAreJudgedForForm() async throws {
        let fixture = try await CampaignAPITests.fixture()
        func banner(primaryAction: String) -> String {
            #"""
            {"app": \#(fixture.shop), "name": "Banner", "message": {"layout": "banner", "title": {"text": "Hi"},
             "primaryAction": \#(primaryAction), "orientation": "portrait"}}
            """#
        }
        let wellFormed = banner(primaryAction: #"{"text": "Shop", "url": "https://example.com/shop"}"#)
        let created = fixture.call("POST", "/api/v1/campaigns", json: wellFormed)
        #expect(created.status == 201, "\(created.text)")
        #expect(try fixture.document(created).message == Message(layout: .banner, title: .init(text: "Hi")))
        #expect(try CampaignTransfer(database: fixture.app.database).plan(Data(wellFormed.utf8), appID: fixture.shop).canImport)

        // Found by schemathesis (seed 547181992030035817): a value the schema forbids was answered 201.
        let malformed = banner(primaryAction: #"{"text": "\#(String(repeating: "x", count: 61))", "url": "javascript:alert(1)"}"#)
        let refused = fixture.call("POST", "/api/v1/campaigns", json: malformed)
        #expect(refused.status == 422, "\(refused.text)")
        #expect(refused.text.contains("message.primaryAction.text") && refused.text.contains("message.primaryAction.url"), "\(refused.text)")
        let plan = try CampaignTransfer(database: fixture.app.database).plan(Data(malformed.utf8), appID: fixture.shop)
        #expect(!plan.canImport)
        #expect(Set(plan.problems.map(\.path)) == ["message.primaryAction.text", "message.primaryAction.url"])
    }

    @Test("A trailing comma is not JSON: the API and imports refuse it as the event reader does, saying where", arguments: [
        #"{"app": 1, "name": "x", "message": {"layout": "modal"},}"#, #"{"app": 1, "name": "x", "message": {"layout": "modal"}, "triggers": [{"event": "app_launch"} , ]}"#,
    ])
    func trailingCommas(json: String) async throws {
        let fixture = try await CampaignAPITests.fixture()
        let answer = fixture.call("POST", "/api/v1/campaigns", json: json.replacingOccurrences(of: #""app": 1"#, with: #""app": \#(fixture.shop)"#))
        #expect(answer.status == 400)
        #expect(answer.text.contains("a comma before a closing bracket"), "\(answer.text)")
        let plan = try CampaignTransfer(database: fixture.app.database).plan(Data("[\(json)]".utf8), appID: fixture.shop)
        #expect(plan.unreadable?.contains("a comma before a closing bracket") == true)
        #expect(throws: Never.self) { try JSONBody.check(Array(#"{"a": "[1,]", "b": [1, 2], "c": {}}"#.utf8)) }
    }

    @Test("A path segment that starts with a combining mark is still a segment: its installation's events can be erased")
    func combiningMarkAfterSlash() async throws {
        let fixture = try await EventTests.fixture()
        let installation = "\u{301}iid-\u{E002A}"
        _ = fixture.post([EventTests.event("impression", campaign: fixture.campaign, at: fixture.app.clock.now, installation: installation)])
        let privacy = try fixture.app.database.apiKeys.create(appID: fixture.shop, name: "privacy", scopes: [.installationsDelete], actor: .commandLine, now: fixture.app.clock.now)
        let answer = fixture.app.respond(Request(
            method: "DELETE", target: "/api/v1/installations/" + PercentEncoding.encode(installation),
            headers: HTTPHeaders([("Authorization", "Bearer \(privacy.secret)")])))
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.text.contains(#""erasedEvents":1"#))
    }

    @Test("A Retry-After of text outside ASCII is no date to the delivery client, instead of trapping in DateFormatter (found by the push client's generated answers)")
    func retryAfterOutsideASCII() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for header in [" \u{200D}\u{202B}\u{8F644}", "Sun, 06 Nov 2027 08:49:37 GMT\u{202B}", "\u{0660}\u{0661}", "日曜日"] {
            #expect(RetryAfter.delay(header, now: now) == nil, "\(header)")
        }
        #expect(RetryAfter.delay("Tue, 01 Jan 2030 00:00:00 GMT", now: now) == 86_400, "an ASCII date still reads (capped at a day)")
    }
}
