import Foundation
import HeraldDomain

/// What became of sending the installation's registration.
public enum InstallationSync: Sendable, Equatable {
    /// Herald stored it.
    case registered
    /// Nothing to send: no push token yet, nothing changed since Herald last answered, data collection is
    /// off, a send is under way, or the backoff after a failure has not passed.
    case idle
    /// Kept for a retry after the backoff.
    case failed(String)
    /// Herald refused it as a whole (a 4xx other than 401, 403, 408 and 429): it is not sent again until the
    /// token or the device changes.
    case refused(Int)
    /// The server refused the key (401) or its scope (403): nothing more until `resume(apiKey:)`.
    case stopped(Int)
}

/// The push token and the installation's registration with Herald, `PUT /api/v1/installations/{id}`
/// (`docs/delivery-semantics.md` §4): what the device is (platform, app version, language, country, time
/// zone, notification permission) and where pushes reach it.
extension DeliveryClient {
    /// Registers the device token APNs gave the app (`application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`),
    /// sent as its bytes in hex; for `.fcm`, bytes holding the token's text. Sends the registration now.
    @discardableResult
    public func registerPushToken(_ token: Data, provider: PushProvider = .apns) async -> InstallationSync {
        let text = provider == .apns ? token.map { String(format: "%02x", $0) }.joined() : String(decoding: token, as: UTF8.self)
        return await registerPushToken(text, provider: provider)
    }

    /// Registers a push token as text (an FCM registration token, or an APNs token already in hex) and
    /// sends the registration now. A new token replaces the last; the same token changes nothing.
    @discardableResult
    public func registerPushToken(_ token: String, provider: PushProvider) async -> InstallationSync {
        let pushToken = DeviceStore.PushToken(provider: provider, token: token)
        if state.pushToken != pushToken {
            state.pushToken = pushToken
            saveState()
            // A new token is news the backoff of an older one should not hold back.
            registrationBackoff.reset()
            nextRegistrationAttempt = .distantPast
        }
        return await registerInstallationIfDue()
    }

    /// The registration as the client would send it now; nil until the app registers a push token. Each
    /// detail of the device Herald would refuse (a language that is not a BCP 47 tag, an unknown time zone…)
    /// is left out rather than have the whole registration refused.
    public var installationRegistration: InstallationRegistration? {
        guard let push = state.pushToken else { return nil }
        var registration = InstallationRegistration(
            platform: device.platform, pushProvider: push.provider, pushToken: push.token, appVersion: device.appVersion,
            language: device.language.replacingOccurrences(of: "_", with: "-"), country: device.country, timeZone: device.timeZone,
            notificationsAllowed: device.notificationsAllowed)
        for problem in registration.problems {
            switch problem.path {
            case "appVersion": registration.appVersion = nil
            case "language": registration.language = nil
            case "country": registration.country = nil
            case "timeZone": registration.timeZone = nil
            default: break
            }
        }
        return registration.normalized
    }

    /// How long a registration Herald answered stands before it is sent again unchanged: Herald deletes
    /// installations that have not registered for its retention period (400 days by default), and a
    /// weekly registration keeps an app in use well inside any period an operator would choose.
    public static let registrationRefreshInterval: TimeInterval = 7 * 86_400

    /// Sends the registration when it differs from the one Herald last answered (a new token, or the device
    /// changed: `updateDevice(_:)`) or that answer is `registrationRefreshInterval` old, data collection is
    /// on, and any backoff has passed. Failures back off as feed fetches do; a 401 or 403 stops the client.
    @discardableResult
    public func registerInstallationIfDue() async -> InstallationSync {
        if let stoppedStatus { return .stopped(stoppedStatus) }
        guard automaticDataCollectionEnabled, let registration = installationRegistration,
              registration != state.settledRegistration || registrationRefreshDue,
              !registering, configuration.clock() >= nextRegistrationAttempt else { return .idle }
        registering = true
        defer { registering = false }
        let body: Data
        do {
            body = try CampaignJSON.encoder().encode(registration)
        } catch {
            return registrationFailed("the registration did not encode: \(error)", retryAfter: nil)
        }
        guard let url = installationURL else { return registrationFailed("the installation id does not fit in an address", retryAfter: nil) }
        let request = TransportRequest(
            method: "PUT", url: url, headers: ["Authorization": "Bearer \(apiKey)", "Content-Type": "application/json"], body: body)
        let response: TransportResponse
        do {
            response = try await configuration.transport.send(request)
        } catch {
            return registrationFailed("\(error)", retryAfter: nil)
        }
        switch response.status {
        case 200..<300:
            settle(registration)
            return .registered
        case 401, 403:
            stop(status: response.status)
            return .stopped(response.status)
        case 408, 429, 500...:
            return registrationFailed("the server answered \(response.status)", retryAfter: RetryAfter.delay(response.header("Retry-After"), now: configuration.clock()))
        case 400..<500:
            // Refused as a whole: sending the same again would be refused again.
            settle(registration)
            return .refused(response.status)
        default:
            return registrationFailed("the server answered \(response.status)", retryAfter: nil)
        }
    }

    /// `…/api/v1/installations/{id}`, the id percent-encoded as one path segment (all but RFC 3986's unreserved characters).
    private var installationURL: URL? {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        guard let segment = state.installationID.addingPercentEncoding(withAllowedCharacters: unreserved) else { return nil }
        return URL(string: configuration.serverURL.appendingPathComponent("api/v1/installations").absoluteString + "/" + segment)
    }

    /// Whether the last answer is `registrationRefreshInterval` old, or of unknown age; a device clock
    /// set back by more than the interval counts too, so a wrong clock once cannot hold the refresh off for good.
    private var registrationRefreshDue: Bool {
        guard let settledAt = state.settledAt else { return true }
        return abs(configuration.clock().timeIntervalSince(settledAt)) >= Self.registrationRefreshInterval
    }

    private func settle(_ registration: InstallationRegistration) {
        state.settledRegistration = registration
        state.settledAt = configuration.clock()
        saveState()
        registrationBackoff.reset()
        nextRegistrationAttempt = .distantPast
    }

    private func registrationFailed(_ reason: String, retryAfter: TimeInterval?) -> InstallationSync {
        let delay = registrationBackoff.delayAfterFailure(random: configuration.random(), retryAfter: retryAfter)
        nextRegistrationAttempt = configuration.clock().addingTimeInterval(delay)
        return .failed(reason)
    }
}
