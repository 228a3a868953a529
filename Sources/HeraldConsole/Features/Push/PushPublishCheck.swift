import Foundation
import HeraldDomain
import HeraldStorage

/// What a push campaign's app lacks to reach its devices, found before publishing: no credentials at all, no
/// device with a token, or devices registered with a provider the app has no credentials for. The console
/// lists these and asks before it publishes; the API publishes and says them in its answer.
enum PushPublishWarning: Equatable, Sendable {
    /// Neither an APNs key nor an FCM service account: nothing can be sent.
    case noCredentials
    /// No installation of the app holds a push token: there is nobody to send to.
    case noDevices
    /// `devices` installations registered with `provider`, whose credentials the app lacks.
    case providerNotSetUp(PushProvider, devices: Int)

    /// The warnings for publishing push campaign `campaign` now, its app set up as `setup` says.
    static func warnings(for campaign: Campaign, database: any HeraldDatabase, setup: PushSetup) throws -> [PushPublishWarning] {
        let withToken = try database.installations.counts(appID: campaign.app).withToken
        var warnings: [PushPublishWarning] = []
        if !setup.hasAPNs && !setup.hasFCM && withToken.values.allSatisfy({ $0 == 0 }) { warnings.append(.noCredentials) }
        if withToken.values.allSatisfy({ $0 == 0 }) { warnings.append(.noDevices) }
        for provider in PushProvider.allCases where !(provider == .apns ? setup.hasAPNs : setup.hasFCM) {
            let devices = withToken[provider] ?? 0
            if devices > 0 { warnings.append(.providerNotSetUp(provider, devices: devices)) }
        }
        return warnings
    }

    /// Its name in the API's answer.
    var code: String {
        switch self {
        case .noCredentials: "no_credentials"
        case .noDevices: "no_devices"
        case .providerNotSetUp(let provider, _): "\(provider.rawValue)_not_set_up"
        }
    }

    /// What it means, for the API (English, as its other texts).
    var message: String {
        switch self {
        case .noCredentials:
            "The app has no APNs key and no FCM service account: no notification can be sent until one is set (the app's page, or herald app push)."
        case .noDevices:
            "No installation of the app holds a push token: nobody gets this notification."
        case .providerNotSetUp(let provider, let devices):
            "Installations registered with \(provider.title): \(devices). The app has no credentials for \(provider.title): they do not get this notification."
        }
    }

    /// What it means, in the reader's language, naming the app.
    func localized(_ l: Localizer, app: String) -> String {
        switch self {
        case .noCredentials: l("campaigns.publish_check.no_credentials", ["app": Localizer.isolated(app)])
        case .noDevices: l("campaigns.publish_check.no_devices", ["app": Localizer.isolated(app)])
        case .providerNotSetUp(let provider, let devices):
            l("campaigns.publish_check.\(provider.rawValue)_not_set_up", ["app": Localizer.isolated(app), "count": l.number(devices)])
        }
    }
}
