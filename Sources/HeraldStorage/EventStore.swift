import Foundation
import HeraldDomain

/// One event from a delivery component, checked and ready to store.
public struct Event: Sendable, Equatable {
    public var id: String
    public var appID: Int64
    public var campaignID: Int64
    public var type: EventType
    public var occurredAt: Date
    public var platform: String
    public var installationID: String?
    /// The click action, dismiss type, error code or conversion event.
    public var detail: String
    public var url: String?
    /// From one of the app's test devices: counted apart from real traffic.
    public var test: Bool
    /// The language version shown, its tag in canonical case (`LanguageTag.canonical`); nil for the default version.
    public var language: String?

    public init(
        id: String, appID: Int64, campaignID: Int64, type: EventType, occurredAt: Date, platform: String,
        installationID: String?, detail: String, url: String?, test: Bool, language: String? = nil
    ) {
        self.id = id
        self.appID = appID
        self.campaignID = campaignID
        self.type = type
        self.occurredAt = occurredAt
        self.platform = platform
        self.installationID = installationID
        self.detail = detail
        self.url = url
        self.test = test
        self.language = language
    }

    /// The UTC day, `YYYY-MM-DD`, that reports count the event in.
    public var day: String { UTCTime.day(occurredAt) }
}

/// A discard count from a delivery client (`DiscardCount`), checked and ready to store: how many times one
/// device chose a campaign's message on a UTC day and did not show it, for one reason.
public struct Discard: Sendable, Equatable {
    /// Made by the client, so a retried upload counts once.
    public var id: String
    public var appID: Int64
    public var campaignID: Int64
    public var reason: DiscardReason
    /// The UTC day, `YYYY-MM-DD`, the discards happened on.
    public var day: String
    public var count: Int
    /// From one of the app's test devices: counted apart from real traffic.
    public var test: Bool

    public init(id: String, appID: Int64, campaignID: Int64, reason: DiscardReason, day: String, count: Int, test: Bool) {
        self.id = id
        self.appID = appID
        self.campaignID = campaignID
        self.reason = reason
        self.day = day
        self.count = count
        self.test = test
    }
}

/// Counts for one campaign (or all) over a range of UTC days, read from the rollups.
public struct EventCounts: Sendable, Equatable {
    public struct Row: Sendable, Equatable {
        public var campaignID: Int64
        public var day: String
        public var platform: String
        public var test: Bool
        public var type: EventType
        public var detail: String
        public var count: Int

        package init(campaignID: Int64, day: String, platform: String, test: Bool, type: EventType, detail: String, count: Int) {
            self.campaignID = campaignID
            self.day = day
            self.platform = platform
            self.test = test
            self.type = type
            self.detail = detail
            self.count = count
        }
    }

    /// A conversion event's name and how often it was recorded.
    public struct Conversion: Sendable, Equatable {
        public var event: String
        public var count: Int

        package init(event: String, count: Int) {
            self.event = event
            self.count = count
        }
    }

    /// Conversion rows carry no event name (see `topConversions`): an app may record any number of
    /// names, and the rows must stay as few as the days, platforms and types.
    public var rows: [Row]
    public var uniqueDevices: Int
    public var uniqueTestDevices: Int
    /// The unique devices are an estimate (from the days' sketches, about 1.6 % standard error): the
    /// range held more bitmap chunks than `EventStore.exactDeviceChunkLimit`.
    public var uniqueDevicesEstimated = false
    public var uniqueTestDevicesEstimated = false
    /// Real traffic's unique devices per platform they sent from (estimated when `uniqueDevicesEstimated`).
    public var uniqueDevicesByPlatform: [String: Int] = [:]
    /// One campaign's most recorded conversion events (real traffic), most first, at most
    /// `EventCounts.topConversionEvents`; empty for counts across campaigns.
    public var topConversions: [Conversion] = []
    /// Conversions of every other event name.
    public var otherConversions = 0
    /// One campaign's counts (real traffic) per language version shown, most impressions first, at most
    /// `EventCounts.topLanguages`; empty for counts across campaigns.
    public var topLanguages: [LanguageCounts] = []
    /// The counts of every other language shown, by type.
    public var otherLanguages: [EventType: Int] = [:]
    /// One campaign's messages chosen and not shown (real traffic), by reason; empty for counts across campaigns.
    public var discards: [DiscardReason: Int] = [:]
    /// The same from test devices.
    public var testDiscards: [DiscardReason: Int] = [:]
    /// One campaign's real devices shown the message, and its real devices that converted; nil for counts
    /// across campaigns.
    public var funnelDevices: FunnelDevices?

