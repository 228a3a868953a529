import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// Values from outside at and past their edges: they get a 4xx that says what and where, never a
/// trap, and nothing is stored that would not read back.
extension CampaignAPITests {
    @Test("A schedule time outside the supported range (422) or not a time at all (400) is refused by the API and by import, and the app's feed and list keep working", arguments: [
        ("0000-01-01T00:00:00+18:00", 422), ("0000-01-01T00:00:00Z", 422), ("1999-12-31T23:59:59Z", 422), ("9999-12-31T23:59:59-01:00", 422),
        ("2000-01-01T00:30:00+01:00", 422), ("2026-02-29T10:00:00Z", 400), ("2026-11-21T24:00:00Z", 400), ("2026-11-21T10:00:00+24:00", 400),
        ("+10000-01-01T00:00:00Z", 400), ("2026-11-21", 400), ("2030-11-21T10:00:00+18:01", 400), ("2030-11-21T10:00:00.1234567891Z", 400),
    ])
    func scheduleTimes(time: String, status: Int) async throws {
        let fixture = try await CampaignAPITests.fixture()
        let json = #"{"app": \#(fixture.shop), "name": "x", "message": {"layout": "modal", "title": {"text": "hi"}}, "schedule": {"start": "\#(time)"}}"#
        let answer = fixture.call("POST", "/api/v1/campaigns", json: json)
        #expect(answer.status == status, "\(answer.status) \(answer.text)")
        #expect(answer.text.contains(#""path":"schedule.start""#))
        #expect(fixture.call("GET", "/api/v1/campaigns").status == 200)
        let plan = try CampaignTransfer(database: fixture.app.database).plan(Data(json.utf8), appID: fixture.shop)
        #expect(plan.unreadable?.contains("schedule.start") == true || plan.problems.map(\.path) == ["schedule.start"])
        #expect(try fixture.app.database.campaigns.list(CampaignQuery(), now: fixture.app.clock.now).total == 0)
    }

    @Test("Times keep their millisecond and read back equal through the API")
    func millisecondTimes() async throws {
        let fixture = try await CampaignAPITests.fixture()
        for (sent, written) in [("2030-01-01T10:00:00.250+02:00", "2030-01-01T08:00:00.250Z"), ("2030-01-01T10:00:00.0004Z", "2030-01-01T10:00:00Z"),
                                ("2030-01-01T10:00:00.9996Z", "2030-01-01T10:00:01Z"), ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z")] {
            let json = #"{"app": \#(fixture.shop), "name": "x", "message": {"layout": "modal", "title": {"text": "hi"}}, "schedule": {"end": "\#(sent)"}}"#
            let created = fixture.call("POST", "/api/v1/campaigns", json: json)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.text.contains(#""end":"\#(written)""#), "\(created.text)")
            let id = try #require(try fixture.document(created).id)
            #expect(try fixture.document(fixture.call("GET", "/api/v1/campaigns/\(id)")).schedule.end == UTCTime.date(rfc3339: written))
        }
    }

    @Test("An unknown key anywhere in Campaign JSON is a 422 naming its path, with the key it resembles", arguments: [
        (#""priorty": 1"#, "priorty", "priority"),
        (##""message": {"layout": "modal", "title": {"text": "hi", "colour": "#000000"}}"##, "message.title.colour", "color"),
        (#""triggers": [{"event": "app_launch", "filter": []}]"#, "triggers.0.filter", "filters"),
        (#""targeting": {"percent": 5}"#, "targeting.percent", nil),
        (#""data": [{"key": "a", "value": "b", "note": "c"}]"#, "data.0.note", nil),
        (#""schedule": {"timezone": "UTC"}"#, "schedule.timezone", "timeZone"),
    ] as [(String, String, String?)])
    func unknownKeys(extra: String, path: String, suggestion: String?) async throws {
        let fixture = try await CampaignAPITests.fixture()
        var json = #"{"app": \#(fixture.shop), "name": "x", "message": {"layout": "modal", "title": {"text": "hi"}}}"#
        if extra.hasPrefix(#""message""#) {
            json = #"{"app": \#(fixture.shop), "name": "x", \#(extra)}"#
        } else {
            json.removeLast()
            json += ", \(extra)}"
        }
        let answer = fixture.call("POST", "/api/v1/campaigns", json: json)
        #expect(answer.status == 422, "\(answer.text)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: [String: Any]])
        let fields = try #require(body["error"]?["fields"] as? [[String: String]])
        #expect(fields.first?["path"] == path)
        if let suggestion { #expect(fields.first?["message"]?.contains("`\(suggestion)`") == true) }
        #expect(try fixture.app.database.campaigns.list(CampaignQuery(), now: fixture.app.clock.now).total == 0)
    }

    // MARK: Found by generated inputs (the `*Property` suites, Fuzz/, schemathesis), each pinned by a hand-written case

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
}
