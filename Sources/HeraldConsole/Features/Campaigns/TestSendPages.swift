import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// The campaign page's "Send a test" panel: the app's test devices to choose from, and the newest tests
/// with where each stands on each device (which the console's script follows while a push is on its way).
struct TestSendPanel: Sendable {
    struct DeviceRow: Sendable {
        let name: String
        let installationID: String
        /// The status's code (`sent`, `failed`, …), for styling and tests.
        let status: String
        let statusText: String
    }

    struct SentTest: Sendable {
        /// HTML: when, by whom, which revision.
        let heading: String
        /// Where an in-app test is: in the feeds until a time, or gone from them.
        let note: String?
        let caption: String
        let rows: [DeviceRow]
    }

    let campaignID: Int64
    /// An editor, and a campaign that is not archived.
    let canSend: Bool
    let hint: String
    let devices: [ChoiceView]
    /// Said instead of the form when the app has no test devices.
    let noDevices: String?
    /// Admins may add test devices: the app's page.
    let devicesHref: String?
    let error: String?
    let sent: [SentTest]
    /// A push test still on its way: the script reloads the list until every device has its answer.
    let pending: Bool

    static let shown = 5
    /// The form's name for the chosen installation ids.
    static let devicesField = "devices"

    init(
        stored: StoredCampaign, testDevices: [TestDevice], sends: [TestSend], canSend: Bool, canAddDevices: Bool, chosen: Set<String>,
        error: String?, now: Date, localizer l: Localizer
    ) {
        campaignID = stored.id
        self.canSend = canSend && stored.state != .archived
        hint = l(stored.campaign.channel == .push ? "campaigns.test_send.hint_push" : "campaigns.test_send.hint_in_app")
        devices = testDevices.map {
            ChoiceView(name: Self.devicesField, value: $0.installationID, label: $0.name, hint: $0.installationID, checked: chosen.contains($0.installationID))
        }
        noDevices = testDevices.isEmpty ? l(canAddDevices ? "campaigns.test_send.no_devices_admin" : "campaigns.test_send.no_devices") : nil
        devicesHref = testDevices.isEmpty && canAddDevices ? "/apps/\(stored.campaign.app)#test-devices" : nil
        self.error = error
        var pending = false
        sent = sends.map { send in
            let rows = send.devices.map { device -> DeviceRow in
                let status = send.status(of: device, at: now)
                if !status.isSettled { pending = true }
                return DeviceRow(name: device.name, installationID: device.installationID, status: status.code, statusText: Self.words(status, l))
            }
            let note: String? = switch send.channel {
            case .inApp: send.isLive(at: now)
                ? l("campaigns.test_send.live_until", ["time": l.dateTime(send.expiresAt)])
                : l("campaigns.test_send.ended", ["time": l.dateTime(send.expiresAt)])
            case .push: nil
            }
            return SentTest(
                heading: l.markup("campaigns.test_send.sent_by", [
                    "time": l.timeMarkup(send.sentAt), "name": l.actorMarkup(send.sentBy), "revision": Markup.escape(l.number(send.revision)),
                ]),
                note: note, caption: l("campaigns.test_send.caption", ["time": l.dateTime(send.sentAt)]), rows: rows)
        }
        self.pending = pending
    }

    /// Where a test stands on a device, in the reader's words.
    static func words(_ status: TestSend.Status, _ l: Localizer) -> String {
        switch status {
        case .inFeed(let until): l("campaigns.test_send.status.in_feed", ["time": l.dateTime(until)])
        case .expired: l("campaigns.test_send.status.expired")
        case .noToken: l("campaigns.test_send.status.no_token")
        case .pending: l("campaigns.test_send.status.pending")
        case .sent(let at): at.map { l("campaigns.test_send.status.sent_at", ["time": l.dateTime($0)]) } ?? l("campaigns.test_send.status.sent")
        case .failed(let reason): reason.map { l("campaigns.test_send.status.failed", ["reason": Localizer.isolated($0)]) }
            ?? l("campaigns.test_send.status.failed_no_reason")
        case .unregistered(let reason): l("campaigns.test_send.status.unregistered", ["reason": Localizer.isolated(reason ?? "Unregistered")])
        case .unknown: l("campaigns.test_send.status.unknown")
        case .other(let state, _): l("campaigns.test_send.status.other", ["state": Localizer.isolated(state)])
        }
    }
}

/// `POST /campaigns/{id}/test-sends`: an editor sends the campaign as it is now to chosen test devices.
struct TestSendPages: Sendable {
    let services: Services

    func send(_ context: RequestContext) throws -> Response {
        guard let stored = try services.database.campaigns.find(id: try context.id("id")) else { throw HTTPError.notFound }
        let localizer = context.localizer
        let chosen = context.form.values(TestSendPanel.devicesField)
        let sender = CampaignTestSender(database: services.database) { services.push.dispatcher.wake() }
        let problem: String
        do {
            let sent = try sender.send(stored, to: chosen, actor: context.actor, now: context.now)
            try services.flash(context, .success, localizer.plural(
                "campaigns.test_send.flash", count: sent.devices.count, ["name": localizer.quoted(stored.campaign.name)]))
            return .redirect(to: "/campaigns/\(stored.id)#test-sends")
        } catch CampaignTestSender.Failure.archived {
            throw HTTPError(409, localizer("campaigns.test_send.errors.archived"))
        } catch CampaignTestSender.Failure.invalid(let problems) {
            return try CampaignPages(services: services).renderSummary(
                context, stored: stored, problems: problems, errorsTitle: localizer("campaigns.test_send.errors_title"),
                testSend: (Set(chosen), nil), status: 422)
        } catch CampaignTestSender.Failure.noDevices {
            problem = localizer("campaigns.test_send.errors.no_devices")
        } catch CampaignTestSender.Failure.tooManyDevices {
            problem = localizer("campaigns.test_send.errors.too_many", ["count": localizer.number(TestSend.maxDevices)])
        } catch CampaignTestSender.Failure.notTestDevices(let strangers) {
            problem = localizer("campaigns.test_send.errors.not_test_device", ["device": Localizer.isolated(strangers[0].installationID)])
        }
        return try CampaignPages(services: services).renderSummary(
            context, stored: stored, problems: [], testSend: (Set(chosen), problem), status: 422)
    }
}
