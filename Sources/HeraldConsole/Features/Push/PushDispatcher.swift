import AsyncHTTPClient
import Foundation
import HeraldDomain
import HeraldPush
import HeraldStorage
import Logging
import Synchronization

/// How the dispatcher sends: how many notifications are in flight at once, how fast each app's
/// connection to a provider may go, and how often a send is tried.
public struct PushSettings: Sendable {
    /// Notifications handed to providers and not yet answered, across all apps.
    public var concurrency = 64
    /// Notifications a second per app and provider; nil for no limit. FCM allows 600,000 a minute per
    /// project; APNs publishes no figure but throttles a connection that floods it.
    public var ratePerSecond: Int? = 2_000
    /// Tries of one notification before it counts as failed.
    public var maxAttempts = 5
    /// Extra trust roots (PEM) for provider connections: the test mock's certificate.
    public var trustRootsFile: String?
    /// How long a notification may wait at APNs for an offline device.
    public var expiration: TimeInterval = 86_400

    public init() {}
}

/// Drains the push outbox: plans each published push campaign's rows over the app's registered
/// installations, claims due rows (committed as `sending` before any leaves), hands them to APNs or
/// FCM with a bounded number in flight and a rate per app and provider, and records what came back.
public final class PushDispatcher: Sendable {
    let database: any HeraldDatabase
    let credentials: any PushCredentialStore
    let settings: PushSettings
    let logger: Logger
    /// The connections to the providers exist only between `start()` and `shutdown()`: a client that is
    /// never shut down is a leak (and async-http-client's debug builds stop on it).
    private let running = Mutex<(httpClient: HTTPClient, senders: PushSenderCache)?>(nil)
    /// Whether rows a previous process left `sending` have been settled; nothing is claimed before.
    private let settled = Atomic<Bool>(true)
    /// Given by `wake()`; the loop sleeps on it when there is nothing to send.
    private let wakeUp = WakeUp()
    private let loop = Mutex<Task<Void, Never>?>(nil)
    /// Campaigns being sent, read once a few seconds rather than once per notification.
    private let campaigns = Mutex<[Int64: (campaign: Campaign, read: ContinuousClock.Instant)]>([:])

    public init(database: any HeraldDatabase, credentials: any PushCredentialStore, settings: PushSettings, logger: Logger) {
        self.database = database
        self.credentials = credentials
        self.settings = settings
        self.logger = logger
    }

    /// Settles what a previous process left mid-send, then drains in the background until `shutdown()`.
    public func start() throws {
        let httpClient = try PushHTTPClient.make(extraTrustRootsPEMFile: settings.trustRootsFile)
        let senders = PushSenderCache(credentials: credentials, httpClient: httpClient, ratePerSecond: settings.ratePerSecond)
        running.withLock { $0 = (httpClient, senders) }
        // On a database that takes no writes (read-only, a full disk) the server still serves; the loop
        // below keeps trying, and settles these rows as soon as it can claim anything at all.
        do {
            let interrupted = try database.pushOutbox.settleInterrupted()
            if interrupted > 0 {
                logger.warning("\(interrupted) notifications were with a provider when Herald stopped: their outcome is unknown, and they are not sent again")
            }
        } catch {
            logger.error("push outbox: cannot settle what a previous process left mid-send (\(error)); nothing is sent until it can")
            settled.store(false, ordering: .releasing)
        }
        loop.withLock { $0 = Task { await self.run(senders: senders) } }
    }

    /// Asks the loop to look for new work now (a campaign was published) instead of at its next tick.
    public func wake() {
        wakeUp.signal()
    }

    /// Stops claiming, waits for notifications in flight and records them, then closes connections.
    public func shutdown() async {
        let task = loop.withLock { task in defer { task = nil }; return task }
        task?.cancel()
        await task?.value
        let stopped = running.withLock { state in defer { state = nil }; return state }
        try? await stopped?.httpClient.shutdown()
    }

    // MARK: The loop

