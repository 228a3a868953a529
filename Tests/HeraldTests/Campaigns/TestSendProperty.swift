import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import TestSupport
import Testing

/// Generated test sends through `POST /api/v1/campaigns/{id}/test-sends`: lists of test devices in any
/// order and with repeats, and every way of getting the body wrong (no device, strangers, too many,
/// ids from every Unicode plane with control characters, other types, unknown keys, broken JSON, other
/// media types). Never a 5xx; a 201 exactly when every id names a test device (at most 50 once repeats
/// are counted once), and then each chosen device, and no other, finds the test in its feed; a refusal
/// stores nothing and names `installationIds` or the id at fault.
@Suite("Generated inputs: test sends")
struct TestSendProperty {
    struct Case: CustomStringConvertible {
        let body: [UInt8]
        let contentType: String
        /// The devices a 201 goes to, in order, or nil when the body must be refused.
        let chosen: [String]?
        var description: String { "\(contentType) \(String(decoding: body.prefix(300), as: UTF8.self))" }
    }

    static let devices = (0..<6).map { "iid-\($0)-" + ["ok", "سارا", "👩‍💻", "x y"][$0 % 4] }

    static func body(_ ids: [JSONValue], extra: [(key: String, value: JSONValue)] = []) -> [UInt8] {
        Array(JSONValue.object([(key: "installationIds", value: .array(ids))] + extra).text.utf8)
    }

    static func generate(_ draw: inout Draw) -> Case {
        let json = "application/json"
        switch draw.int(0...11) {
        case 0...4:
            // Test devices in any order, some repeated.
            let picked = draw.list(1...8) { draw in draw.pick(devices) }
            var seen = Set<String>()
            return Case(body: body(picked.map { .string($0) }), contentType: json, chosen: picked.filter { seen.insert($0).inserted })
        case 5:
            // A stranger among test devices: text from every plane, controls and all.
            var ids = draw.list(0...3) { draw in JSONValue.string(draw.pick(devices)) }
            let stranger = draw.chance(0.5) ? GeneratedText.valid(&draw, maxPieces: 3, maxCharacters: 40) : GeneratedText.withControl(&draw)
            ids.insert(.string(stranger), at: draw.int(0...ids.count))
            return Case(body: body(ids), contentType: json, chosen: nil)
        case 6:
            return Case(body: body([]), contentType: json, chosen: nil)
        case 7:
            return Case(body: body((0..<draw.int(51...80)).map { .string("many-\($0)") }), contentType: json, chosen: nil)
        case 8:
            let wrong: JSONValue = draw.pick([.null, .bool(true), .number(3), .string("iid-0-ok"), .object([]), .array([.number(1)]), .array([.null])])
            let text = JSONValue.object([(key: "installationIds", value: wrong)]).text
            return Case(body: Array((draw.chance(0.3) ? "[" + text + "]" : text).utf8), contentType: json, chosen: nil)
        case 9:
            return Case(
                body: body([.string(devices[0])], extra: [(key: draw.pick(["installationIDs", "devices", "", "x"]), value: .number(1))]),
                contentType: json, chosen: nil)
        case 10:
            let good = body([.string(devices[0])])
            let cut = draw.int(0...(good.count - 1))
            var broken = Array(good.prefix(cut))
            if draw.chance(0.5) { broken += [0xFF, 0xC3] }
            return Case(body: broken, contentType: json, chosen: nil)
        default:
            return Case(body: body([.string(devices[0])]), contentType: draw.pick(["text/plain", "application/x-www-form-urlencoded", ""]), chosen: nil)
        }
    }

    @Test func testSendsAreSentExactlyToTheTestDevicesNamed() async throws {
        let fixture = try await GeneratedFixture.make()
        let now = fixture.app.clock.now
        for device in Self.devices {
            _ = try fixture.app.database.apps.addTestDevice(appID: fixture.shop, installationID: device, name: "QA " + device, actor: .commandLine, now: now)
        }
        let campaign = try fixture.app.database.campaigns.create(
            Campaign(app: fixture.shop, name: "Tested", triggers: [Trigger(event: "app_launch")], message: Message(layout: .modal, title: .init(text: "T"))),
            state: .draft, actor: .commandLine, now: now)
        let target = "/api/v1/campaigns/\(campaign)/test-sends"
        var run = GeneratedRun("test sends", cases: 300)
        run.run(Generated.cases { draw in Self.generate(&draw) }) { sample, run in
            let before = try fixture.app.database.testSends.recent(campaignID: campaign, limit: 1).first?.id
            let response = fixture.api("POST", target, body: sample.body, contentType: sample.contentType.isEmpty ? nil : sample.contentType)
            run.note(String(response.status))
            run.expect(response.status < 500, "answered \(response.status): \(response.text)", input: sample)
            let newest = try fixture.app.database.testSends.recent(campaignID: campaign, limit: 1).first
            guard let chosen = sample.chosen else {
                run.expect([400, 415, 422].contains(response.status), "a refusal answered \(response.status): \(response.text)", input: sample)
                run.expect(newest?.id == before, "a refused test was stored", input: sample)
                if response.status == 422 {
                    run.expect(response.text.contains(#""fields":[{"message":"#) && response.text.contains(#""path":""#),
                               "the refusal names no field: \(response.text)", input: sample)
                }
                return
            }
            run.expect(response.status == 201, "a valid test answered \(response.status): \(response.text)", input: sample)
            run.expect(newest?.devices.map(\.installationID) == chosen, "sent to \(String(describing: newest?.devices.map(\.installationID)))", input: sample)
            for device in Self.devices {
                let feed = fixture.app.respond(Request(method: "GET", target: "/api/v1/feed", headers: HTTPHeaders([
                    ("Authorization", "Bearer \(fixture.key)"), ("X-Installation-Id", device),
                ])))
                let copies = (try? CampaignJSON.decoder().decode(Feed.self, from: Data(feed.body)))?.campaigns.filter { $0.id == campaign } ?? []
                // A device chosen by this or an earlier test within the hour has the newest copy; the others none.
                let expected = try fixture.app.database.testSends.live(appID: fixture.shop, now: fixture.app.clock.now)
                    .contains { $0.devices.contains { $0.installationID == device } }
                run.expect(copies.count == (expected ? 1 : 0) && copies.allSatisfy { $0.test == true },
                           "\(device) has \(copies.count) copies", input: sample)
            }
        }
    }
}
