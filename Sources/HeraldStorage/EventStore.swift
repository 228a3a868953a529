import Foundation
import GRDB
import GRDBSQLite
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
    }

    /// A conversion event's name and how often it was recorded.
    public struct Conversion: Sendable, Equatable {
        public var event: String
        public var count: Int
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
    mutating func setUniqueDevices(real: DeviceBitmaps.UniqueDevices, test: DeviceBitmaps.UniqueDevices) {
        (uniqueDevices, uniqueDevicesEstimated, uniqueDevicesByPlatform) = (real.count, real.estimated, real.byPlatform)
        (uniqueTestDevices, uniqueTestDevicesEstimated) = (test.count, test.estimated)
    }

    /// The language split from a campaign's per-language sums (`named` nil for the languages past the
    /// top ones, '' for the default version): the named ones ordered by impressions, then all events, then
    /// tag, and the rest by type. Each engine's query picks the top languages; this orders them alike.
    static func languages(_ rows: [(named: String?, type: String, count: Int)]) -> ([LanguageCounts], [EventType: Int]) {
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
    mutating func addDiscards(_ rows: [(test: Bool, reason: String, count: Int)]) {
        for row in rows {
            guard let reason = DiscardReason(rawValue: row.reason) else { continue }
            if row.test { testDiscards[reason, default: 0] += row.count } else { discards[reason, default: 0] += row.count }
        }
    }

    /// Conversions (real traffic) of every event name past the top ones.
    static func otherConversions(rows: [Row], top: [Conversion]) -> Int {
        rows.filter { !$0.test && $0.type == .conversion }.reduce(0) { $0 + $1.count } - top.reduce(0) { $0 + $1.count }
    }
}

/// What a batch's ingestion stored: the events new under their id, and those already stored.
public typealias EventIngestCounts = (accepted: Int, duplicates: Int)

/// What a batch's ingestion stored of its events and of its discard counts, each new under its id or already stored.
public struct BatchIngestCounts: Sendable {
    public var events: EventIngestCounts
    public var discards: EventIngestCounts
}

/// What an erasure removed.
public struct EventErasure: Sendable, Equatable {
    /// Raw events erased.
    public var events: Int
    /// Whether the installation's registration (its push token, device details) was erased too.
    public var registration: Bool

    /// The audit line that commits with the erasure, alike on every engine.
    func audit(installationID: String, appID: Int64) -> AuditLine {
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
    init(storedLayout: String) {
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
let eventErasureInFlight: TimeInterval = 600

/// A group of batches written together, each with its arrival time.
struct EventIngestBatch: Sendable {
    let events: [Event]
    let discards: [Discard]
    let receivedAt: Date
}

/// How long the id of a discard count received is remembered (`discard_ids`): a retry within it counts
/// once. Clients retry within minutes, so a week covers a device that lost an answer and went offline.
let discardIDsKeptFor: TimeInterval = 7 * 86_400

/// The most expired discard ids a group's write forgets: at least as many as it adds, so the table holds
/// about a week's ids whatever the traffic, and no write does a long delete.
func expiredDiscardIDsToForget(adding added: Int) -> Int { max(100, added) }

/// The discard rollup a stored count adds to.
struct DiscardRollupKey: Hashable, Comparable {
    let campaignID: Int64, day: String, test: Bool, reason: DiscardReason

    static func < (a: Self, b: Self) -> Bool {
        (a.campaignID, a.day, a.test ? 1 : 0, a.reason.rawValue) < (b.campaignID, b.day, b.test ? 1 : 0, b.reason.rawValue)
    }
}

/// The rollup a stored event adds one to.
struct EventRollupKey: Hashable, Comparable {
    let campaignID: Int64, day: String, platform: String, test: Bool, type: EventType, detail: String

    static func < (a: Self, b: Self) -> Bool {
        (a.campaignID, a.day, a.platform, a.test ? 1 : 0, a.type.rawValue, a.detail) < (b.campaignID, b.day, b.platform, b.test ? 1 : 0, b.type.rawValue, b.detail)
    }
}

/// The language rollup a stored event adds one to; `language` is '' for the default version.
struct EventLanguageRollupKey: Hashable, Comparable {
    let campaignID: Int64, day: String, test: Bool, language: String, type: EventType

    static func < (a: Self, b: Self) -> Bool {
        (a.campaignID, a.day, a.test ? 1 : 0, a.language, a.type.rawValue) < (b.campaignID, b.day, b.test ? 1 : 0, b.language, b.type.rawValue)
    }
}

/// What the events a group stored add to the rollups and the device bitmaps, gathered as they are found
/// new, the same way on every engine.
struct EventTally {
    var rollups: [EventRollupKey: Int] = [:]
    var languageRollups: [EventLanguageRollupKey: Int] = [:]
    var devices: [DeviceBitmaps.Sighting] = []
    var discards: [DiscardRollupKey: Int] = [:]

    mutating func add(_ discard: Discard) {
        discards[DiscardRollupKey(campaignID: discard.campaignID, day: discard.day, test: discard.test, reason: discard.reason), default: 0] += discard.count
    }

    mutating func add(_ event: Event, day: String) {
        rollups[EventRollupKey(
            campaignID: event.campaignID, day: day, platform: event.platform, test: event.test, type: event.type,
            detail: event.detail), default: 0] += 1
        languageRollups[EventLanguageRollupKey(
            campaignID: event.campaignID, day: day, test: event.test, language: event.language ?? "", type: event.type), default: 0] += 1
        if let installation = event.installationID {
            devices.append(DeviceBitmaps.Sighting(
                appID: event.appID, campaignID: event.campaignID, day: day, test: event.test, installationID: installation,
                platform: event.platform))
        }
    }
}

/// The event store in SQLite.
struct SQLiteEventStore: EventStore {
    let pool: DatabasePool
    let batches: GroupCommit<EventIngestBatch, BatchIngestCounts>
    var exactDeviceChunkLimit = DeviceSketches.exactChunkLimit

    func ingest(_ events: [Event], discards: [Discard], now: Date) throws -> BatchIngestCounts {
        try batches.submit(EventIngestBatch(events: events, discards: discards, receivedAt: now)) { group in
            try pool.write { db in try Self.write(group, db) }
        }
    }

    /// Inserts each event of each batch (bound straight through SQLite's C API: this loop is the
    /// ingestion hot path) and each discard count's id, then adds the new ones to the rollups and device
    /// rows, one statement per distinct row of the whole group. Returns each batch's counts.
    private static func write(_ group: [EventIngestBatch], _ db: Database) throws -> [BatchIngestCounts] {
        let insert = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO events
                (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at, language)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let statement = insert.sqliteStatement
        defer { sqlite3_reset(statement) }
        var tally = EventTally()
        var counts: [BatchIngestCounts] = []
        for batch in group {
            let receivedAt = UTCTime.timestamp(batch.receivedAt)
            var accepted = 0
            for event in batch.events {
                let day = event.day
                sqlite3_reset(statement)
                bind(statement, 1, event.id)
                sqlite3_bind_int64(statement, 2, event.appID)
                sqlite3_bind_int64(statement, 3, event.campaignID)
                bind(statement, 4, event.type.rawValue)
                bind(statement, 5, UTCTime.timestamp(event.occurredAt))
                bind(statement, 6, day)
                bind(statement, 7, event.platform)
                bind(statement, 8, event.installationID)
                bind(statement, 9, event.detail)
                bind(statement, 10, event.url)
                sqlite3_bind_int(statement, 11, event.test ? 1 : 0)
                bind(statement, 12, receivedAt)
                bind(statement, 13, event.language)
                let code = sqlite3_step(statement)
                guard code == SQLITE_DONE else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
                guard sqlite3_changes(db.sqliteConnection) > 0 else { continue }
                accepted += 1
                tally.add(event, day: day)
            }
            counts.append(BatchIngestCounts(events: (accepted, batch.events.count - accepted), discards: (0, 0)))
        }
        let discardID = try db.cachedStatement(sql: "INSERT OR IGNORE INTO discard_ids (app_id, id, received_at) VALUES (?, ?, ?)")
        var newDiscardIDs = 0
        for (index, batch) in group.enumerated() where !batch.discards.isEmpty {
            let receivedAt = UTCTime.timestamp(batch.receivedAt)
            var accepted = 0
            for discard in batch.discards {
                try discardID.execute(arguments: [discard.appID, discard.id, receivedAt])
                guard db.changesCount > 0 else { continue }
                accepted += 1
                tally.add(discard)
            }
            counts[index].discards = (accepted, batch.discards.count - accepted)
            newDiscardIDs += accepted
        }

        let rollup = try db.cachedStatement(sql: """
            INSERT INTO event_rollups (campaign_id, day, platform, test, type, detail, count) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (campaign_id, day, platform, test, type, detail) DO UPDATE SET count = count + excluded.count
            """)
        for (key, count) in tally.rollups {
            try rollup.execute(arguments: [key.campaignID, key.day, key.platform, key.test, key.type.rawValue, key.detail, count])
        }
        let languageRollup = try db.cachedStatement(sql: """
            INSERT INTO event_language_rollups (campaign_id, day, test, language, type, count) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (campaign_id, day, test, language, type) DO UPDATE SET count = count + excluded.count
            """)
        for (key, count) in tally.languageRollups {
            try languageRollup.execute(arguments: [key.campaignID, key.day, key.test, key.language, key.type.rawValue, count])
        }
        try DeviceBitmaps.record(tally.devices, in: SQLiteDeviceRows(db: db))
        let discardRollup = try db.cachedStatement(sql: """
            INSERT INTO discard_rollups (campaign_id, day, test, reason, count) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (campaign_id, day, test, reason) DO UPDATE SET count = count + excluded.count
            """)
        for (key, count) in tally.discards {
            try discardRollup.execute(arguments: [key.campaignID, key.day, key.test, key.reason.rawValue, count])
        }
        if newDiscardIDs > 0, let latest = group.map(\.receivedAt).max() {
            try db.cachedStatement(sql: """
                DELETE FROM discard_ids WHERE (app_id, id) IN (
                    SELECT app_id, id FROM discard_ids WHERE received_at < ? ORDER BY received_at LIMIT ?)
                """).execute(arguments: [UTCTime.timestamp(latest.addingTimeInterval(-discardIDsKeptFor)), expiredDiscardIDsToForget(adding: newDiscardIDs)])
        }
        return counts
    }

    /// Binds text (or NULL), copied by SQLite.
    private static func bind(_ statement: SQLiteStatement, _ index: Int32, _ text: String?) {
        guard var text else {
            sqlite3_bind_null(statement, index)
            return
        }
        text.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
        }
    }

    func counts(campaignID: Int64?, from: String, to: String, devices: Bool) throws -> EventCounts {
        try pool.read { db in
            let filter = campaignID == nil ? "" : "campaign_id = ? AND "
            var arguments: StatementArguments = campaignID.map { [$0] } ?? []
            _ = arguments.append(contentsOf: [from, to])
            // Cached statements: a report page runs these few every time, and compiling them (with GRDB's
            // authorizer) cost more than running them over a 90-day range.
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT campaign_id, day, platform, test, type,
                        CASE WHEN type = 'conversion' THEN '' ELSE detail END AS detail, SUM(count) AS count
                    FROM event_rollups WHERE \(filter)day BETWEEN ? AND ?
                    GROUP BY campaign_id, day, platform, test, type, 6
                    ORDER BY campaign_id, day, platform, test, type, 6
                    """), arguments: arguments
            ).compactMap { row -> EventCounts.Row? in
                // By position: a 90-day report reads hundreds of rows, and GRDB finds a column by name
                // by lowercasing it and every column's name.
                guard let type = EventType(rawValue: row[4]) else { return nil }
                return EventCounts.Row(
                    campaignID: row[0], day: row[1], platform: row[2], test: row[3], type: type, detail: row[5], count: row[6])
            }
            func unique(test: Bool) throws -> DeviceBitmaps.UniqueDevices {
                try DeviceBitmaps.uniqueDevices(
                    campaignID: campaignID, from: from, to: to, test: test, exactChunkLimit: exactDeviceChunkLimit, in: SQLiteDeviceRows(db: db))
            }
            var counts = EventCounts(rows: rows, uniqueDevices: 0, uniqueTestDevices: 0)
            if devices { counts.setUniqueDevices(real: try unique(test: false), test: try unique(test: true)) }
            if campaignID != nil {
                counts.topConversions = try Row.fetchAll(
                    db.cachedStatement(sql: """
                        SELECT detail, SUM(count) AS total FROM event_rollups
                        WHERE \(filter)day BETWEEN ? AND ? AND test = 0 AND type = 'conversion'
                        GROUP BY detail ORDER BY total DESC, detail LIMIT ?
                        """), arguments: arguments + [EventCounts.topConversionEvents]
                ).map { EventCounts.Conversion(event: $0["detail"], count: $0["total"]) }
                counts.otherConversions = EventCounts.otherConversions(rows: rows, top: counts.topConversions)
                (counts.topLanguages, counts.otherLanguages) = try Self.languages(db, arguments: arguments)
                counts.addDiscards(try Row.fetchAll(
                    db.cachedStatement(sql: """
                        SELECT test, reason, SUM(count) FROM discard_rollups WHERE \(filter)day BETWEEN ? AND ? GROUP BY test, reason
                        """), arguments: arguments
                ).map { (test: $0[0], reason: $0[1], count: $0[2]) })
            }
            return counts
        }
    }

    /// One campaign's real traffic per language shown over a range (`arguments`: the campaign, first and
    /// last day): the `topLanguages` with the most impressions (then the most events, then by tag), and
    /// the rest summed by type. At most `(topLanguages + 1) × 5` rows come back, whatever tags devices sent.
    private static func languages(_ db: Database, arguments: StatementArguments) throws -> ([EventCounts.LanguageCounts], [EventType: Int]) {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: """
                WITH shown AS (
                    SELECT language, type, SUM(count) AS count FROM event_language_rollups
                    WHERE campaign_id = ? AND day BETWEEN ? AND ? AND test = 0
                    GROUP BY language, type),
                top AS (
                    SELECT language FROM shown GROUP BY language
                    ORDER BY SUM(CASE WHEN type = 'impression' THEN count ELSE 0 END) DESC, SUM(count) DESC, language
                    LIMIT ?)
                SELECT CASE WHEN language IN (SELECT language FROM top) THEN language END AS named, type, SUM(count) AS count
                FROM shown GROUP BY named, type
                """), arguments: arguments + [EventCounts.topLanguages])
        return EventCounts.languages(rows.map { (named: $0["named"], type: $0["type"], count: $0["count"]) })
    }

    /// Raw events have no index by installation: one would dirty a random page for every event ingested,
    /// and an erasure is rare. Its rows are found by a scan in a read snapshot, which holds no lock that
    /// ingestion waits for, then deleted by key in a short write, together with any the installation sent
    /// while the scan ran (found through `events_by_received_at`: received within `inFlight` of `now`)
    /// and the bits those set.
    func eraseInstallation(_ installationID: String, appID: Int64, actor: AuditActor, now: Date) throws -> EventErasure {
        let scanned = try pool.read { db in
            (events: try String.fetchAll(
                db, sql: "SELECT id FROM events WHERE app_id = ? AND installation_id = ?", arguments: [appID, installationID]),
             devices: try DeviceBitmaps.sightings(of: installationID, appID: appID, in: SQLiteDeviceRows(db: db)))
        }
        return try pool.write { db in
            let recent = try Row.fetchAll(
                db, sql: "SELECT id, campaign_id, day, test FROM events WHERE received_at >= ? AND app_id = ? AND installation_id = ?",
                arguments: [UTCTime.timestamp(now.addingTimeInterval(-eventErasureInFlight)), appID, installationID])
            try DeviceBitmaps.erase(
                scanned.devices, installationID: installationID, appID: appID,
                recent: recent.map { (campaignID: $0["campaign_id"], test: $0["test"], day: $0["day"]) }, in: SQLiteDeviceRows(db: db))
            let deleteEvent = try db.cachedStatement(sql: "DELETE FROM events WHERE app_id = ? AND id = ?")
            var erased = 0
            for id in Set(scanned.events).union(recent.map { $0["id"] as String }) {
                try deleteEvent.execute(arguments: [appID, id])
                erased += db.changesCount
            }
            let registration = try SQLiteInstallationStore.delete(appID: appID, installationID: installationID, in: db)
            let erasure = EventErasure(events: erased, registration: registration)
            try SQLiteAuditLogStore.record(actor, erasure.audit(installationID: installationID, appID: appID), at: now, in: db)
            return erasure
        }
    }

    /// Deletes at most `limit` raw events received before `cutoff`, oldest first, in one short transaction
    /// (it queues behind ingestion's group commits like any write); returns how many it deleted. The
    /// rollups and device bitmaps that reports read stay.
    func deleteRawEvents(receivedBefore cutoff: Date, limit: Int) throws -> Int {
        try pool.write { db in
            try db.execute(sql: """
                DELETE FROM events WHERE (app_id, id) IN (
                    SELECT app_id, id FROM events WHERE received_at < ? ORDER BY received_at LIMIT ?)
                """, arguments: [UTCTime.timestamp(cutoff), max(1, limit)])
            return db.changesCount
        }
    }

    func rawEventSummary() throws -> (count: Int, oldestReceivedAt: Date?) {
        try pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM events") ?? 0,
             try Date.fetchOne(db, sql: "SELECT MIN(received_at) FROM events"))
        }
    }

    func count(installationID: String) throws -> Int {
        try pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM events WHERE installation_id = ?", arguments: [installationID]) ?? 0 }
    }

    func campaignChannels(appID: Int64) throws -> [Int64: Channel] {
        try pool.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, layout FROM campaigns WHERE app_id = ?", arguments: [appID])
            return Dictionary(rows.map { ($0[0], Channel(storedLayout: $0[1])) }, uniquingKeysWith: { first, _ in first })
        }
    }
}

/// SQLite's `SQLITE_TRANSIENT` (copy the bound bytes now), a macro Swift cannot import.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
