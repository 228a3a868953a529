import Foundation
import HeraldDomain
import PropertyBased
import TestSupport
import Testing

/// A generated document, what replaces it, and what is done with it once stored.
struct CampaignScenario: Sendable, CustomStringConvertible {
    let first: CampaignCase
    let replacement: CampaignCase
    let publish: Bool
    let replace: Bool
    let reimport: Bool

    var description: String { "\(first)\nthen publish: \(publish), replace: \(replace), re-import: \(reimport)" }

    static func generator(app: Int64) -> Generator<CampaignScenario, Shrink.None<CampaignScenario>> {
        Generated.cases { draw in
            CampaignScenario(
                first: CampaignCases.make(&draw, app: app), replacement: CampaignCases.make(&draw, app: app),
                publish: draw.chance(0.5), replace: draw.chance(0.3), reimport: draw.chance(0.2))
        }
    }
}

@Suite("Generated inputs against the application", .serialized)
struct GeneratedCampaignJSONProperty {
    static let outputOnly: Set<String> = ["id", "status", "revision"]

    @Test("Generated Campaign JSON through the API is never a 5xx, gets the documented status, and what is stored reads back equal through GET, the feed, export and import")
    func campaignDocuments() async throws {
        let fixture = try await GeneratedFixture.make()
        var run = GeneratedRun("Campaign JSON through the API", cases: 200)
        run.run(CampaignScenario.generator(app: fixture.shop)) { scenario, run in
            let first = scenario.first
            let answer = fixture.api("POST", "/api/v1/campaigns", body: first.body, contentType: first.contentType)
            run.note("POST \(answer.status)")
            guard Self.expectAnswer(answer.status, answer.text, for: first.expected, success: 201, &run, input: scenario),
                  answer.status == 201 else { return }
            let created = try JSONValue.parse(answer.body)
            guard let id = created["id"]?.numberValue.map(Int64.init) else { return run.fail("no id in \(answer.text)", input: scenario) }
            // A document the format leaves open must at least read back as Herald first answered it.
            let expected = if case .either = first.expected { created.removing(Self.outputOnly) } else { first.stored }
            Self.expectSame(created, expected, first, "the 201 answer", &run, input: scenario)
            run.expect(created["status"]?.text == "\"draft\"" && created["revision"]?.numberValue == 1, "not a draft at revision 1", input: scenario)
            Self.expectReadBack(fixture, id: id, expected, first, &run, input: scenario)

            if scenario.replace {
                let replacement = scenario.replacement
                let put = fixture.api("PUT", "/api/v1/campaigns/\(id)", body: replacement.body, contentType: replacement.contentType,
                                      headers: [("If-Match", "\"r1\"")])
                run.note("PUT \(put.status)")
                if Self.expectAnswer(put.status, put.text, for: replacement.expected, success: 200, &run, input: scenario), put.status == 200 {
                    let replaced = try JSONValue.parse(put.body)
                    let now = if case .either = replacement.expected { replaced.removing(Self.outputOnly) } else { replacement.stored }
                    Self.expectSame(replaced, now, replacement, "the PUT answer", &run, input: scenario)
                    Self.expectReadBack(fixture, id: id, now, replacement, &run, input: scenario)
                }
            }
            let current = try JSONValue.parse(fixture.api("GET", "/api/v1/campaigns/\(id)").body)
            if scenario.publish {
                let published = fixture.api("POST", "/api/v1/campaigns/\(id)/publish")
                run.expect([200, 422].contains(published.status), "publish answered \(published.status): \(published.text)", input: scenario)
                run.note("publish \(published.status)")
            }
            Self.expectFeed(fixture, id: id, current.removing(Self.outputOnly), first, &run, input: scenario)
            if scenario.reimport { try Self.expectReimport(fixture, id: id, current.removing(Self.outputOnly), first, &run, input: scenario) }
        }
    }

    /// Checks the status against what the case documents; returns false when it broke the property.
    static func expectAnswer(_ status: Int, _ text: String, for expected: Expected, success: Int, _ run: inout GeneratedRun, input: Any) -> Bool {
        let allowed: Set<Int> = switch expected {
        case .stored: [success]
        case .refused(let statuses, _): statuses
        case .either: [success, 400, 415, 422]
        }
        run.expect(allowed.contains(status), "answered \(status) where \(expected) was documented: \(text.prefix(2000))", input: input)
        return allowed.contains(status)
    }

