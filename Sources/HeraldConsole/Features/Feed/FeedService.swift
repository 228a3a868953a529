import Crypto
import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Synchronization

/// Each app's encoded feed and its ETag, kept in memory. A snapshot is rebuilt when this process
/// changed the data (the database's change counter) or a campaign's start or end passes: by the request
/// that finds it out of date, so a client that publishes and then polls sees its change, while requests
/// that arrive during that rebuild get the previous bytes instead of rebuilding too (one rebuild per app
/// at a time: with a thousand campaigns one takes half a second). Changes another process made (an
/// import from the command line) are noticed by a check, at most every `recheckAfter`, of the database's
/// feed generation (a row that triggers move with every change to campaigns, apps and test devices, by
/// any process): in the background, while the old bytes are served, and a rebuild only when it moved.
/// A rebuild that finds the same content keeps the old bytes and ETag.
final class FeedService: Sendable {
    /// One feed's bytes in one content coding, with that coding's ETag (a strong tag names one byte
    /// sequence, so the gzipped bytes have a tag of their own).
    struct Representation: Sendable {
        let body: SharedBody
        let etag: EntityTag
    }

    struct Snapshot: Sendable {
        let identity: Representation
        /// The same bytes gzipped once, when the feed changed; nil when gzip does not make them smaller.
        let gzip: Representation?
        let contentHash: String
        /// With test campaigns, for one app's test devices: kept out of shared caches.
        let personal: Bool

        /// What to send to a request whose `Accept-Encoding` is `acceptEncoding`.
        func representation(acceptEncoding: String?) -> (Representation, gzipped: Bool) {
            if let gzip, AcceptEncoding.accepts("gzip", in: acceptEncoding) { return (gzip, true) }
            return (identity, false)
        }
    }

    /// The variants of one app's feed, and how long they hold.
    struct AppFeeds: Sendable {
        let everyone: Snapshot
        /// Adds the test campaigns; served only to the app's test devices.
        let testDevices: Snapshot
        let testInstallations: Set<String>
        /// The test devices' feed with the tests sent to one device, for each test device that has one live:
        /// at most `TestDevice.maxPerApp`.
        let sentTests: [String: Snapshot]
        /// This process's change counter when it was built.
        let generation: Int
        /// The database's feed generation it was built from (changes by any process).
        let storedGeneration: Int64
        let builtAt: Date
        /// When the stored generation was last found unchanged (or the feed built).
        var checkedAt: Date
        let validUntil: Date
    }

    static let pollAfterSeconds = 60
    /// How long a shared cache (a CDN, nginx in front) may answer with an app's feed before it asks again:
    /// how late a change may reach devices polling through one. Devices themselves always revalidate.
    static let sharedCacheSeconds = 10
    /// Test devices poll often: they should see a change at once.
    static let testPollAfterSeconds = 10
    /// How often a served feed's stored generation is checked for another process's changes.
    static let recheckAfter: TimeInterval = 1

    private let database: any HeraldDatabase
    private let feeds = ReadMostly<[Int64: AppFeeds]>([:])
    /// The feeds being rebuilt now: by a request (`background` false), or by the check after
    /// `recheckAfter`, which never makes a request that needs a rebuild (a change, a boundary) wait or go without.
    private struct Rebuild: Hashable {
        let appID: Int64
        let background: Bool
    }
    private let rebuilding = ReadMostly<Set<Rebuild>>([])
    /// Rebuilds started, for the tests of single flight.
    let rebuilds = Atomic<Int>(0)

    init(database: any HeraldDatabase) {
        self.database = database
    }

    /// The snapshot for `appID` as seen by `installationID`; touches the database only to rebuild.
    func snapshot(appID: Int64, installationID: String?, now: Date) throws -> Snapshot {
        let generation = database.changes.current
        let cached = feeds.read { $0[appID] }
        let current: AppFeeds
        if let cached, cached.generation == generation, now < cached.validUntil {
            if now.timeIntervalSince(cached.checkedAt) >= Self.recheckAfter { recheckInBackground(cached, appID: appID, now: now) }
            current = cached
        } else if let cached, !claim(Rebuild(appID: appID, background: false)) {
            current = cached
        } else {
            // Without a previous feed every request builds: there is nothing to serve meanwhile.
            let claimed = cached != nil
            defer { if claimed { release(Rebuild(appID: appID, background: false)) } }
            current = try rebuild(appID: appID, generation: generation, now: now)
        }
        guard let installationID, current.testInstallations.contains(installationID) else { return current.everyone }
        return current.sentTests[installationID] ?? current.testDevices
    }

