import Foundation
import HeraldStorage
import HeraldDomain
import NIOCore
import NIOFoundationCompat
import PostgresNIO
import Synchronization

/// What an instance's event stores share: ingestion's group commit, and the months whose partition of
/// `events` this instance has seen made (so a batch checks the catalog once a month, not every time).
final class PostgresEventIngestion: Sendable {
    let batches = GroupCommit<EventIngestBatch, BatchIngestCounts>()
    let months = Mutex<Set<String>>([])
}

/// The event store on PostgreSQL. Whether an event counts is decided by `event_ids` (an event's key, its
/// app, occurrence time and id, unique across every instance and month); rollups are added with upserts,
/// device numbers and bitmaps under transaction locks per app and per campaign day (`PostgresDeviceRows`),
/// so instances sharing the database count what one SQLite writer would.
struct PostgresEventStore: EventStore {
    let database: PostgresAppDatabase
    let ingestion: PostgresEventIngestion
    var exactDeviceChunkLimit = DeviceSketches.exactChunkLimit

    /// Rows bound in one statement (each column an array): bounds a statement's size whatever the group's.
    static let rowsPerStatement = 1000

    func ingest(_ events: [Event], discards: [Discard], now: Date) throws -> BatchIngestCounts {
        try ingestion.batches.submit(EventIngestBatch(events: events, discards: discards, receivedAt: now)) { group in
            try makePartitions(for: group.map(\.receivedAt.storedPrecision))
            do {
                return try database.write { try Self.write(group, $0) }
            } catch where sqlState(of: error) == "23514" {
                // No partition for a row: another instance's retention dropped a month this one had seen.
                ingestion.months.withLock { $0 = [] }
                try makePartitions(for: group.map(\.receivedAt.storedPrecision))
                return try database.write { try Self.write(group, $0) }
            }
        }
    }

    /// Makes the month partitions the group's rows go to, each in its own short transaction: making one
    /// locks `events` whole, which must not last as long as a group's write.
    private func makePartitions(for dates: [Date]) throws {
        var months: [String: Date] = [:]
        for date in dates { months[String(UTCTime.day(date).prefix(7))] = date }
        let known = ingestion.months.withLock { $0 }
        for (month, date) in months.sorted(by: { $0.key < $1.key }) where !known.contains(month) {
            try database.write { try $0.execute("SELECT herald_events_partition(\(date))") }
            ingestion.months.withLock { _ = $0.insert(month) }
        }
    }

    /// An event's key as PostgreSQL returned it, the time as its text, to find the row again.
    private struct StoredKey: Hashable {
        let occurredAt: String, id: String
    }

    /// An event's key, as SQLite's events table is keyed (its migration 0026): a retry carries the same id and
    /// occurrence time.
    private struct EventKey: Hashable {
        let appID: Int64, occurredAt: Date, id: String

        init(_ event: Event) {
            (appID, occurredAt, id) = (event.appID, event.occurredAt.storedPrecision, event.id)
        }
    }