    /// The funnel's unique devices (`DeviceKind.exposed` and `.converted`), counted since migration 0024
    /// (PostgreSQL's 0014) began keeping them.
    public struct FunnelDevices: Sendable, Equatable {
        public var exposed: Int
        public var converted: Int
        /// Either count is estimated from sketches (as `uniqueDevicesEstimated`).
        public var estimated: Bool

        public init(exposed: Int, converted: Int, estimated: Bool) {
            self.exposed = exposed
            self.converted = converted
            self.estimated = estimated
        }
    }

    /// Counts with only the rows and device totals; the stores fill the rest.
    package init(rows: [Row], uniqueDevices: Int, uniqueTestDevices: Int) {
        self.rows = rows
        self.uniqueDevices = uniqueDevices
        self.uniqueTestDevices = uniqueTestDevices
    }

    /// How many conversion events a campaign's counts name one by one; the rest are counted together.
    public static let topConversionEvents = 20
    /// How many languages shown a campaign's counts name one by one; the rest are counted together.
    public static let topLanguages = 20

    /// What devices reported for one language version of a campaign.
    public struct LanguageCounts: Sendable, Equatable {
        /// The version's tag; nil for the default version.
        public var language: String?
        public var counts: [EventType: Int]

        public init(language: String?, counts: [EventType: Int]) {
            self.language = language
            self.counts = counts
        }
    }
}

extension EventCounts {
    /// The unique devices as `DeviceBitmaps.uniqueDevices` counted them, of real traffic and of test devices.
    package mutating func setUniqueDevices(real: DeviceBitmaps.UniqueDevices, test: DeviceBitmaps.UniqueDevices) {
        (uniqueDevices, uniqueDevicesEstimated, uniqueDevicesByPlatform) = (real.count, real.estimated, real.byPlatform)
        (uniqueTestDevices, uniqueTestDevicesEstimated) = (test.count, test.estimated)
    }

    /// A campaign's funnel devices, from real traffic's devices of each kind as `unique` counts them.
    package mutating func setFunnelDevices(_ unique: (DeviceKind) throws -> DeviceBitmaps.UniqueDevices) rethrows {
        let (exposed, converted) = (try unique(.exposed), try unique(.converted))
        funnelDevices = FunnelDevices(exposed: exposed.count, converted: converted.count, estimated: exposed.estimated || converted.estimated)
    }

    /// The language split from a campaign's per-language sums (`named` nil for the languages past the
    /// top ones, '' for the default version): the named ones ordered by impressions, then all events, then
    /// tag, and the rest by type. Each engine's query picks the top languages; this orders them alike.
    package static func languages(_ rows: [(named: String?, type: String, count: Int)]) -> ([LanguageCounts], [EventType: Int]) {
        var named: [String: [EventType: Int]] = [:]
        var other: [EventType: Int] = [:]
        for row in rows {
            guard let type = EventType(rawValue: row.type) else { continue }
            if let language = row.named { named[language, default: [:]][type, default: 0] += row.count } else { other[type, default: 0] += row.count }
        }
        let top = named.map { language, counts in
            LanguageCounts(language: language.isEmpty ? nil : language, counts: counts)
        }.sorted { a, b in
            let (aImpressions, bImpressions) = (a.counts[.impression] ?? 0, b.counts[.impression] ?? 0)
            if aImpressions != bImpressions { return aImpressions > bImpressions }
            let (aTotal, bTotal) = (a.counts.values.reduce(0, +), b.counts.values.reduce(0, +))
            if aTotal != bTotal { return aTotal > bTotal }
            return (a.language ?? "") < (b.language ?? "")
        }
        return (top, other)
    }

