import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `POST /api/v1/audience`: how many of the key's app's registered installations a targeting reaches.
struct AudienceAPI: Sendable {
    let services: Services

    /// `{"app": 1, "targeting": {…}}`, the targeting as a campaign has it.
    struct Body: Decodable {
        let app: Int64
        let targeting: Targeting

        enum CodingKeys: String, CodingKey, CaseIterable { case app, targeting }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(knownKeys: CodingKeys.self)
            app = try container.decode(Int64.self, forKey: .app)
            targeting = try container.decode(Targeting.self, forKey: .targeting)
        }
    }

    func estimate(_ context: RequestContext, key: APIKey) throws -> Response {
        try context.request.requireJSON("the targeting", shape: #"{"app": 1, "targeting": {…}}"#)
        let body: Body
        do {
            body = try JSONBody.decode(Body.self, from: context.request.body)
        } catch let unknown as UnknownKeyError where !unknown.path.contains(".") {
            // One inside the targeting is said as for a campaign's: `targeting.x` is not a field of Campaign JSON.
            let hint = unknown.suggestion.map { "did you mean `\($0)`? " } ?? ""
            throw HTTPError(422, "`\(unknown.path)` is not a field of an audience request; \(hint)send {\"app\": 1, \"targeting\": {…}}.", fields: [
                FieldProblem(unknown.path, "An audience request has only `app` and `targeting`" + (unknown.suggestion.map { "; did you mean `\($0)`?" } ?? ".")),
            ])
        }
        try key.requireOwnApp(body.app)
        let problems = body.targeting.problems()
        guard problems.isEmpty else { throw HTTPError.invalid(problems) }
        let estimate = try services.audience.estimate(body.targeting, appID: key.appID, now: context.now)
        return .json(Array(try CampaignJSON.encoder().encode(estimate)))
    }
}
