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
        guard context.request.mediaType == "application/json" else {
            throw HTTPError(415, "Send the targeting as JSON with `Content-Type: application/json`.")
        }
        let body = try JSONBody.decode(Body.self, from: context.request.body)
        if body.app != key.appID {
            throw HTTPError(422, "This key belongs to app \(key.appID); `app` must be \(key.appID).",
                            fields: [FieldProblem("app", "Use \(key.appID), the app of this key.")])
        }
        let problems = body.targeting.problems()
        guard problems.isEmpty else { throw HTTPError.invalid(problems) }
        let estimate = try services.audience.estimate(body.targeting, appID: key.appID, now: context.now)
        return .json(Array(try CampaignJSON.encoder().encode(estimate)))
    }
}