    /// A campaign's discard sums by test flag and reason, as each engine's query reads them, into `discards` and
    /// `testDiscards`; a reason this binary does not know (never stored by it) is left out.
    package mutating func addDiscards(_ rows: [(test: Bool, reason: String, count: Int)]) {
        for row in rows {
            guard let reason = DiscardReason(rawValue: row.reason) else { continue }
            if row.test { testDiscards[reason, default: 0] += row.count } else { discards[reason, default: 0] += row.count }
        }
    }

    /// Conversions (real traffic) of every event name past the top ones.
    package static func otherConversions(rows: [Row], top: [Conversion]) -> Int {
        rows.filter { !$0.test && $0.type == .conversion }.reduce(0) { $0 + $1.count } - top.reduce(0) { $0 + $1.count }
    }
}

/// What a batch's ingestion stored: the events new under their id, and those already stored.
public typealias EventIngestCounts = (accepted: Int, duplicates: Int)

/// What a batch's ingestion stored of its events and of its discard counts, each new under its id or already stored.
public struct BatchIngestCounts: Sendable {
    public var events: EventIngestCounts
    public var discards: EventIngestCounts

    package init(events: EventIngestCounts, discards: EventIngestCounts) {
        self.events = events
        self.discards = discards
    }
}

/// What an erasure removed.
public struct EventErasure: Sendable, Equatable {
    /// Raw events erased.
    public var events: Int
    /// Whether the installation's registration (its push token, device details) was erased too.
    public var registration: Bool

    package init(events: Int, registration: Bool) {
        self.events = events
        self.registration = registration
    }

    /// The audit line that commits with the erasure, alike on every engine.
    package func audit(installationID: String, appID: Int64) -> AuditLine {
        .installationErased(installationID, appID: appID, events: events, registration: registration)
    }
}

/// The `events` and rollup tables, and the device bitmaps and sketches (`DeviceBitmaps`, `DeviceSketches`).
public protocol EventStore: Sendable {
    /// A range with more device bitmap chunks than this has its unique devices estimated (tests lower it).
    var exactDeviceChunkLimit: Int { get set }

    /// Stores a batch of events and discard counts, updating the rollups with them; returns how many of each
    /// were new (the others were already stored under their id, by this instance or any other). Batches
    /// arriving together share one transaction and one commit (group commit). A return means the batch is durable.
    func ingest(_ events: [Event], discards: [Discard], now: Date) throws -> BatchIngestCounts

    /// Rollup rows for `campaignID` (or every campaign when nil) from `from` to `to`, inclusive UTC days,
    /// one per campaign, day, platform, test flag, type and detail, in no promised order: every reader
    /// sums them by key, and ordering them cost PostgreSQL's path a sort. `devices: false` skips the
    /// distinct-installation counts, which read the device bitmaps of the range.
    func counts(campaignID: Int64?, from: String, to: String, devices: Bool) throws -> EventCounts

    /// Erases an installation's raw events, its device number and bits and its registration (a data-subject
    /// request); the rollups keep their counts. The audit line commits with the erasure.
    func eraseInstallation(_ installationID: String, appID: Int64, actor: AuditActor, now: Date) throws -> EventErasure

    /// Deletes at most `limit` raw events received before `cutoff`, oldest first, in one short transaction;
    /// returns how many it deleted. The rollups and device bitmaps that reports read stay.
    func deleteRawEvents(receivedBefore cutoff: Date, limit: Int) throws -> Int

    /// How many raw events are stored, and when the oldest of them was received.
    func rawEventSummary() throws -> (count: Int, oldestReceivedAt: Date?)

    /// Raw events for one installation (for tests and support questions).
    func count(installationID: String) throws -> Int

    /// The campaigns of an app and each one's channel, to check events against.
    func campaignChannels(appID: Int64) throws -> [Int64: Channel]
}

extension Channel {
    /// A stored campaign's channel, from its `layout` column (`Campaign.listedLayout`).
    package init(storedLayout: String) {
        self = storedLayout == Campaign.pushLayout ? .push : .inApp
    }
}

extension EventStore {
    /// Stores a batch of events only.
    public func ingest(_ events: [Event], now: Date) throws -> EventIngestCounts {
        try ingest(events, discards: [], now: now).events
    }

    public func counts(campaignID: Int64?, from: String, to: String) throws -> EventCounts {
        try counts(campaignID: campaignID, from: from, to: to, devices: true)
    }
}