    /// Inserts the group's events (the first of each key in arrival order; later ones in the group are
    /// duplicates, as SQLite's INSERT OR IGNORE makes them), in key order so that two instances' groups
    /// lock keys in one order; then adds the stored ones to the rollups and devices in arrival order; then the
    /// discard counts alike (`writeDiscards`).
    private static func write(_ group: [EventIngestBatch], _ db: PostgresSession) throws -> [BatchIngestCounts] {
        var firsts: [(key: EventKey, event: Event, receivedAt: Date)] = []
        var seen: Set<EventKey> = []
        for batch in group {
            for event in batch.events {
                let key = EventKey(event)
                if seen.insert(key).inserted { firsts.append((key, event, batch.receivedAt.storedPrecision)) }
            }
        }
        firsts.sort { ($0.key.appID, $0.key.occurredAt, $0.key.id) < ($1.key.appID, $1.key.occurredAt, $1.key.id) }
        var stored: Set<EventKey> = []
        for start in stride(from: 0, to: firsts.count, by: rowsPerStatement) {
            let rows = firsts[start..<min(start + rowsPerStatement, firsts.count)]
            let events = rows.map(\.event)
            let ids = events.map(\.id), apps = events.map(\.appID), campaigns = events.map(\.campaignID)
            let types = events.map(\.type.rawValue), occurred = events.map(\.occurredAt.storedPrecision), days = events.map(\.day)
            let platforms = events.map(\.platform), details = events.map(\.detail), tests = events.map(\.test)
            let installations = events.map { $0.installationID ?? "" }, hasInstallation = events.map { $0.installationID != nil }
            let urls = events.map { ByteBuffer(string: $0.url ?? "") }, hasURL = events.map { $0.url != nil }
            let languages = events.map { $0.language ?? "" }, hasLanguage = events.map { $0.language != nil }
            let received = rows.map(\.receivedAt)
            let new = try db.rows(
                """
                WITH input AS (
                    SELECT * FROM unnest(
                        \(ids)::text[], \(apps)::int8[], \(campaigns)::int8[], \(types)::text[], \(occurred)::timestamptz[],
                        \(days)::text[], \(platforms)::text[], \(installations)::text[], \(hasInstallation)::bool[], \(details)::text[],
                        \(urls)::bytea[], \(hasURL)::bool[], \(tests)::bool[], \(received)::timestamptz[], \(languages)::text[],
                        \(hasLanguage)::bool[]) WITH ORDINALITY
                    AS t(id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, has_installation, detail,
                         url, has_url, test, received_at, language, has_language, ordinal)),
                new AS (
                    INSERT INTO event_ids (app_id, occurred_at, id, received_at) SELECT app_id, occurred_at, id, received_at FROM input
                    ON CONFLICT DO NOTHING RETURNING app_id, occurred_at, id),
                stored AS (
                    INSERT INTO events (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test,
                                        received_at, language)
                    SELECT i.id, i.app_id, i.campaign_id, i.type, i.occurred_at, i.day, i.platform,
                        CASE WHEN i.has_installation THEN i.installation_id END, i.detail, CASE WHEN i.has_url THEN i.url END, i.test,
                        i.received_at, CASE WHEN i.has_language THEN i.language END
                    FROM input i JOIN new n ON n.app_id = i.app_id AND n.occurred_at = i.occurred_at AND n.id = i.id)
                SELECT i.ordinal FROM input i JOIN new n ON n.app_id = i.app_id AND n.occurred_at = i.occurred_at AND n.id = i.id
                """)
            // By position in this statement's rows (1-based), not by the returned key: the instant comes back
            // through PostgreSQL's microseconds and need not equal the Date it was bound from.
            for row in new {
                let ordinal = Int(clamping: try row.decode(Int64.self))
                guard (1...events.count).contains(ordinal) else { throw UnreadableStoredValue(column: "ordinal", value: "\(ordinal)") }
                stored.insert(rows[rows.startIndex + ordinal - 1].key)
            }
        }

        var tally = EventTally()
        var counts: [BatchIngestCounts] = []
        for batch in group {
            var accepted = 0
            for event in batch.events where stored.remove(EventKey(event)) != nil {
                accepted += 1
                tally.add(event, day: event.day)
            }
            counts.append(BatchIngestCounts(events: (accepted, batch.events.count - accepted), discards: (0, 0)))
        }
        try writeDiscards(group, into: &counts, &tally, db)
        try addRollups(tally, db)
        try DeviceBitmaps.record(tally.devices, in: PostgresDeviceRows(db: db))
        return counts
    }

    /// A discard count's key: its id, in its app.
    private struct DiscardKey: Hashable {
        let appID: Int64, id: String
    }

    /// Records the ids of the group's discard counts (the first of each id, in key order, as events'), adds
    /// the new ones to `tally` and each batch's `counts`, and forgets at least as many expired ids.
    private static func writeDiscards(_ group: [EventIngestBatch], into counts: inout [BatchIngestCounts], _ tally: inout EventTally, _ db: PostgresSession) throws {
        var firsts: [(app: Int64, id: String, receivedAt: Date)] = []
        var seen: Set<DiscardKey> = []
        for batch in group {
            for discard in batch.discards where seen.insert(DiscardKey(appID: discard.appID, id: discard.id)).inserted {
                firsts.append((discard.appID, discard.id, batch.receivedAt.storedPrecision))
            }
        }
        guard !firsts.isEmpty else { return }
        firsts.sort { ($0.app, $0.id) < ($1.app, $1.id) }
        var stored: Set<DiscardKey> = []
        for part in firsts.chunked(rowsPerStatement) {
            let (apps, ids, received) = (part.map(\.app), part.map(\.id), part.map(\.receivedAt))
            for row in try db.rows(
                """
                INSERT INTO discard_ids (app_id, id, received_at) SELECT * FROM unnest(\(apps)::int8[], \(ids)::text[], \(received)::timestamptz[])
                ON CONFLICT DO NOTHING RETURNING app_id, id
                """) {
                let (app, id) = try row.decode((Int64, String).self)
                stored.insert(DiscardKey(appID: app, id: id))
            }
        }
        for (index, batch) in group.enumerated() {
            var accepted = 0
            for discard in batch.discards where stored.remove(DiscardKey(appID: discard.appID, id: discard.id)) != nil {
                accepted += 1
                tally.add(discard)
            }
            counts[index].discards = (accepted, batch.discards.count - accepted)
        }
        let added = counts.reduce(0) { $0 + $1.discards.accepted }
        if added > 0, let latest = group.map(\.receivedAt).max() {
            try db.execute(
                """
                DELETE FROM discard_ids WHERE (app_id, id) IN (
                    SELECT app_id, id FROM discard_ids WHERE received_at < \(latest.addingTimeInterval(-discardIDsKeptFor).storedPrecision)
                    ORDER BY received_at LIMIT \(Int64(expiredDiscardIDsToForget(adding: added))))
                """)
        }
    }

