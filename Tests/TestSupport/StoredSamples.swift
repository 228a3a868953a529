import HeraldDomain
import HeraldStorage

extension InstallationRegistration {
    /// A registration as the storage tests make them: an iOS phone in Iran, in Persian, unless told otherwise.
    package static func sample(
        _ platform: Platform = .ios, provider: PushProvider? = .apns, token: String?, language: String? = "fa", allowed: Bool = true
    ) -> InstallationRegistration {
        InstallationRegistration(
            platform: platform, pushProvider: token == nil ? nil : provider, pushToken: token, appVersion: "2.1.0", language: language,
            country: "IR", timeZone: "Asia/Tehran", notificationsAllowed: allowed)
    }
}

extension EventCounts {
    /// The same counts with the rows in key order: `counts` promises none, so tests compare them this way.
    package func inKeyOrder() -> EventCounts {
        var sorted = self
        sorted.rows.sort {
            ($0.campaignID, $0.day, $0.platform, $0.test ? 1 : 0, $0.type.rawValue, $0.detail)
                < ($1.campaignID, $1.day, $1.platform, $1.test ? 1 : 0, $1.type.rawValue, $1.detail)
        }
        return sorted
    }
}