/// How long before an erasure an event of the installation may have been received and still be
/// waiting for its group's commit when the erasure's scan began; generous, since a request's
/// whole life is bounded by the server's timeouts, which are far shorter.
package let eventErasureInFlight: TimeInterval = 600

/// A group of batches written together, each with its arrival time.
package struct EventIngestBatch: Sendable {
    package let events: [Event]
    package let discards: [Discard]
    package let receivedAt: Date

    package init(events: [Event], discards: [Discard], receivedAt: Date) {
        self.events = events
        self.discards = discards
        self.receivedAt = receivedAt
    }
}

/// How long the id of a discard count received is remembered (`discard_ids`): a retry within it counts
/// once. Clients retry within minutes, so a week covers a device that lost an answer and went offline.
package let discardIDsKeptFor: TimeInterval = 7 * 86_400

/// The most expired discard ids a group's write forgets: at least as many as it adds, so the table holds
/// about a week's ids whatever the traffic, and no write does a long delete.
package func expiredDiscardIDsToForget(adding added: Int) -> Int { max(100, added) }

/// The discard rollup a stored count adds to.
package struct DiscardRollupKey: Hashable, Comparable {
    package let campaignID: Int64, day: String, test: Bool, reason: DiscardReason

    package static func < (a: Self, b: Self) -> Bool {
        (a.campaignID, a.day, a.test ? 1 : 0, a.reason.rawValue) < (b.campaignID, b.day, b.test ? 1 : 0, b.reason.rawValue)
    }
}

/// The rollup a stored event adds one to.
package struct EventRollupKey: Hashable, Comparable {
    package let campaignID: Int64, day: String, platform: String, test: Bool, type: EventType, detail: String

    package static func < (a: Self, b: Self) -> Bool {
        (a.campaignID, a.day, a.platform, a.test ? 1 : 0, a.type.rawValue, a.detail) < (b.campaignID, b.day, b.platform, b.test ? 1 : 0, b.type.rawValue, b.detail)
    }
}

/// The language rollup a stored event adds one to; `language` is '' for the default version.
package struct EventLanguageRollupKey: Hashable, Comparable {
    package let campaignID: Int64, day: String, test: Bool, language: String, type: EventType

    package static func < (a: Self, b: Self) -> Bool {
        (a.campaignID, a.day, a.test ? 1 : 0, a.language, a.type.rawValue) < (b.campaignID, b.day, b.test ? 1 : 0, b.language, b.type.rawValue)
    }
}

/// What the events a group stored add to the rollups and the device bitmaps, gathered as they are found
/// new, the same way on every engine.
package struct EventTally {
    package var rollups: [EventRollupKey: Int] = [:]
    package var languageRollups: [EventLanguageRollupKey: Int] = [:]
    package var devices: [DeviceBitmaps.Sighting] = []
    package var discards: [DiscardRollupKey: Int] = [:]

    package init(
        rollups: [EventRollupKey: Int] = [:], languageRollups: [EventLanguageRollupKey: Int] = [:],
        devices: [DeviceBitmaps.Sighting] = [], discards: [DiscardRollupKey: Int] = [:]
    ) {
        self.rollups = rollups
        self.languageRollups = languageRollups
        self.devices = devices
        self.discards = discards
    }

    package mutating func add(_ discard: Discard) {
        discards[DiscardRollupKey(campaignID: discard.campaignID, day: discard.day, test: discard.test, reason: discard.reason), default: 0] += discard.count
    }

    package mutating func add(_ event: Event, day: String) {
        rollups[EventRollupKey(
            campaignID: event.campaignID, day: day, platform: event.platform, test: event.test, type: event.type,
            detail: event.detail), default: 0] += 1
        languageRollups[EventLanguageRollupKey(
            campaignID: event.campaignID, day: day, test: event.test, language: event.language ?? "", type: event.type), default: 0] += 1
        if let installation = event.installationID {
            for kind in DeviceKind.of(event.type) {
                devices.append(DeviceBitmaps.Sighting(
                    appID: event.appID, campaignID: event.campaignID, day: day, test: event.test, kind: kind, installationID: installation,
                    platform: event.platform))
            }
        }
    }
}
