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
}
