import Foundation
import GRDB
import HeraldDomain

/// What people did with a campaign; the status shown also depends on the schedule (`status(at:)`).
public enum CampaignState: String, Sendable, Codable, CaseIterable {
    case draft, published, paused, stopped, archived

    public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}

/// A campaign as stored, with its state and revision.
public struct StoredCampaign: Sendable, Equatable {
    public var campaign: Campaign
    public var state: CampaignState
    public var revision: Int
    public var startedAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
    public var updatedBy: String

    public var id: Int64 { campaign.id ?? 0 }

    /// The status people see: published campaigns are scheduled, running or ended by their schedule.
    public func status(at now: Date) -> CampaignStatus {
        let schedule = campaign.schedule
        let endPassed = schedule.end.map { $0 <= now } ?? false
        switch state {
        case .draft: return .draft
        case .archived: return .archived
        case .stopped: return .ended
        case .paused: return endPassed ? .ended : .paused
        case .published:
            if endPassed { return .ended }
            if let start = schedule.start, start > now { return .scheduled }
            return .running
        }
    }
}

/// One saved version of a campaign.
public struct CampaignRevision: Sendable, Equatable {
    public var revision: Int
    public var state: CampaignState
    public var campaign: Campaign
    public var author: String
    public var createdAt: Date
}

/// A row of the campaign list.
public struct CampaignSummary: Sendable, Equatable {
    public var id: Int64
    public var appID: Int64
    public var appName: String
    public var name: String
    public var state: CampaignState
    public var status: CampaignStatus
    public var layout: String
    public var priority: Int
    public var startAt: Date?
    public var endAt: Date?
    public var updatedAt: Date
    public var updatedBy: String
}

/// How to filter, sort and page the campaign list.
public struct CampaignQuery: Sendable {
    public enum Sort: String, Sendable, CaseIterable {
        case updated, name, priority, start
    }

    public var appID: Int64?
    public var status: CampaignStatus?
    public var search: String = ""
    public var sort: Sort = .updated
    public var page: Int = 1
    public var pageSize: Int = 25

    public init() {}
}

public enum CampaignStoreError: Error, Equatable {
    /// Someone saved a newer revision since the editor loaded `expected`.
    case staleRevision(expected: Int, current: Int)
    case notFound
    /// The campaign would not read back as it was given (why, and where): nothing was stored. Validation
    /// should refuse such a campaign first; this is the last line, so no app's feed can be poisoned.
    case unreadable(path: String, reason: String)
}

/// The `campaigns` and `campaign_revisions` tables. Every change writes a revision and an audit line
/// in the same transaction.
public struct CampaignStore: Sendable {
    let pool: DatabasePool

    static let encoder = CampaignJSON.encoder()
    static let decoder = CampaignJSON.decoder()

    /// Stores a new campaign as revision 1 and returns its id.
    public func create(_ campaign: Campaign, state: CampaignState, actor: AuditActor, now: Date) throws -> Int64 {
        try pool.write { try Self.insert(campaign, state: state, actor: actor, now: now, in: $0) }
    }

    /// Stores several campaigns in one transaction: all of them, or none if any insert fails.
    public func createAll(_ campaigns: [Campaign], state: CampaignState, actor: AuditActor, now: Date) throws -> [Int64] {
        try pool.write { db in try campaigns.map { try Self.insert($0, state: state, actor: actor, now: now, in: db) } }
    }

    private static func insert(_ campaign: Campaign, state: CampaignState, actor: AuditActor, now: Date, in db: Database) throws -> Int64 {
        let document = try readableDocument(campaign.content)
        try db.execute(
            sql: """
                INSERT INTO campaigns (app_id, name, state, layout, priority, start_at, end_at, started_at, test_on_device,
                                       document, revision, created_at, updated_at, updated_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
                """,
            arguments: [
                campaign.app, campaign.name, state.rawValue, campaign.listedLayout, campaign.priority,
                campaign.schedule.start, campaign.schedule.end, state == .published ? startedAt(campaign, now: now) : nil,
                campaign.testOnDevice, document, now, now, actor.label,
            ])
        let id = db.lastInsertedRowID
        try recordRevision(id: id, revision: 1, state: state, document: document, actor: actor, now: now, in: db)
        try SQLiteAuditLogStore.record(actor, action: "campaign.create", subject: "campaign \(id) \(campaign.name)", details: state.rawValue, at: now, in: db)
        return id
    }

