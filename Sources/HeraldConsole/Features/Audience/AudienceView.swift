import Foundation
import HeraldDomain
import HeraldHTTP

/// The composer's audience line under its targeting: "About 12,400 registered installations match this
/// targeting. 9,800 of them can receive pushes." Rendered with the page, and asked for again by its
/// script as targeting changes (`POST /campaigns/audience`), so the count is never reckoned in the browser.
enum AudienceView {
    /// The line for the campaign a composer form describes, in `appID` (the form's app, or the one its
    /// menu shows first); nil without an app, or while its targeting breaks a rule (the form shows that
    /// beside the field).
    static func text(for form: FormData, appID: Int64?, estimator: AudienceEstimator, localizer: Localizer, now: Date) throws -> String? {
        guard let appID else { return nil }
        let (campaign, problems) = CampaignForm.decode(form, app: appID)
        guard !problems.contains(where: { $0.path.hasPrefix("targeting.") }) else { return nil }
        return try text(for: campaign, estimator: estimator, localizer: localizer, now: now)
    }

    /// The line for a campaign (its app's installations), as a push draft's page repeats it beside Publish;
    /// nil while its targeting breaks a rule.
    static func text(for campaign: Campaign, estimator: AudienceEstimator, localizer: Localizer, now: Date) throws -> String? {
        guard campaign.targeting.problems().isEmpty else { return nil }
        let estimate = try estimator.estimate(campaign.targeting, appID: campaign.app, now: now)
        return text(estimate, push: campaign.channel == .push, localizer: localizer)
    }

    static func text(_ estimate: AudienceEstimate, push: Bool, localizer: Localizer) -> String {
        let number = ["count": localizer.number(estimate.installations)]
        var sentences = [localizer.plural(estimate.estimated ? "composer.audience.about" : "composer.audience.exact", count: estimate.installations, number)]
        if push {
            sentences.append(localizer.plural("composer.audience.push", count: estimate.withPushToken, ["count": localizer.number(estimate.withPushToken)]))
        }
        if !estimate.notApplied.isEmpty { sentences.append(localizer("composer.audience.device_rules")) }
        return sentences.joined(separator: " ")
    }
}
