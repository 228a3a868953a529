import Foundation
import GRDB
import GRDBSQLite
import HeraldDomain
import HeraldStorage

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
            func unique(test: Bool, kind: DeviceKind = .seen, byPlatform: Bool = false) throws -> DeviceBitmaps.UniqueDevices {
                try DeviceBitmaps.uniqueDevices(
                    campaignID: campaignID, from: from, to: to, test: test, kind: kind, byPlatform: byPlatform, exactChunkLimit: exactDeviceChunkLimit,
                    in: SQLiteDeviceRows(db: db))
            }
            var counts = EventCounts(rows: rows, uniqueDevices: 0, uniqueTestDevices: 0)
            if devices { counts.setUniqueDevices(real: try unique(test: false, byPlatform: true), test: try unique(test: true)) }
            if devices, campaignID != nil { try counts.setFunnelDevices { try unique(test: false, kind: $0) } }
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
            (events: try Row.fetchAll(
                db, sql: "SELECT occurred_at, id FROM events WHERE app_id = ? AND installation_id = ?", arguments: [appID, installationID])
                .map { EventKey(occurredAt: $0[0], id: $0[1]) },
             devices: try DeviceBitmaps.sightings(of: installationID, appID: appID, in: SQLiteDeviceRows(db: db)))
        }
        return try pool.write { db in
            let recent = try Row.fetchAll(
                db, sql: """
                    SELECT occurred_at, id, campaign_id, day, test FROM events WHERE received_at >= ? AND app_id = ? AND installation_id = ?
                    """,
                arguments: [UTCTime.timestamp(now.addingTimeInterval(-eventErasureInFlight)), appID, installationID])
            try DeviceBitmaps.erase(
                scanned.devices, installationID: installationID, appID: appID,
                recent: recent.map { (campaignID: $0["campaign_id"], test: $0["test"], day: $0["day"]) }, in: SQLiteDeviceRows(db: db))
            let deleteEvent = try db.cachedStatement(sql: "DELETE FROM events WHERE app_id = ? AND occurred_at = ? AND id = ?")
            var erased = 0
            for key in Set(scanned.events).union(recent.map { EventKey(occurredAt: $0["occurred_at"], id: $0["id"]) }) {
                try deleteEvent.execute(arguments: [appID, key.occurredAt, key.id])
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
                DELETE FROM events WHERE (app_id, occurred_at, id) IN (
                    SELECT app_id, occurred_at, id FROM events WHERE received_at < ? ORDER BY received_at LIMIT ?)
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

/// An event's key in its app (migration 0026): a retry carries the same id and occurrence time.
private struct EventKey: Hashable {
    let occurredAt: String
    let id: String
}

/// SQLite's `SQLITE_TRANSIENT` (copy the bound bytes now), a macro Swift cannot import.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
