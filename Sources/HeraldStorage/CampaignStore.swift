import Foundation
import GRDB
import HeraldDomain
import Synchronization

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

    /// The status people see at `now` (`CampaignStatus(state:schedule:at:)`).
    public func status(at now: Date) -> CampaignStatus {
        CampaignStatus(state: state, schedule: campaign.schedule, at: now)
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

/// A stored campaign as Campaign JSON text, with what the document itself leaves out.
public struct CampaignDocument: Sendable {
    public let id: Int64
    public let status: CampaignStatus
    /// The stored Campaign JSON (without `id` and `status`), which read back when it was stored.
    public let json: String
}

/// Campaigns and their revisions, on either engine. Every change writes a revision and an audit line in
/// the same transaction.
public protocol CampaignStore: Sendable {
    /// Stores a new campaign as revision 1 and returns its id.
    func create(_ campaign: Campaign, state: CampaignState, actor: AuditActor, now: Date) throws -> Int64
    /// Stores several campaigns in one transaction: all of them, or none if any insert fails.
    func createAll(_ campaigns: [Campaign], state: CampaignState, actor: AuditActor, now: Date) throws -> [Int64]
    /// Saves a new version over `expectedRevision`; refuses when someone saved in between.
    /// `state` changes the state in the same revision (saving and publishing at once).
    @discardableResult
    func update(_ campaign: Campaign, expectedRevision: Int, state: CampaignState?, actor: AuditActor, now: Date) throws -> Int
    /// Deletes a draft; returns false when the campaign is not a draft.
    func deleteDraft(id: Int64, actor: AuditActor, now: Date) throws -> Bool
    func find(id: Int64) throws -> StoredCampaign?
    /// Every revision, newest first.
    func revisions(id: Int64) throws -> [CampaignRevision]
    /// A page of the list and the number of campaigns that match.
    func list(_ query: CampaignQuery, now: Date) throws -> (campaigns: [CampaignSummary], total: Int)
    /// Up to `limit` documents of campaigns matching `query` (its sort and page aside) with ids above
    /// `id`, in id order: one read per page, so a long export holds no read transaction open between
    /// pages, and no decoding, since every stored document read back before it was committed.
    func documents(matching query: CampaignQuery, after id: Int64, limit: Int, now: Date) throws -> [CampaignDocument]
    /// What an app's feed may contain: published in-app campaigns, and test ones not yet ended or archived.
    func feedCandidates(appID: Int64) throws -> [StoredCampaign]
}

extension CampaignStore {
    /// Saves a new version over `expectedRevision`, keeping the state.
    @discardableResult
    public func update(_ campaign: Campaign, expectedRevision: Int, actor: AuditActor, now: Date) throws -> Int {
        try update(campaign, expectedRevision: expectedRevision, state: nil, actor: actor, now: now)
    }

    /// Changes only the state (publish, pause, resume, stop, archive), as a new revision.
    public func setState(id: Int64, to state: CampaignState, actor: AuditActor, now: Date) throws {
        guard let current = try find(id: id) else { throw CampaignStoreError.notFound }
        try update(current.campaign, expectedRevision: current.revision, state: state, actor: actor, now: now)
    }
}

/// What one save of a campaign writes (its row's columns, its revision and its audit line), decided the
/// same way by every engine.
struct CampaignSave {
    let campaign: Campaign
    let state: CampaignState
    let startedAt: Date?
    let document: String
    let revision: Int
    /// The audit line's action: `campaign.create`, `campaign.update`, or the change of state (`campaign.publish`, …).
    let action: String

    /// Revision 1 of a new campaign.
    init(creating campaign: Campaign, state: CampaignState, now: Date) throws {
        self.campaign = campaign
        self.state = state
        startedAt = state == .published ? Self.startedAt(campaign, now: now) : nil
        document = try Self.readableDocument(campaign.content)
        revision = 1
        action = "campaign.create"
    }

    /// The next revision over `current`, or `.staleRevision` when `current` is not the one the editor loaded.
    init(updating campaign: Campaign, over current: StoredCampaign, expectedRevision: Int, state newState: CampaignState?, now: Date) throws {
        guard current.revision == expectedRevision else {
            throw CampaignStoreError.staleRevision(expected: expectedRevision, current: current.revision)
        }
        var stored = campaign.content
        stored.app = current.campaign.app
        let state = newState ?? current.state
        self.campaign = campaign
        self.state = state
        startedAt = state == .published
            ? (current.state == .published ? current.startedAt : Self.startedAt(campaign, now: now)) : current.startedAt
        document = try Self.readableDocument(stored)
        revision = current.revision + 1
        action = state == current.state ? "campaign.update" : "campaign.\(Self.verb(for: state, from: current.state))"
    }

    /// The audit line of this save of campaign `id`.
    func line(id: Int64) -> AuditLine {
        revision == 1
            ? .campaignCreated(id: id, name: campaign.name, state: state)
            : .campaignRevised(action, id: id, name: campaign.name, revision: revision)
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

    static let encoder = CampaignJSON.encoder()
    static let decoder = CampaignJSON.decoder()

    static func encode(_ campaign: Campaign) throws -> String {
        String(decoding: try encoder.encode(campaign), as: UTF8.self)
    }

    /// The document to store for `campaign`, after reading it back: what would not decode to the same
    /// campaign (a time outside the calendar Campaign JSON writes, say) is refused before it is committed,
    /// instead of breaking the app's feed, the API and export until someone edits the database. A name
    /// with a NUL is refused too: PostgreSQL's text cannot hold one (the document escapes it, the name
    /// column could not), and validation refuses control characters long before this.
    static func readableDocument(_ campaign: Campaign) throws -> String {
        if campaign.name.holdsNUL {
            throw CampaignStoreError.unreadable(path: "name", reason: "it holds a NUL character, which no engine keeps as text")
        }
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
        if let known = decoded.withLock({ $0.campaigns[document] }) { return known }
        let campaign = try decoder.decode(Campaign.self, from: Data(document.utf8))
        decoded.withLock { $0.keep(campaign, for: document) }
        return campaign
    }

    /// Stored documents already decoded, by their text: a page about a campaign decoded its whole document
    /// on every request, a tenth of a 90-day report's CPU. The text is the key, so a changed campaign is
    /// another entry and databases opened side by side (tests, `herald copy`) cannot mix theirs up.
    private static let decoded = Mutex(DecodedDocuments())

    struct DecodedDocuments {
        /// What the texts kept may weigh in all; past it the table starts again empty.
        static let byteLimit = 16 << 20
        private(set) var campaigns: [String: Campaign] = [:]
        private var bytes = 0

        mutating func keep(_ campaign: Campaign, for document: String) {
            let size = document.utf8.count
            guard campaigns[document] == nil, size <= Self.byteLimit / 4 else { return }
            if bytes + size > Self.byteLimit {
                campaigns.removeAll(keepingCapacity: true)
                bytes = 0
            }
            campaigns[document] = campaign
            bytes += size
        }
    }
}

extension CampaignState {
    /// A stored state; one this version does not know is refused, not guessed.
    init(stored text: String, column: String) throws {
        guard let state = CampaignState(rawValue: text) else { throw UnreadableStoredValue(column: column, value: text) }
        self = state
    }
}

extension CampaignStatus {
    /// A status the listing SQL computed.
    init(listed text: String) throws {
        guard let status = CampaignStatus(rawValue: text) else { throw UnreadableStoredValue(column: "campaigns.status", value: text) }
        self = status
    }
}

extension StoredCampaign {
    /// A `campaigns` row as either engine reads it.
    init(id: Int64, document: String, state: String, revision: Int64, startedAt: Date?, createdAt: Date, updatedAt: Date, updatedBy: String) throws {
        var campaign = try CampaignSave.decode(document)
        campaign.id = id
        self.init(
            campaign: campaign, state: try CampaignState(stored: state, column: "campaigns.state"), revision: Int(revision),
            startedAt: startedAt, createdAt: createdAt, updatedAt: updatedAt, updatedBy: updatedBy)
    }
}

extension CampaignRevision {
    /// A `campaign_revisions` row as either engine reads it.
    init(campaignID: Int64, revision: Int64, state: String, document: String, author: String, createdAt: Date) throws {
        var campaign = try CampaignSave.decode(document)
        campaign.id = campaignID
        self.init(
            revision: Int(revision), state: try CampaignState(stored: state, column: "campaign_revisions.state"), campaign: campaign,
            author: author, createdAt: createdAt)
    }
}

/// A value bound to a query that both engines run, written once (`CampaignListing`).
enum SQLValue {
    case date(Date)
    case integer(Int64)
    case text(String)
}

/// Where the two engines' SQL differs in what the campaign list needs.
struct SQLDialect: Sendable {
    /// The text of the `index`th parameter (from 1).
    let parameter: @Sendable (Int) -> String
    /// An expression of `column` compared and ordered with ASCII letters folded and nothing else (SQLite's NOCASE).
    let folded: @Sendable (String) -> String
    /// `column` matches the LIKE `pattern` (an expression), ASCII letters folded.
    let likeFolded: @Sendable (_ column: String, _ pattern: String) -> String

    static let sqlite = SQLDialect(
        parameter: { _ in "?" }, folded: { "\($0) COLLATE NOCASE" }, likeFolded: { "\($0) LIKE \($1) ESCAPE '\\'" })
    static let postgres = SQLDialect(
        parameter: { "$\($0)" }, folded: { "herald_fold(\($0)) COLLATE \"C\"" },
        likeFolded: { "herald_fold(\($0)) LIKE herald_fold(\($1)) ESCAPE '\\'" })
}

/// The campaign list's SQL, one text for both engines: which campaigns match a query (with their app's
/// name and their status at `now`, computed as `CampaignStatus(state:schedule:at:)` decides, which the
/// storage contract holds it to for every state and every start and end around `now`), in which order,
/// and which page.
struct CampaignListing {
    private(set) var values: [SQLValue] = []
    let dialect: SQLDialect

    init(dialect: SQLDialect) {
        self.dialect = dialect
    }

    private mutating func bind(_ value: SQLValue) -> String {
        values.append(value)
        return dialect.parameter(values.count)
    }

    /// The campaigns matching `query`'s app, status and search, as a subquery named `listed`.
    mutating func matching(_ query: CampaignQuery, now: Date) -> String {
        let ended = bind(.date(now.storedPrecision))
        let notStarted = bind(.date(now.storedPrecision))
        var conditions = ["1 = 1"]
        if let appID = query.appID {
            conditions.append("app_id = \(bind(.integer(appID)))")
        }
        if let status = query.status {
            conditions.append("status = \(bind(.text(status.rawValue)))")
        }
        let search = query.search.trimmingCharacters(in: .whitespaces)
        if search.utf8.contains(0) {
            // No stored name holds NUL (both engines refuse one), and PostgreSQL's text cannot carry it
            // as a parameter: such a search matches nothing.
            conditions.append("1 = 0")
        } else if !search.isEmpty {
            let escaped = search.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            conditions.append(dialect.likeFolded("name", bind(.text("%\(escaped)%"))))
        }
        return """
            (SELECT * FROM (
                SELECT c.*, a.name AS app_name,
                    CASE
                        WHEN c.state = 'draft' THEN 'draft'
                        WHEN c.state = 'archived' THEN 'archived'
                        WHEN c.state = 'stopped' THEN 'ended'
                        WHEN c.end_at IS NOT NULL AND c.end_at <= \(ended) THEN 'ended'
                        WHEN c.state = 'paused' THEN 'paused'
                        WHEN c.start_at IS NOT NULL AND c.start_at > \(notStarted) THEN 'scheduled'
                        ELSE 'running'
                    END AS status
                FROM campaigns c JOIN apps a ON a.id = c.app_id
            ) AS everything WHERE \(conditions.joined(separator: " AND "))) AS listed
            """
    }

    /// How many campaigns match.
    mutating func count(_ query: CampaignQuery, now: Date) -> String {
        "SELECT COUNT(*) FROM \(matching(query, now: now))"
    }

    /// The query's page, in its order; every order ends with the id, so both engines break ties alike.
    mutating func page(_ query: CampaignQuery, now: Date) -> String {
        let order = switch query.sort {
        case .updated: "updated_at DESC, id DESC"
        case .name: "\(dialect.folded("name")) ASC, id ASC"
        case .priority: "priority ASC, updated_at DESC, id DESC"
        case .start: "start_at IS NULL, start_at ASC, id ASC"
        }
        let from = matching(query, now: now)
        // A page far past the end (`?page=9223372036854775807`) is empty, not an overflow.
        let (offset, overflow) = (max(1, query.page) - 1).multipliedReportingOverflow(by: query.pageSize)
        return """
            SELECT id, app_id, app_name, name, state, status, layout, priority, start_at, end_at, updated_at, updated_by
            FROM \(from) ORDER BY \(order) LIMIT \(bind(.integer(Int64(max(0, query.pageSize)))))
            OFFSET \(bind(.integer(overflow ? Int64.max : Int64(max(0, offset)))))
            """
    }

    /// Documents of matching campaigns after `id`, in id order.
    mutating func documents(_ query: CampaignQuery, after id: Int64, limit: Int, now: Date) -> String {
        let from = matching(query, now: now)
        return "SELECT id, status, document FROM \(from) WHERE id > \(bind(.integer(id))) ORDER BY id LIMIT \(bind(.integer(Int64(max(0, limit)))))"
    }
}

extension CampaignSummary {
    /// A row of `CampaignListing.page` as either engine reads it.
    init(
        id: Int64, appID: Int64, appName: String, name: String, state: String, status: String, layout: String, priority: Int64,
        startAt: Date?, endAt: Date?, updatedAt: Date, updatedBy: String
    ) throws {
        self.init(
            id: id, appID: appID, appName: appName, name: name, state: try CampaignState(stored: state, column: "campaigns.state"),
            status: try CampaignStatus(listed: status), layout: layout, priority: Int(priority), startAt: startAt, endAt: endAt,
            updatedAt: updatedAt, updatedBy: updatedBy)
    }
}

/// The `campaigns` and `campaign_revisions` tables in SQLite.
public struct SQLiteCampaignStore: CampaignStore {
    let pool: DatabasePool

    public func create(_ campaign: Campaign, state: CampaignState, actor: AuditActor, now: Date) throws -> Int64 {
        try pool.write { try Self.insert(campaign, state: state, actor: actor, now: now, in: $0) }
    }

    public func createAll(_ campaigns: [Campaign], state: CampaignState, actor: AuditActor, now: Date) throws -> [Int64] {
        try pool.write { db in try campaigns.map { try Self.insert($0, state: state, actor: actor, now: now, in: db) } }
    }

    private static func insert(_ campaign: Campaign, state: CampaignState, actor: AuditActor, now: Date, in db: Database) throws -> Int64 {
        let save = try CampaignSave(creating: campaign, state: state, now: now)
        try db.execute(
            sql: """
                INSERT INTO campaigns (app_id, name, state, layout, priority, start_at, end_at, started_at, test_on_device,
                                       document, revision, created_at, updated_at, updated_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                campaign.app, campaign.name, state.rawValue, campaign.listedLayout, campaign.priority,
                campaign.schedule.start, campaign.schedule.end, save.startedAt,
                campaign.testOnDevice, save.document, save.revision, now, now, actor.label,
            ])
        let id = db.lastInsertedRowID
        try record(save, id: id, actor: actor, now: now, in: db)
        return id
    }

    /// The revision row and the audit line of a save.
    private static func record(_ save: CampaignSave, id: Int64, actor: AuditActor, now: Date, in db: Database) throws {
        try db.execute(
            sql: "INSERT INTO campaign_revisions (campaign_id, revision, state, document, author, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [id, save.revision, save.state.rawValue, save.document, actor.label, now])
        try SQLiteAuditLogStore.record(actor, save.line(id: id), at: now, in: db)
    }

    @discardableResult
    public func update(
        _ campaign: Campaign, expectedRevision: Int, state newState: CampaignState?, actor: AuditActor, now: Date
    ) throws -> Int {
        guard let id = campaign.id else { throw CampaignStoreError.notFound }
        return try pool.write { db in
            guard let current = try Self.find(id: id, in: db) else { throw CampaignStoreError.notFound }
            let save = try CampaignSave(updating: campaign, over: current, expectedRevision: expectedRevision, state: newState, now: now)
            try db.execute(
                sql: """
                    UPDATE campaigns SET name = ?, state = ?, layout = ?, priority = ?, start_at = ?, end_at = ?, started_at = ?,
                        test_on_device = ?, document = ?, revision = ?, updated_at = ?, updated_by = ?
                    WHERE id = ?
                    """,
                arguments: [
                    campaign.name, save.state.rawValue, campaign.listedLayout, campaign.priority, campaign.schedule.start,
                    campaign.schedule.end, save.startedAt, campaign.testOnDevice, save.document, save.revision, now, actor.label, id,
                ])
            try Self.record(save, id: id, actor: actor, now: now, in: db)
            return save.revision
        }
    }

    public func deleteDraft(id: Int64, actor: AuditActor, now: Date) throws -> Bool {
        try pool.write { db in
            guard let current = try Self.find(id: id, in: db), current.state == .draft else { return false }
            try db.execute(sql: "DELETE FROM campaigns WHERE id = ?", arguments: [id])
            try SQLiteAuditLogStore.record(actor, .campaignDeleted(id: id, name: current.campaign.name), at: now, in: db)
            return true
        }
    }

    public func find(id: Int64) throws -> StoredCampaign? {
        try pool.read { try Self.find(id: id, in: $0) }
    }

    public func revisions(id: Int64) throws -> [CampaignRevision] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM campaign_revisions WHERE campaign_id = ? ORDER BY revision DESC", arguments: [id]
            ).map { row in
                try CampaignRevision(
                    campaignID: id, revision: row["revision"], state: row["state"], document: row["document"], author: row["author"],
                    createdAt: row["created_at"])
            }
        }
    }

    public func list(_ query: CampaignQuery, now: Date) throws -> (campaigns: [CampaignSummary], total: Int) {
        try pool.read { db in
            var counting = CampaignListing(dialect: .sqlite)
            let count = counting.count(query, now: now)
            let total = try Int.fetchOne(db, sql: count, arguments: Self.arguments(counting.values)) ?? 0
            var paging = CampaignListing(dialect: .sqlite)
            let page = paging.page(query, now: now)
            let summaries = try Row.fetchAll(db, sql: page, arguments: Self.arguments(paging.values)).map { row in
                try CampaignSummary(
                    id: row["id"], appID: row["app_id"], appName: row["app_name"], name: row["name"], state: row["state"] as String,
                    status: row["status"] as String, layout: row["layout"], priority: row["priority"], startAt: row["start_at"], endAt: row["end_at"],
                    updatedAt: row["updated_at"], updatedBy: row["updated_by"])
            }
            return (summaries, total)
        }
    }

    public func documents(matching query: CampaignQuery, after id: Int64, limit: Int, now: Date) throws -> [CampaignDocument] {
        try pool.read { db in
            var listing = CampaignListing(dialect: .sqlite)
            let sql = listing.documents(query, after: id, limit: limit, now: now)
            return try Row.fetchAll(db, sql: sql, arguments: Self.arguments(listing.values)).map { row in
                CampaignDocument(id: row["id"], status: try CampaignStatus(listed: row["status"]), json: row["document"])
            }
        }
    }

    private static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(values.map { value -> (any DatabaseValueConvertible)? in
            switch value {
            case .date(let date): date
            case .integer(let integer): integer
            case .text(let text): text
            }
        })
    }

    public func feedCandidates(appID: Int64) throws -> [StoredCampaign] {
        try pool.read { db in
            let ids = try Int64.fetchAll(
                db, sql: """
                    SELECT id FROM campaigns WHERE app_id = ? AND layout != ?
                    AND (state = 'published' OR (test_on_device = 1 AND state IN ('draft', 'published', 'paused')))
                    ORDER BY id
                    """,
                arguments: [appID, Campaign.pushLayout])
            return try ids.compactMap { try Self.find(id: $0, in: db) }
        }
    }

    static func find(id: Int64, in db: Database) throws -> StoredCampaign? {
        try Row.fetchOne(db, sql: "SELECT * FROM campaigns WHERE id = ?", arguments: [id]).map { row in
            try StoredCampaign(
                id: row["id"], document: row["document"], state: row["state"], revision: row["revision"], startedAt: row["started_at"],
                createdAt: row["created_at"], updatedAt: row["updated_at"], updatedBy: row["updated_by"])
        }
    }
}