    private func run(senders: PushSenderCache) async {
        await withTaskGroup(of: (OutboxEntry, OutboxOutcome).self) { group in
            var inFlight = 0
            var results: [(entry: OutboxEntry, outcome: OutboxOutcome)] = []
            var lastFlush = ContinuousClock.now
            var failures = 0
            while !Task.isCancelled {
                do {
                    if !settled.load(ordering: .acquiring) {
                        _ = try database.pushOutbox.settleInterrupted()
                        settled.store(true, ordering: .releasing)
                    }
                    if inFlight == 0 { try planDueCampaigns(now: Date()) }
                    // Claim in chunks of half the window: a claim is a durable commit, not one per notification.
                    if inFlight <= settings.concurrency / 2 {
                        let claimed = try database.pushOutbox.claim(limit: settings.concurrency - inFlight, now: Date())
                        for entry in claimed {
                            inFlight += 1
                            group.addTask { (entry, await self.deliver(entry, senders: senders)) }
                        }
                    }
                    if inFlight == 0 {
                        try record(&results)
                        await idle()
                        continue
                    }
                    if let result = await group.next() {
                        inFlight -= 1
                        results.append(result)
                    }
                    if results.count >= 256 || ContinuousClock.now - lastFlush > .milliseconds(20) || inFlight == 0 {
                        try record(&results)
                        lastFlush = .now
                    }
                    failures = 0
                } catch {
                    // A database that cannot take writes now (read-only, full): tried again after 1 s, doubling
                    // to a minute, and said once per streak rather than every second.
                    failures += 1
                    if failures == 1 { logger.error("push outbox: \(error); trying again, less often while it lasts") }
                    try? await Task.sleep(for: .seconds(min(60, 1 << min(failures - 1, 6))))
                }
            }
            // Shutting down: what is in flight is answered and recorded, so nothing is left `sending`.
            while let result = await group.next() { results.append(result) }
            do { try record(&results) } catch { logger.error("push outbox: could not record the last results: \(error)") }
        }
    }

    private func record(_ results: inout [(entry: OutboxEntry, outcome: OutboxOutcome)]) throws {
        guard !results.isEmpty else { return }
        try database.pushOutbox.record(results, now: Date())
        results.removeAll(keepingCapacity: true)
    }

    /// Sleeps until the next row falls due, a wake-up, or a second (new installations, a schedule reached).
    private func idle() async {
        var wait: Duration = .seconds(1)
        if let due = try? database.pushOutbox.nextDue() {
            let seconds = due.timeIntervalSinceNow
            if seconds < 1 { wait = .milliseconds(max(10, Int(max(0, seconds) * 1000))) }
        }
        await wakeUp.sleep(upTo: wait)
    }

    // MARK: Planning

    /// A bounded amount of fan-out per turn, so sending goes on while a large campaign is planned.
    private func planDueCampaigns(now: Date) throws {
        var pages = 0
        for stored in try database.pushOutbox.campaignsToPlan(now: now) {
            while pages < 20 {
                pages += 1
                if try planPage(stored, now: now) { break }
            }
        }
    }

    /// Plans one page of installations for `stored`; returns whether the campaign is fully planned.
    private func planPage(_ stored: StoredCampaign, now: Date) throws -> Bool {
        let campaign = stored.campaign
        let after = try database.pushOutbox.plannedThrough(campaignID: stored.id)
        let page = try database.installations.withTokens(appID: campaign.app, after: after, pageSize: InstallationPage.planningSize)
        let testDevices = campaign.testOnDevice ? Set(try database.apps.testDevices(appID: campaign.app).map(\.installationID)) : []
        let entries = page.installations.compactMap { installation -> (installation: Installation, due: Date?)? in
            guard PushAudience.admits(installation, campaign: campaign, campaignID: stored.id, testDevices: testDevices) else { return nil }
            return (installation, PushAudience.due(campaign, timeZone: installation.timeZone, publishedAt: stored.startedAt ?? now, now: now))
        }
        let complete = page.next == nil
        try database.pushOutbox.plan(
            campaignID: stored.id, appID: campaign.app, entries: entries, through: page.installations.last?.rowID, complete: complete, now: now)
        return complete
    }

