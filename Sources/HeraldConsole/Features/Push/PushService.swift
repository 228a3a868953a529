import Foundation
import HeraldDomain
import HeraldStorage
import Logging

/// What the console's features use of push: the credentials editor, the dispatcher, and what a
/// campaign change means for sending.
struct PushService: Sendable {
    let editor: PushSetupEditor
    let dispatcher: PushDispatcher
    let database: any HeraldDatabase
    let logger: Logger

    /// What stops a push campaign from reaching its app's devices if it is published now (nothing for an in-app one).
    func publishWarnings(_ campaign: Campaign) throws -> [PushPublishWarning] {
        guard campaign.channel == .push else { return [] }
        return try PushPublishWarning.warnings(for: campaign, database: database, setup: try editor.setup(appID: campaign.app))
    }

    /// A push campaign published or resumed starts (or continues) sending at once; an in-app campaign
    /// that starts or stops showing asks the app's devices to fetch the feed, when the app wants that: at
    /// once, or at the end of the quiet period after the app's latest refresh (`refreshMinutes`), which
    /// then carries every change made in it.
    func campaignChanged(_ stored: StoredCampaign, to state: CampaignState) {
        switch stored.campaign.channel {
        case .push:
            if state == .published { dispatcher.wake() }
        case .inApp:
            guard state != stored.state, [.published, .paused, .stopped].contains(state) else { return }
            do {
                let settings = try database.apps.pushSettings(appID: stored.campaign.app)
                guard settings.refreshOnChange else { return }
                let queued = try database.pushOutbox.queueRefresh(
                    appID: stored.campaign.app, now: Date(), spacing: TimeInterval(settings.refreshMinutes) * 60)
                logger.info("asked \(queued) devices of app \(stored.campaign.app) to fetch the feed after campaign \(stored.id) became \(state.rawValue)")
                dispatcher.wake()
            } catch {
                logger.error("could not queue the feed refresh for app \(stored.campaign.app): \(error)")
            }
        }
    }
}
