import HeraldDomain
import HeraldHTTP

/// `/campaigns`: the home page after sign-in.
struct CampaignPages: Sendable {
    let services: Services

    struct CampaignList: Sendable {
        let hasApps: Bool
        let canRegisterApps: Bool
    }

    func index(_ context: RequestContext) throws -> Response {
        let model = CampaignList(
            hasApps: try !services.database.apps.all().isEmpty,
            canRegisterApps: context.user?.role.includes(.admin) ?? false)
        return try services.page(.campaigns, title: "Campaigns", model: model, context: context)
    }
}