    // MARK: Sending one

    private func deliver(_ entry: OutboxEntry, senders: PushSenderCache) async -> OutboxOutcome {
        let request: PushRequest
        switch payload(for: entry) {
        case .success(let built): request = built
        case .failure(let problem): return .failed(reason: problem.reason)
        }
        guard let sender = await senders.sender(appID: entry.appID, provider: entry.provider) else {
            return .failed(reason: "not_configured")
        }
        await sender.limiter.admit()
        let result = await sender.sender.send(request)
        let now = Date()
        switch result {
        case .sent: return .sent(at: now)
        case .unregistered(let reason): return .unregistered(reason: reason)
        case .rejected(let reason): return .failed(reason: reason)
        case .retry(let after, let reason):
            if let after { await sender.limiter.pause(for: after) }
            guard entry.attempts < settings.maxAttempts else { return .failed(reason: reason) }
            let wait = max(after.map { Double($0.components.seconds) } ?? 0, RetryBackoff.seconds(afterFailure: entry.attempts, random: .random(in: 0..<1)))
            return .retry(at: now.addingTimeInterval(wait), reason: reason)
        }
    }

    /// The request for `entry`: its campaign's version for the device's language (a test's: the document as
    /// it was sent), or a feed refresh.
    private func payload(for entry: OutboxEntry) -> Result<PushRequest, PayloadProblem> {
        // A row's platform is one a registration checked; were it not, the device is sent what Android gets.
        let platform = Platform(rawValue: entry.platform) ?? .android
        let found: (id: Int64, campaign: Campaign)?
        if let testSendID = entry.testSendID {
            found = (try? database.testSends.find(id: testSendID)).flatMap { $0 }.map { ($0.campaignID, $0.campaign) }
        } else if let campaignID = entry.campaignID {
            found = campaign(campaignID).map { (campaignID, $0) }
        } else {
            let body = PushPayload.feedRefresh(provider: entry.provider, token: entry.token, platform: platform)
            return .success(PushRequest(deviceToken: entry.token, body: Data(body), apnsPushType: "background", apnsPriority: 5,
                                        expiration: Date().addingTimeInterval(settings.expiration), collapseID: PushPayload.refreshCollapseID))
        }
        guard let (campaignID, campaign) = found, let push = campaign.push else {
            return .failure(PayloadProblem(reason: "campaign_missing"))
        }
        let version = push.version(for: entry.language ?? "").notification
        let body: [UInt8]
        let size: Int
        switch entry.provider {
        case .apns:
            body = PushPayload.apns(version, campaignID: campaignID, data: campaign.data)
            size = body.count
        case .fcm:
            body = PushPayload.fcm(version, campaignID: campaignID, data: campaign.data, token: entry.token, platform: platform)
            size = PushPayload.fcmSize(version, campaignID: campaignID, data: campaign.data, platform: platform)
        }
        // Validation refuses such a campaign; this holds even for one stored before the rule.
        guard size <= entry.provider.payloadLimit else { return .failure(PayloadProblem(reason: "PayloadTooLarge")) }
        return .success(PushRequest(
            deviceToken: entry.token, body: Data(body), apnsPushType: version.silent ? "background" : "alert",
            apnsPriority: version.silent ? 5 : 10, expiration: Date().addingTimeInterval(settings.expiration),
            collapseID: entry.testSendID.map { "herald-test-\($0)" } ?? "herald-\(campaignID)"))
    }

    /// The campaign, read again when its copy is over two seconds old (an edit reaches later sends).
    private func campaign(_ id: Int64) -> Campaign? {
        let now = ContinuousClock.now
        if let cached = campaigns.withLock({ $0[id] }), now - cached.read < .seconds(2) { return cached.campaign }
        guard let stored = try? database.campaigns.find(id: id) else { return nil }
        campaigns.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }
            cache[id] = (stored.campaign, now)
        }
        return stored.campaign
    }

    struct PayloadProblem: Error {
        let reason: String
    }
}