    /// Adds the group's counts to the rollups, in key order (so concurrent groups lock rows in one order).
    private static func addRollups(_ tally: EventTally, _ db: PostgresSession) throws {
        let rollups = tally.rollups.sorted { $0.key < $1.key }
        for part in rollups.chunked(rowsPerStatement) {
            let keys = part.map(\.key)
            let (campaigns, days, platforms) = (keys.map(\.campaignID), keys.map(\.day), keys.map(\.platform))
            let (tests, types, details, counts) = (keys.map(\.test), keys.map(\.type.rawValue), keys.map(\.detail), part.map { Int64($0.value) })
            try db.execute(
                """
                INSERT INTO event_rollups (campaign_id, day, platform, test, type, detail, count)
                SELECT * FROM unnest(\(campaigns)::int8[], \(days)::text[], \(platforms)::text[], \(tests)::bool[], \(types)::text[],
                                     \(details)::text[], \(counts)::int8[])
                ON CONFLICT (campaign_id, day, platform, test, type, detail) DO UPDATE SET count = event_rollups.count + excluded.count
                """)
        }
        let languageRollups = tally.languageRollups.sorted { $0.key < $1.key }
        for part in languageRollups.chunked(rowsPerStatement) {
            let keys = part.map(\.key)
            let (campaigns, days, tests) = (keys.map(\.campaignID), keys.map(\.day), keys.map(\.test))
            let (languages, types, counts) = (keys.map(\.language), keys.map(\.type.rawValue), part.map { Int64($0.value) })
            try db.execute(
                """
                INSERT INTO event_language_rollups (campaign_id, day, test, language, type, count)
                SELECT * FROM unnest(\(campaigns)::int8[], \(days)::text[], \(tests)::bool[], \(languages)::text[], \(types)::text[],
                                     \(counts)::int8[])
                ON CONFLICT (campaign_id, day, test, language, type) DO UPDATE SET count = event_language_rollups.count + excluded.count
                """)
        }
        let discards = tally.discards.sorted { $0.key < $1.key }
        for part in discards.chunked(rowsPerStatement) {
            let keys = part.map(\.key)
            let (campaigns, days, tests) = (keys.map(\.campaignID), keys.map(\.day), keys.map(\.test))
            let (reasons, counts) = (keys.map(\.reason.rawValue), part.map { Int64($0.value) })
            try db.execute(
                """
                INSERT INTO discard_rollups (campaign_id, day, test, reason, count)
                SELECT * FROM unnest(\(campaigns)::int8[], \(days)::text[], \(tests)::bool[], \(reasons)::text[], \(counts)::int8[])
                ON CONFLICT (campaign_id, day, test, reason) DO UPDATE SET count = discard_rollups.count + excluded.count
                """)
        }
    }

    func counts(campaignID: Int64?, from: String, to: String, devices: Bool) throws -> EventCounts {
        try database.read { db in
            let (sql, binds) = PostgresEventCounts.statement(
                campaignID: campaignID, from: from, to: to, devices: devices, exactChunkLimit: exactDeviceChunkLimit)
            guard let row = try db.preparedRows(sql, binds).first else { throw PackedBlobs.Mismatch() }
            var deviceRows = PostgresDeviceRows(db: db)
            var counts = try PostgresEventCounts.decode(row, campaignID: campaignID, from: from, to: to, devices: devices, into: &deviceRows)
            if devices {
                func unique(test: Bool, kind: DeviceKind = .seen, byPlatform: Bool = false) throws -> DeviceBitmaps.UniqueDevices {
                    try DeviceBitmaps.uniqueDevices(
                        campaignID: campaignID, from: from, to: to, test: test, kind: kind, byPlatform: byPlatform, exactChunkLimit: exactDeviceChunkLimit, in: deviceRows)
                }
                counts.setUniqueDevices(real: try unique(test: false, byPlatform: true), test: try unique(test: true))
                if campaignID != nil { try counts.setFunnelDevices { try unique(test: false, kind: $0) } }
            }
            return counts
        }
    }

