import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import TestSupport
import Testing

@Suite("Audience estimates: registered installations a targeting reaches")
struct AudienceAPITests {
    static let persian = TargetedDevice(platform: .ios, appVersion: "2.1.0", language: "fa", country: "IR")
    static let german = TargetedDevice(platform: .android, appVersion: "3.0.1", language: "de-AT", country: "AT")
    static let quiet = TargetedDevice(platform: .web, appVersion: "", language: "", country: "")
    static let profiles = InstallationProfiles(
        groups: [.init(device: persian, installations: 600, withToken: 500), .init(device: german, installations: 300, withToken: 100),
                 .init(device: quiet, installations: 100, withToken: 0)],
        installations: 1000, withToken: 600)

    static func estimate(_ json: String, profiles: InstallationProfiles = profiles, patternBudget: Duration = .seconds(10)) throws -> AudienceEstimate {
        AudienceEstimate.of(try CampaignJSON.decoder().decode(Targeting.self, from: Data(json.utf8)), among: profiles, patternBudget: patternBudget)
    }

    @Test("Each rule the server knows counts the groups it admits, installations and tokens alike")
    func eachRule() throws {
        let all = try Self.estimate("{}")
        #expect(all == AudienceEstimate(installations: 1000, withPushToken: 600, estimated: false, notApplied: []))
        let cases: [(String, Int, Int)] = [
            (#"{"platforms": ["android", "web"]}"#, 400, 100),
            (#"{"languages": ["de"]}"#, 300, 100),
            (#"{"countries": ["IR", "AT"]}"#, 900, 600),
            (#"{"appVersion": {"op": "equals", "value": "2.1.0"}}"#, 600, 500),
            (#"{"appVersion": {"op": "not_contains", "value": "2."}}"#, 400, 100),
            (#"{"appVersion": {"op": "regex", "value": "^3\\."}}"#, 300, 100),
            (#"{"platforms": ["ios"], "languages": ["de"]}"#, 0, 0),
        ]
        for (targeting, installations, tokens) in cases {
            let estimate = try Self.estimate(targeting)
            #expect(estimate.installations == installations && estimate.withPushToken == tokens && !estimate.estimated, "\(targeting)")
        }
    }

    @Test("A percentage, groups past the limit and patterns past the budget are estimated; device-only rules are named, not applied")
    func estimated() throws {
        let half = try Self.estimate(#"{"languages": ["fa"], "percentage": 50}"#)
        #expect(half == AudienceEstimate(installations: 300, withPushToken: 250, estimated: true, notApplied: []))
        // 200 installations (100 with tokens) past the groups read are shared out as those read matched.
        var partial = Self.profiles
        partial.installations += 200
        partial.withToken += 100
        let shared = try Self.estimate(#"{"platforms": ["ios"]}"#, profiles: partial)
        #expect(shared == AudienceEstimate(installations: 720, withPushToken: 583, estimated: true, notApplied: []))
        // No time for patterns: no group is evaluated, so nothing is known to match.
        let noTime = try Self.estimate(#"{"appVersion": {"op": "regex", "value": "^2"}}"#, patternBudget: .zero)
        #expect(noTime.estimated && noTime.installations == 0)
        let device = try Self.estimate(#"{"userProperties": [{"property": "tier", "op": "eq", "value": "gold"}], "daysSinceFirstOpen": {"min": 3}}"#)
        #expect(device == AudienceEstimate(installations: 1000, withPushToken: 600, estimated: false, notApplied: ["userProperties", "daysSinceFirstOpen"]))
    }

    @Test("POST /api/v1/audience answers from the key's app's registrations; bad input is a 4xx naming the field")
    func endpoint() async throws {
        let app = try await TestApp()
        let now = app.clock.now
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: now).id
        let blog = try app.database.apps.create(name: "Blog", platforms: [.ios], actor: .commandLine, now: now).id
        let reader = try app.database.apiKeys.create(appID: shop, name: "composer", scopes: [.campaignsRead], actor: .commandLine, now: now).secret
        let sdk = try app.database.apiKeys.create(appID: shop, name: "sdk", scopes: [.eventsWrite], actor: .commandLine, now: now).secret
        for index in 0..<3 {
            _ = try app.database.installations.upsert(
                appID: shop, installationID: "iid-\(index)", registration: .sample(token: index == 0 ? nil : "tok-\(index)"), now: now)
        }
        _ = try app.database.installations.upsert(appID: blog, installationID: "iid-0", registration: .sample(token: "tok-blog"), now: now)
        func post(_ json: String, key: String = reader, contentType: String = "application/json") -> Response {
            app.respond(Request(
                method: "POST", target: "/api/v1/audience", headers: HTTPHeaders([("Authorization", "Bearer \(key)"), ("Content-Type", contentType)]),
                body: Array(json.utf8)))
        }
        func object(_ response: Response) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response.status)")
        }

        let persian = post(#"{"app": \#(shop), "targeting": {"languages": ["fa"], "countries": ["IR"]}}"#)
        #expect(persian.status == 200)
        let answer = try object(persian)
        #expect(answer["installations"] as? Int == 3 && answer["withPushToken"] as? Int == 2)
        #expect(answer["estimated"] as? Bool == false && (answer["notApplied"] as? [String]) == [])
        #expect(try object(post(#"{"app": \#(shop), "targeting": {"languages": ["de"]}}"#))["installations"] as? Int == 0)

        let refusals: [(String, String, Int, String)] = [
            (#"{"app": \#(blog), "targeting": {}}"#, reader, 422, "app"),
            (#"{"app": \#(shop), "targeting": {"percentage": 0}}"#, reader, 422, "targeting.percentage"),
            (#"{"app": \#(shop), "targeting": {"appVersion": {"op": "regex", "value": "("}}}"#, reader, 422, "targeting.appVersion.value"),
            (#"{"app": \#(shop), "targeting": {"languages": ["x"]}}"#, reader, 422, "targeting.languages.0"),
            (#"{"app": \#(shop), "targetting": {}}"#, reader, 422, "is not a field of an audience request; did you mean `targeting`?"),
            (#"{"app": \#(shop), "targeting": {"language": []}}"#, reader, 422, "`targeting.language` is not a field of Campaign JSON"),
            (#"{"app": \#(shop)}"#, reader, 400, "targeting"),
            (#"{"app": \#(shop), "targeting": {}}"#, sdk, 403, "campaigns:read"),
        ]
        for (json, key, status, field) in refusals {
            let refused = post(json, key: key)
            #expect(refused.status == status, "\(json): \(String(decoding: refused.body, as: UTF8.self))")
            #expect(String(decoding: refused.body, as: UTF8.self).contains(field), "\(json)")
        }
        #expect(post("{}", contentType: "text/plain").status == 415)
    }
}
