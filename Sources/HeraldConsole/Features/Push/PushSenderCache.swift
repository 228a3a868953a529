import AsyncHTTPClient
import Foundation
import HeraldDomain
import HeraldPush
import HeraldStorage

/// Each app's provider senders, made from its stored credentials and made again when they change,
/// each with its own rate limiter.
actor PushSenderCache {
    struct Entry {
        let sender: any PushSender
        let limiter: RateLimiter
    }

    private let credentials: any PushCredentialStore
    private let httpClient: HTTPClient
    private let ratePerSecond: Int?
    private var entries: [Int64: (checked: ContinuousClock.Instant, updatedAt: Date?, apns: Entry?, fcm: Entry?)] = [:]

    init(credentials: any PushCredentialStore, httpClient: HTTPClient, ratePerSecond: Int?) {
        self.credentials = credentials
        self.httpClient = httpClient
        self.ratePerSecond = ratePerSecond
    }

    /// The app's sender for `provider`, or nil when the app has not set that provider up (or its
    /// stored credentials no longer make a valid configuration).
    func sender(appID: Int64, provider: PushProvider) -> Entry? {
        let now = ContinuousClock.now
        if let cached = entries[appID], now - cached.checked < .seconds(1) { return pick(cached, provider) }
        let updatedAt = try? credentials.setup(appID: appID).updatedAt
        if let cached = entries[appID], cached.updatedAt == updatedAt {
            entries[appID]?.checked = now
            return pick(cached, provider)
        }
        let made = make(appID: appID)
        if entries.count >= 1_000 { entries.removeAll() }
        entries[appID] = (now, updatedAt, made.apns, made.fcm)
        return provider == .apns ? made.apns : made.fcm
    }

    private func pick(_ cached: (checked: ContinuousClock.Instant, updatedAt: Date?, apns: Entry?, fcm: Entry?), _ provider: PushProvider) -> Entry? {
        provider == .apns ? cached.apns : cached.fcm
    }

    private func make(appID: Int64) -> (apns: Entry?, fcm: Entry?) {
        guard let stored = try? credentials.credentials(appID: appID) else { return (nil, nil) }
        var apns: Entry?
        if let given = stored.apns, let configuration = try? APNsConfiguration(
            keyPEM: given.keyPEM, keyID: given.keyID, teamID: given.teamID, topic: given.topic,
            baseURL: given.url.flatMap(URL.init(string:)) ?? APNsConfiguration.productionURL) {
            apns = Entry(sender: APNsClient(configuration: configuration, httpClient: httpClient), limiter: RateLimiter(perSecond: ratePerSecond))
        }
        var fcm: Entry?
        if let given = stored.fcm, let account = try? FCMServiceAccount(json: given.serviceAccountJSON),
           let configuration = try? FCMConfiguration(serviceAccount: account, baseURL: given.url.flatMap(URL.init(string:)) ?? FCMConfiguration.productionURL) {
            fcm = Entry(sender: FCMClient(configuration: configuration, httpClient: httpClient), limiter: RateLimiter(perSecond: ratePerSecond))
        }
        return (apns, fcm)
    }
}

/// A token bucket: at most `perSecond` admissions a second on average, bursts up to a tenth of a
/// second's worth; `pause` holds everyone back after a provider's `Retry-After`.
actor RateLimiter {
    private let perSecond: Double?
    private var tokens: Double
    private var last = ContinuousClock.now
    private var pausedUntil: ContinuousClock.Instant?

    init(perSecond: Int?) {
        self.perSecond = perSecond.map { Double(max(1, $0)) }
        tokens = 0
    }

    func admit() async {
        while true {
            let now = ContinuousClock.now
            if let until = pausedUntil, until > now {
                try? await Task.sleep(until: until, clock: .continuous)
                continue
            }
            guard let perSecond else { return }
            let elapsed = now - last
            last = now
            let burst = max(1, perSecond / 10)
            tokens = min(burst, tokens + perSecond * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            if tokens >= 1 {
                tokens -= 1
                return
            }
            try? await Task.sleep(for: .seconds((1 - tokens) / perSecond))
        }
    }

    /// No admission before `duration` has passed (at most a day: the sender bounds `Retry-After`).
    func pause(for duration: Duration) {
        let until = ContinuousClock.now + min(duration, .seconds(86_400))
        if pausedUntil.map({ until > $0 }) ?? true { pausedUntil = until }
    }
}