    /// As SQLite's: the installation's events are found by a scan outside the write (no index by
    /// installation), then deleted by key in a short transaction with any it sent meanwhile.
    func eraseInstallation(_ installationID: String, appID: Int64, actor: AuditActor, now: Date) throws -> EventErasure {
        let scanned = try database.read { db in
            (events: try db.rows("SELECT occurred_at::text, id FROM events WHERE app_id = \(appID) AND installation_id = \(installationID)")
                .map { try $0.decode((String, String).self) }.map { StoredKey(occurredAt: $0.0, id: $0.1) },
             devices: try DeviceBitmaps.sightings(of: installationID, appID: appID, in: PostgresDeviceRows(db: db)))
        }
        return try database.write { db in
            let recent = try db.rows(
                """
                SELECT occurred_at::text, id, campaign_id, day, test FROM events
                WHERE received_at >= \(now.addingTimeInterval(-eventErasureInFlight).storedPrecision) AND app_id = \(appID)
                    AND installation_id = \(installationID)
                """
            ).map { try $0.decode((String, String, Int64, String, Bool).self) }
            try DeviceBitmaps.erase(
                scanned.devices, installationID: installationID, appID: appID,
                recent: recent.map { (campaignID: $0.2, test: $0.4, day: $0.3) }, in: PostgresDeviceRows(db: db))
            // By key, the time as PostgreSQL wrote it as text (a Date's double could miss it by a microsecond).
            let keys = Set(scanned.events).union(recent.map { StoredKey(occurredAt: $0.0, id: $0.1) })
            let (times, ids) = (keys.map(\.occurredAt), keys.map(\.id))
            let erased = try db.changes("""
                DELETE FROM events e USING unnest(\(times)::text[]::timestamptz[], \(ids)::text[]) AS k(occurred_at, id)
                WHERE e.app_id = \(appID) AND e.occurred_at = k.occurred_at AND e.id = k.id
                """)
            // Its keys go too, as its SQLite rows do: the same event sent again counts again.
            try db.execute("""
                DELETE FROM event_ids e USING unnest(\(times)::text[]::timestamptz[], \(ids)::text[]) AS k(occurred_at, id)
                WHERE e.app_id = \(appID) AND e.occurred_at = k.occurred_at AND e.id = k.id
                """)
            let registration = try PostgresInstallationStore.delete(appID: appID, installationID: installationID, in: db)
            let erasure = EventErasure(events: erased, registration: registration)
            try PostgresAuditLogStore.record(actor, erasure.audit(installationID: installationID, appID: appID), at: now, in: db)
            return erasure
        }
    }

    /// Drops the month partitions wholly before `cutoff` first (their rows go at once, whatever `limit`),
    /// then deletes up to `limit` of the oldest expired ids and their rows in the partly expired month.
    /// Returns the expired ids deleted: every stored event has one, so a run's total is the events it
    /// removed, and a step below `limit` means none is left.
    func deleteRawEvents(receivedBefore cutoff: Date, limit: Int) throws -> Int {
        try database.write { db in
            let cutoff = cutoff.storedPrecision
            try db.execute("SELECT herald_drop_expired_event_partitions(\(cutoff))")
            let deleted = try db.one(
                """
                WITH expired AS (
                    DELETE FROM event_ids WHERE (app_id, occurred_at, id) IN (
                        SELECT app_id, occurred_at, id FROM event_ids WHERE received_at < \(cutoff) ORDER BY received_at
                        LIMIT \(Int64(max(1, limit))))
                    RETURNING app_id, occurred_at, id, received_at),
                gone AS (
                    DELETE FROM events e USING expired x
                    WHERE e.app_id = x.app_id AND e.occurred_at = x.occurred_at AND e.id = x.id AND e.received_at = x.received_at)
                SELECT count(*)::int8 FROM expired
                """, as: Int64.self) ?? 0
            return Int(clamping: deleted)
        }
    }

    func rawEventSummary() throws -> (count: Int, oldestReceivedAt: Date?) {
        try database.read { db in
            guard let row = try db.rows("SELECT count(*)::int8, min(received_at) FROM events").first else { return (0, nil) }
            let (count, oldest) = try row.decode((Int64, Date?).self)
            return (Int(clamping: count), oldest)
        }
    }

    func count(installationID: String) throws -> Int {
        try database.read { Int(clamping: try $0.one("SELECT count(*)::int8 FROM events WHERE installation_id = \(installationID)", as: Int64.self) ?? 0) }
    }

    func campaignChannels(appID: Int64) throws -> [Int64: HeraldDomain.Channel] {
        try database.read { db in
            let rows = try db.rows("SELECT id, layout FROM campaigns WHERE app_id = \(appID)").map { try $0.decode((Int64, String).self) }
            return Dictionary(rows.map { ($0.0, HeraldDomain.Channel(storedLayout: $0.1)) }, uniquingKeysWith: { first, _ in first })
        }
    }
}

extension Collection {
    /// The collection in consecutive pieces of at most `size` elements.
    func chunked(_ size: Int) -> [SubSequence] {
        var pieces: [SubSequence] = []
        var start = startIndex
        while start != endIndex {
            let end = index(start, offsetBy: size, limitedBy: endIndex) ?? endIndex
            pieces.append(self[start..<end])
            start = end
        }
        return pieces
    }
}