    /// Saves a new version over `expectedRevision`; refuses when someone saved in between.
    /// `state` changes the state in the same revision (saving and publishing at once).
    @discardableResult
    public func update(
        _ campaign: Campaign, expectedRevision: Int, state newState: CampaignState? = nil, actor: AuditActor, now: Date
    ) throws -> Int {
        guard let id = campaign.id else { throw CampaignStoreError.notFound }
        return try pool.write { db in
            guard let current = try Self.find(id: id, in: db) else { throw CampaignStoreError.notFound }
            guard current.revision == expectedRevision else {
                throw CampaignStoreError.staleRevision(expected: expectedRevision, current: current.revision)
            }
            var stored = campaign.content
            stored.app = current.campaign.app
            let state = newState ?? current.state
            let startedAt = state == .published
                ? (current.state == .published ? current.startedAt : Self.startedAt(campaign, now: now)) : current.startedAt
            let document = try Self.readableDocument(stored)
            let revision = current.revision + 1
            try db.execute(
                sql: """
                    UPDATE campaigns SET name = ?, state = ?, layout = ?, priority = ?, start_at = ?, end_at = ?, started_at = ?,
                        test_on_device = ?, document = ?, revision = ?, updated_at = ?, updated_by = ?
                    WHERE id = ?
                    """,
                arguments: [
                    campaign.name, state.rawValue, campaign.listedLayout, campaign.priority, campaign.schedule.start,
                    campaign.schedule.end, startedAt, campaign.testOnDevice, document, revision, now, actor.label, id,
                ])
            try Self.recordRevision(id: id, revision: revision, state: state, document: document, actor: actor, now: now, in: db)
            let action = state == current.state ? "campaign.update" : "campaign.\(Self.verb(for: state, from: current.state))"
            try SQLiteAuditLogStore.record(actor, action: action, subject: "campaign \(id) \(campaign.name)", details: "revision \(revision)", at: now, in: db)
            return revision
        }
    }

    /// Changes only the state (publish, pause, resume, stop, archive), as a new revision.
    public func setState(id: Int64, to state: CampaignState, actor: AuditActor, now: Date) throws {
        guard let current = try find(id: id) else { throw CampaignStoreError.notFound }
        try update(current.campaign, expectedRevision: current.revision, state: state, actor: actor, now: now)
    }

    /// Deletes a draft; returns false when the campaign is not a draft.
    public func deleteDraft(id: Int64, actor: AuditActor, now: Date) throws -> Bool {
        try pool.write { db in
            guard let current = try Self.find(id: id, in: db), current.state == .draft else { return false }
            try db.execute(sql: "DELETE FROM campaigns WHERE id = ?", arguments: [id])
            try SQLiteAuditLogStore.record(actor, action: "campaign.delete", subject: "campaign \(id) \(current.campaign.name)", details: "", at: now, in: db)
            return true
        }
    }

    public func find(id: Int64) throws -> StoredCampaign? {
        try pool.read { try Self.find(id: id, in: $0) }
    }