    /// A console page's error messages, or its start: what a failure should show of it.
    static func pageText(_ html: String) -> String {
        let messages = html.matches(of: /class="(?:field-error|error|flash[^"]*)"[^>]*>([^<]*)</).map { String($0.output.1) }
        return messages.isEmpty ? String(html.prefix(500)) : messages.joined(separator: " | ")
    }

    static func expectSame(_ answer: JSONValue, _ expected: JSONValue, _ sent: CampaignCase, _ what: String, _ run: inout GeneratedRun, input: Any) {
        var actual = answer.removing(outputOnly)
        var wanted = expected
        if sent.dataOrderUnknown {
            actual = actual.sortingData
            wanted = wanted.sortingData
        }
        if let difference = firstDifference(actual, wanted) {
            run.fail("\(what) differs from what was sent, at \(difference)\nanswer: \(actual.text.prefix(3000))\nexpected: \(wanted.text.prefix(3000))", input: input)
        }
    }

    /// GET answers the campaign as stored, and export writes it the same.
    static func expectReadBack(_ fixture: GeneratedFixture, id: Int64, _ expected: JSONValue, _ sent: CampaignCase, _ run: inout GeneratedRun, input: Any) {
        let get = fixture.api("GET", "/api/v1/campaigns/\(id)")
        run.expect(get.status == 200, "GET answered \(get.status): \(get.text.prefix(500))", input: input)
        if let document = try? JSONValue.parse(get.body) { expectSame(document, expected, sent, "GET", &run, input: input) }
        let export = fixture.browser.get("/campaigns/\(id)/export")
        run.expect(export.status == 200, "export answered \(export.status)", input: input)
        if case .array(let campaigns)? = (try? JSONValue.parse(export.body))?["campaigns"], campaigns.count == 1 {
            expectSame(campaigns[0], expected, sent, "export", &run, input: input)
        } else {
            run.fail("export is not a file of one campaign: \(export.text.prefix(500))", input: input)
        }
    }

    /// A published campaign inside its schedule is in the feed, and a test campaign in a test device's
    /// feed, as stored; anything else is not.
    static func expectFeed(_ fixture: GeneratedFixture, id: Int64, _ expected: JSONValue, _ sent: CampaignCase, _ run: inout GeneratedRun, input: Any) {
        let now = fixture.app.clock.now
        let state = (try? fixture.app.database.campaigns.find(id: id))??.state
        let testOnDevice = expected["testOnDevice"]?.text == "true"
        let inWindow = (expected.at("schedule.start")?.date.map { $0 <= now } ?? true) && (expected.at("schedule.end")?.date.map { $0 > now } ?? true)
        let inApp = expected["channel"]?.text != JSONValue.quoted(Channel.push.rawValue)
        let listed = inApp && (testOnDevice ? [.draft, .published, .paused].contains(state) : state == .published && inWindow)
        for device in [nil, fixture.testDevice] {
            let feed = fixture.api("GET", "/api/v1/feed", headers: device.map { [("X-Installation-Id", $0)] } ?? [])
            run.expect(feed.status == 200, "the feed answered \(feed.status): \(feed.text.prefix(500))", input: input)
            guard case .array(let campaigns)? = (try? JSONValue.parse(feed.body))?["campaigns"] else {
                return run.fail("the feed has no campaigns: \(feed.text.prefix(500))", input: input)
            }
            let entry = campaigns.first { $0["id"]?.numberValue == Double(id) }
            let shouldList = listed && (device != nil || !testOnDevice)
            run.expect((entry != nil) == shouldList, "the feed\(device == nil ? "" : " of a test device") \(shouldList ? "lacks" : "lists") campaign \(id) (state \(String(describing: state)))", input: input)
            if let entry {
                run.note("in the feed\(device == nil ? "" : " of a test device")")
                // A feed campaign is the device's part of the campaign: no marketers' words, no app; plus when it started.
                expectSame(entry.removing(["startedAt", "test"]), expected.removing(["app", "name", "description", "testOnDevice", "channel"]), sent, "the feed", &run, input: input)
                run.expect(entry["test"]?.text == (device != nil && testOnDevice ? "true" : nil), "the feed marks test campaigns, and only them, test", input: input)
            }
        }
    }

    /// Exported and imported again, the campaign comes back as a new draft with the same content.
    static func expectReimport(_ fixture: GeneratedFixture, id: Int64, _ expected: JSONValue, _ sent: CampaignCase, _ run: inout GeneratedRun, input: Any) throws {
        let export = fixture.browser.get("/campaigns/\(id)/export")
        let imported = fixture.importFile(export.body, app: fixture.shop)
        run.expect(imported.status == 303, "import of an export answered \(imported.status): \(imported.text.prefix(1000))", input: input)
        guard imported.status == 303, let copy = try fixture.newestCampaign(), copy != id else { return }
        run.note("re-imported")
        let document = try JSONValue.parse(fixture.api("GET", "/api/v1/campaigns/\(copy)").body)
        expectSame(document, expected, sent, "the imported copy", &run, input: input)
    }
}
