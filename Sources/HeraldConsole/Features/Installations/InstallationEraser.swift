import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `DELETE /api/v1/installations/{installationId}`: erase one installation's raw events and its registration.
struct InstallationEraser: Sendable {
    let services: Services

    private struct Answer: Encodable {
        let installationId: String
        let erasedEvents: Int
        let erasedRegistration: Bool
    }

    func erase(_ context: RequestContext, key: APIKey) throws -> Response {
        let installation = try InstallationRegistrar.addressedID(context)
        let erased = try services.database.events.eraseInstallation(installation, appID: key.appID, actor: context.actor, now: context.now)
        let answer = Answer(installationId: installation, erasedEvents: erased.events, erasedRegistration: erased.registration)
        return .json(Array(try CampaignJSON.encoder().encode(answer)))
    }
}