    /// Every revision, newest first.
    public func revisions(id: Int64) throws -> [CampaignRevision] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM campaign_revisions WHERE campaign_id = ? ORDER BY revision DESC", arguments: [id]
            ).map { row in
                var campaign = try Self.decode(row["document"])
                campaign.id = id
                return CampaignRevision(
                    revision: row["revision"], state: CampaignState(rawValue: row["state"]) ?? .draft, campaign: campaign,
                    author: row["author"], createdAt: row["created_at"])
            }
        }
    }

    /// A page of the list and the number of campaigns that match.
    public func list(_ query: CampaignQuery, now: Date) throws -> (campaigns: [CampaignSummary], total: Int) {
        try pool.read { db in
            let (filtered, arguments) = Self.matching(query, now: now)
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (\(filtered))", arguments: arguments) ?? 0
            let order = switch query.sort {
            case .updated: "updated_at DESC, id DESC"
            case .name: "name COLLATE NOCASE ASC, id ASC"
            case .priority: "priority ASC, updated_at DESC"
            case .start: "start_at IS NULL, start_at ASC, id ASC"
            }
            // A page far past the end (`?page=9223372036854775807`) is empty, not an overflow.
            let (offset, overflow) = (max(1, query.page) - 1).multipliedReportingOverflow(by: query.pageSize)
            let rows = try Row.fetchAll(
                db, sql: "\(filtered) ORDER BY \(order) LIMIT ? OFFSET ?",
                arguments: arguments + [query.pageSize, overflow ? Int.max : offset])
            let summaries = rows.map { row in
                CampaignSummary(
                    id: row["id"], appID: row["app_id"], appName: row["app_name"], name: row["name"],
                    state: CampaignState(rawValue: row["state"]) ?? .draft,
                    status: CampaignStatus(rawValue: row["status"]) ?? .draft, layout: row["layout"], priority: row["priority"],
                    startAt: row["start_at"], endAt: row["end_at"], updatedAt: row["updated_at"], updatedBy: row["updated_by"])
            }
            return (summaries, total)
        }
    }

    /// A stored campaign as Campaign JSON text, with what the document itself leaves out.
    public struct Document: Sendable {
        public let id: Int64
        public let status: CampaignStatus
        /// The stored Campaign JSON (without `id` and `status`), which read back when it was stored.
        public let json: String
    }

    /// Up to `limit` documents of campaigns matching `query` (its sort and page aside) with ids above
    /// `id`, in id order: one read per page, so a long export holds no read transaction open between
    /// pages, and no decoding, since every stored document read back before it was committed.
    public func documents(matching query: CampaignQuery, after id: Int64, limit: Int, now: Date) throws -> [Document] {
        try pool.read { db in
            let (filtered, arguments) = Self.matching(query, now: now)
            return try Row.fetchAll(
                db, sql: "SELECT id, status, document FROM (\(filtered)) WHERE id > ? ORDER BY id LIMIT ?", arguments: arguments + [id, limit]
            ).map { row in
                Document(id: row["id"], status: CampaignStatus(rawValue: row["status"]) ?? .draft, json: row["document"])
            }
        }
    }

    /// The campaigns (with their app's name and their status at `now`) that match `query`'s app,
    /// status and search, as SQL and its arguments.
    private static func matching(_ query: CampaignQuery, now: Date) -> (sql: String, arguments: StatementArguments) {
        var conditions = ["1"]
        var arguments: StatementArguments = [now, now]
        if let appID = query.appID {
            conditions.append("app_id = ?")
            _ = arguments.append(contentsOf: [appID])
        }
        if let status = query.status {
            conditions.append("status = ?")
            _ = arguments.append(contentsOf: [status.rawValue])
        }
        let search = query.search.trimmingCharacters(in: .whitespaces)
        if !search.isEmpty {
            conditions.append("name LIKE ? ESCAPE '\\'")
            let escaped = search.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            _ = arguments.append(contentsOf: ["%\(escaped)%"])
        }
        let sql = """
            WITH listed AS (
                SELECT c.*, a.name AS app_name,
                    CASE
                        WHEN c.state = 'draft' THEN 'draft'
                        WHEN c.state = 'archived' THEN 'archived'
                        WHEN c.state = 'stopped' THEN 'ended'
                        WHEN c.end_at IS NOT NULL AND c.end_at <= ? THEN 'ended'
                        WHEN c.state = 'paused' THEN 'paused'
                        WHEN c.start_at IS NOT NULL AND c.start_at > ? THEN 'scheduled'
                        ELSE 'running'
                    END AS status
                FROM campaigns c JOIN apps a ON a.id = c.app_id
            )
            SELECT * FROM listed WHERE \(conditions.joined(separator: " AND "))
            """
        return (sql, arguments)
    }

    /// What an app's feed may contain: published in-app campaigns, and test ones not yet ended or archived.
    public func feedCandidates(appID: Int64) throws -> [StoredCampaign] {
        try pool.read { db in
            let ids = try Int64.fetchAll(
                db, sql: """
                    SELECT id FROM campaigns WHERE app_id = ? AND layout != ?
                    AND (state = 'published' OR (test_on_device = 1 AND state IN ('draft', 'published', 'paused')))
                    """,
                arguments: [appID, Campaign.pushLayout])
            return try ids.compactMap { try Self.find(id: $0, in: db) }
        }
    }

    static func find(id: Int64, in db: Database) throws -> StoredCampaign? {
        try Row.fetchOne(db, sql: "SELECT * FROM campaigns WHERE id = ?", arguments: [id]).map(stored)
    }

    /// A `campaigns` row as a stored campaign.
    private static func stored(_ row: Row) throws -> StoredCampaign {
        var campaign = try decode(row["document"])
        campaign.id = row["id"]
        return StoredCampaign(
            campaign: campaign, state: CampaignState(rawValue: row["state"]) ?? .draft, revision: row["revision"],
            startedAt: row["started_at"], createdAt: row["created_at"], updatedAt: row["updated_at"], updatedBy: row["updated_by"])
    }

    private static func recordRevision(
        id: Int64, revision: Int, state: CampaignState, document: String, actor: AuditActor, now: Date, in db: Database
    ) throws {
        try db.execute(
            sql: "INSERT INTO campaign_revisions (campaign_id, revision, state, document, author, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [id, revision, state.rawValue, document, actor.label, now])
    }

    /// Published now, or at its scheduled start if that is later.
    private static func startedAt(_ campaign: Campaign, now: Date) -> Date {
        max(now, campaign.schedule.start ?? now)
    }

    private static func verb(for state: CampaignState, from previous: CampaignState) -> String {
        switch (previous, state) {
        case (.paused, .published): "resume"
        case (_, .published): "publish"
        case (_, .paused): "pause"
        case (_, .stopped): "stop"
        case (_, .archived): "archive"
        case (_, .draft): "unpublish"
        }
    }

    static func encode(_ campaign: Campaign) throws -> String {
        String(decoding: try encoder.encode(campaign), as: UTF8.self)
    }

    /// The document to store for `campaign`, after reading it back: what would not decode to the same
    /// campaign (a time outside the calendar Campaign JSON writes, say) is refused before it is committed,
    /// instead of breaking the app's feed, the API and export until someone edits the database.
    static func readableDocument(_ campaign: Campaign) throws -> String {
        let document = try encode(campaign)
        let readBack: Campaign
        do {
            readBack = try decode(document)
        } catch let error as DecodingError {
            throw CampaignStoreError.unreadable(path: error.path, reason: error.reason)
        }
        guard readBack == campaign else {
            throw CampaignStoreError.unreadable(path: "", reason: "it would read back differently from what was sent")
        }
        return document
    }

    static func decode(_ document: String) throws -> Campaign {
        try decoder.decode(Campaign.self, from: Data(document.utf8))
    }
}
