import Foundation
import GRDB

/// One event from a delivery component, checked and ready to store.
public struct Event: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case impression, click, dismiss, error, conversion
    }

    public var id: String
    public var appID: Int64
    public var campaignID: Int64
    public var type: Kind
    public var occurredAt: Date
    public var platform: String
    public var installationID: String?
    /// The click action, dismiss type, error code or conversion event.
    public var detail: String
    public var url: String?
    /// From one of the app's test devices: counted apart from real traffic.
    public var test: Bool

    public init(
        id: String, appID: Int64, campaignID: Int64, type: Kind, occurredAt: Date, platform: String,
        installationID: String?, detail: String, url: String?, test: Bool
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
    }

    /// The UTC day, `YYYY-MM-DD`, that reports count the event in.
    public var day: String { EventDay.string(occurredAt) }
}

/// Counts for one campaign (or all) over a range of UTC days, read from the rollups.
public struct EventCounts: Sendable, Equatable {
    public struct Row: Sendable, Equatable {
        public var campaignID: Int64
        public var day: String
        public var platform: String
        public var test: Bool
        public var type: Event.Kind
        public var detail: String
        public var count: Int
    }

    public var rows: [Row]
    public var uniqueDevices: Int
    public var uniqueTestDevices: Int
}

/// The `events`, `event_rollups` and `campaign_devices` tables.
public struct EventStore: Sendable {
    let pool: DatabasePool

    /// Stores a batch in one transaction, updating the rollups with it; returns how many were new
    /// (the others were already stored under their id). A return means the batch is durable.
    public func ingest(_ events: [Event], now: Date) throws -> (accepted: Int, duplicates: Int) {
        try pool.write { db in
            let insert = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO events
                    (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            let rollup = try db.cachedStatement(sql: """
                INSERT INTO event_rollups (campaign_id, day, platform, test, type, detail, count) VALUES (?, ?, ?, ?, ?, ?, 1)
                ON CONFLICT (campaign_id, day, platform, test, type, detail) DO UPDATE SET count = count + 1
                """)
            let device = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO campaign_devices (campaign_id, day, test, installation_id) VALUES (?, ?, ?, ?)
                """)
            var accepted = 0
            for event in events {
                let day = event.day
                try insert.execute(arguments: [
                    event.id, event.appID, event.campaignID, event.type.rawValue, event.occurredAt, day, event.platform,
                    event.installationID, event.detail, event.url, event.test, now,
                ])
                guard db.changesCount > 0 else { continue }
                accepted += 1
                try rollup.execute(arguments: [event.campaignID, day, event.platform, event.test, event.type.rawValue, event.detail])
                if let installation = event.installationID {
                    try device.execute(arguments: [event.campaignID, day, event.test, installation])
                }
            }
            return (accepted, events.count - accepted)
        }
    }

    /// Rollup rows for `campaignID` (or every campaign when nil) from `from` to `to`, inclusive UTC days.
    /// `devices: false` skips the distinct-installation counts, which scan the device rows of the range.
    public func counts(campaignID: Int64?, from: String, to: String, devices: Bool = true) throws -> EventCounts {
        try pool.read { db in
            let filter = campaignID == nil ? "" : "campaign_id = ? AND "
            var arguments: StatementArguments = campaignID.map { [$0] } ?? []
            _ = arguments.append(contentsOf: [from, to])
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM event_rollups WHERE \(filter)day BETWEEN ? AND ?", arguments: arguments
            ).compactMap { row -> EventCounts.Row? in
                guard let type = Event.Kind(rawValue: row["type"]) else { return nil }
                return EventCounts.Row(
                    campaignID: row["campaign_id"], day: row["day"], platform: row["platform"], test: row["test"],
                    type: type, detail: row["detail"], count: row["count"])
            }
            func unique(test: Bool) throws -> Int {
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(DISTINCT installation_id) FROM campaign_devices WHERE \(filter)day BETWEEN ? AND ? AND test = ?",
                    arguments: arguments + [test]) ?? 0
            }
            guard devices else { return EventCounts(rows: rows, uniqueDevices: 0, uniqueTestDevices: 0) }
            return EventCounts(rows: rows, uniqueDevices: try unique(test: false), uniqueTestDevices: try unique(test: true))
        }
    }

    /// Erases an installation's raw events and its device rows (a data-subject request);
    /// the rollups keep their counts. Returns how many events were erased.
    public func eraseInstallation(_ installationID: String, appID: Int64) throws -> Int {
        try pool.write { db in
            try db.execute(
                sql: """
                    DELETE FROM campaign_devices WHERE installation_id = ?
                    AND campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?)
                    """,
                arguments: [installationID, appID])
            try db.execute(sql: "DELETE FROM events WHERE installation_id = ? AND app_id = ?", arguments: [installationID, appID])
            return db.changesCount
        }
    }

    /// Raw events for one installation (for tests and support questions).
    public func count(installationID: String) throws -> Int {
        try pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM events WHERE installation_id = ?", arguments: [installationID]) ?? 0 }
    }

    /// The campaign ids of an app, to check events against.
    public func campaignIDs(appID: Int64) throws -> Set<Int64> {
        try pool.read { Set(try Int64.fetchAll($0, sql: "SELECT id FROM campaigns WHERE app_id = ?", arguments: [appID])) }
    }
}

/// UTC days as `YYYY-MM-DD`.
public enum EventDay {
    public static func string(_ date: Date) -> String {
        date.formatted(Date.VerbatimFormatStyle(
            format: "\(year: .padded(4))-\(month: .twoDigits)-\(day: .twoDigits)", timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }

    /// Midnight UTC of `day`; nil unless it is a real day (the parser would roll 2026-02-30 into March).
    public static func date(_ day: String) -> Date? {
        guard day.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil, let date = try? Date("\(day)T00:00:00Z", strategy: .iso8601),
              string(date) == day else { return nil }
        return date
    }
}