    private func claim(_ rebuild: Rebuild) -> Bool {
        rebuilding.write { $0.insert(rebuild).inserted }
    }

    private func release(_ rebuild: Rebuild) {
        _ = rebuilding.write { $0.remove(rebuild) }
    }

    /// Builds and keeps the feed, unless a newer one was kept meanwhile.
    private func rebuild(appID: Int64, generation: Int, now: Date) throws -> AppFeeds {
        rebuilds.add(1, ordering: .relaxed)
        let built = try build(appID: appID, generation: generation, now: now, previous: feeds.read { $0[appID] })
        return feeds.write { feeds in
            if let kept = feeds[appID], kept.generation > built.generation || kept.builtAt > built.builtAt { return kept }
            feeds[appID] = built
            return built
        }
    }

    /// Looks for changes made by another process without holding up the request that noticed the age:
    /// one row read, and a rebuild only if the stored generation moved since `served` was built.
    private func recheckInBackground(_ served: AppFeeds, appID: Int64, now: Date) {
        let recheck = Rebuild(appID: appID, background: true)
        guard claim(recheck) else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            defer { release(recheck) }
            // A failure leaves the previous feed in place; the next request past recheckAfter tries again.
            guard let stored = try? database.feedGeneration() else { return }
            if stored == served.storedGeneration {
                feeds.write { feeds in
                    guard feeds[appID]?.builtAt == served.builtAt, feeds[appID]?.storedGeneration == stored else { return }
                    feeds[appID]?.checkedAt = now
                }
            } else {
                _ = try? rebuild(appID: appID, generation: served.generation, now: now)
            }
        }
    }

    private func build(appID: Int64, generation: Int, now: Date, previous: AppFeeds?) throws -> AppFeeds {
        // Read first: a change that lands while the rest is read moves it past this value, so the next
        // check rebuilds rather than keeping a feed that misses the change.
        let storedGeneration = try database.feedGeneration()
        guard let app = try database.apps.find(id: appID) else { throw AppDeleted() }
        let devices = try database.apps.testDevices(appID: appID)
        let testInstallations = Set(devices.map(\.installationID))
        let candidates = try database.campaigns.feedCandidates(appID: appID)
        let sent = try database.testSends.live(appID: appID, now: now)

        var live: [StoredCampaign] = []
        var tests: [StoredCampaign] = []
        var boundaries: [Date] = []
        for stored in candidates {
            if stored.campaign.testOnDevice {
                tests.append(stored)
                continue
            }
            let schedule = stored.campaign.schedule
            if let start = schedule.start, start > now { boundaries.append(start); continue }
            if let end = schedule.end {
                guard end > now else { continue }
                boundaries.append(end)
            }
            live.append(stored)
        }
        let feedApp = Feed.App(id: app.id, name: app.name, minIntervalSeconds: app.minIntervalSeconds)
        let everyone = try snapshot(
            app: feedApp, campaigns: Self.ordered(live).map { Self.feedCampaign($0, test: false) }, poll: Self.pollAfterSeconds,
            personal: false, now: now, previous: previous?.everyone)
        let testFeed = Self.ordered(live + tests).map { Self.feedCampaign($0, test: $0.campaign.testOnDevice) }
        let withTests = try snapshot(
            app: feedApp, campaigns: testFeed, poll: Self.testPollAfterSeconds, personal: true, now: now, previous: previous?.testDevices)
        var sentTests: [String: Snapshot] = [:]
        for (installationID, copies) in Self.sentCopies(sent, to: testInstallations) {
            let replaced = Set(copies.map(\.id))
            sentTests[installationID] = try snapshot(
                app: feedApp, campaigns: copies + testFeed.filter { !replaced.contains($0.id) }, poll: Self.testPollAfterSeconds, personal: true,
                now: now, previous: previous?.sentTests[installationID])
        }
        boundaries += sent.map(\.expiresAt)
        return AppFeeds(
            everyone: everyone, testDevices: withTests, testInstallations: testInstallations, sentTests: sentTests,
            generation: generation, storedGeneration: storedGeneration, builtAt: now, checkedAt: now,
            validUntil: boundaries.min() ?? .distantFuture)
    }

    /// The copies of live test sends each test device gets, newest send first: one per campaign (a newer
    /// send of a campaign replaces an older one). A device that is no longer a test device gets none: its
    /// events would not be kept apart.
    static func sentCopies(_ sends: [TestSend], to testInstallations: Set<String>) -> [String: [FeedCampaign]] {
        var copies: [String: [FeedCampaign]] = [:]
        for send in sends.sorted(by: { $0.id > $1.id }) {
            for device in send.devices where testInstallations.contains(device.installationID) {
                if copies[device.installationID]?.contains(where: { $0.id == send.campaignID }) == true { continue }
                copies[device.installationID, default: []].append(testCopy(send))
            }
        }
        return copies
    }

    /// A test send as its devices get it: the document as it was sent, flagged test (so the schedule and
    /// the minimum interval do not apply and its events are kept apart), for everyone the test went to
    /// (no targeting), every time it triggers while it lasts (so a second test shows again), and first
    /// in priority, started when it was sent, so it wins over the app's live campaigns.
    static func testCopy(_ send: TestSend) -> FeedCampaign {
        var campaign = send.campaign
        campaign.targeting = Targeting()
        campaign.frequency = Frequency(type: .always)
        campaign.priority = 1
        return FeedCampaign(campaign, id: send.campaignID, startedAt: send.sentAt, test: true)
    }

    /// Highest priority first (1 is highest); on a tie, the most recently started.
    static func ordered(_ campaigns: [StoredCampaign]) -> [StoredCampaign] {
        campaigns.sorted { a, b in
            if a.campaign.priority != b.campaign.priority { return a.campaign.priority < b.campaign.priority }
            let aStart = a.startedAt ?? a.updatedAt, bStart = b.startedAt ?? b.updatedAt
            if aStart != bStart { return aStart > bStart }
            return a.id > b.id
        }
    }

    /// What a device acts on, and nothing else: no name, description or status (`docs/delivery-semantics.md` §1).
    static func feedCampaign(_ stored: StoredCampaign, test: Bool) -> FeedCampaign {
        FeedCampaign(stored.campaign, id: stored.id, startedAt: stored.startedAt, test: test)
    }

    private func snapshot(
        app: Feed.App, campaigns: [FeedCampaign], poll: Int, personal: Bool, now: Date, previous: Snapshot?
    ) throws -> Snapshot {
        let encoder = CampaignJSON.encoder()
        // The ETag covers what clients act on, not when it was generated, so an unchanged feed keeps its ETag.
        var content = try encoder.encode(campaigns)
        content.append(contentsOf: try encoder.encode(app))
        content.append(contentsOf: Array(String(poll).utf8))
        let hash = Secret.hex(SHA256.hash(data: content))
        if let previous, previous.contentHash == hash { return previous }
        let feed = Feed(app: app, generatedAt: now, pollAfterSeconds: poll, campaigns: campaigns)
        let body = Array(try encoder.encode(feed))
        let tag = String(hash.prefix(32))
        let gzip = Gzip.compress(body).flatMap { gzipped in
            gzipped.count < body.count ? Representation(body: SharedBody(gzipped), etag: EntityTag(tag + "+gzip")) : nil
        }
        return Snapshot(
            identity: Representation(body: SharedBody(body), etag: EntityTag(tag)), gzip: gzip, contentHash: hash, personal: personal)
    }
}

/// `GET /api/v1/feed`.
/// The feed's app was deleted: the service has no feed to build, and says so to the handler that asked.
struct AppDeleted: Error {}
