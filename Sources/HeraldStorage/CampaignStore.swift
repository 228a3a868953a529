import Foundation
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

    package init(id: Int64, status: CampaignStatus, json: String) {
        self.id = id
        self.status = status
        self.json = json
    }
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
package struct CampaignSave {
    package let campaign: Campaign
    package let state: CampaignState
    package let startedAt: Date?
    package let document: String
    package let revision: Int
    /// The audit line's action: `campaign.create`, `campaign.update`, or the change of state (`campaign.publish`, …).
    package let action: String

    /// Revision 1 of a new campaign.
    package init(creating campaign: Campaign, state: CampaignState, now: Date) throws {
        self.campaign = campaign
        self.state = state
        startedAt = state == .published ? Self.startedAt(campaign, now: now) : nil
        document = try Self.readableDocument(campaign.content)
        revision = 1
        action = "campaign.create"
    }

    /// The next revision over `current`, or `.staleRevision` when `current` is not the one the editor loaded.
    package init(updating campaign: Campaign, over current: StoredCampaign, expectedRevision: Int, state newState: CampaignState?, now: Date) throws {
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
    package func line(id: Int64) -> AuditLine {
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

    package static let encoder = CampaignJSON.encoder()
    package static let decoder = CampaignJSON.decoder()

    package static func encode(_ campaign: Campaign) throws -> String {
        String(decoding: try encoder.encode(campaign), as: UTF8.self)
    }

    /// The document to store for `campaign`, after reading it back: what would not decode to the same
    /// campaign (a time outside the calendar Campaign JSON writes, say) is refused before it is committed,
    /// instead of breaking the app's feed, the API and export until someone edits the database. A name
    /// with a NUL is refused too: PostgreSQL's text cannot hold one (the document escapes it, the name
    /// column could not), and validation refuses control characters long before this.
    package static func readableDocument(_ campaign: Campaign) throws -> String {
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

    package static func decode(_ document: String) throws -> Campaign {
        if let known = decoded.withLock({ $0.campaigns[document] }) { return known }
        let campaign = try decoder.decode(Campaign.self, from: Data(document.utf8))
        decoded.withLock { $0.keep(campaign, for: document) }
        return campaign
    }

    /// Stored documents already decoded, by their text: a page about a campaign decoded its whole document
    /// on every request, a tenth of a 90-day report's CPU. The text is the key, so a changed campaign is
    /// another entry and databases opened side by side (tests, `herald copy`) cannot mix theirs up.
    private static let decoded = Mutex(DecodedDocuments())

    package struct DecodedDocuments {
        /// What the texts kept may weigh in all; past it the table starts again empty.
        package static let byteLimit = 16 << 20
        private(set) var campaigns: [String: Campaign] = [:]
        private var bytes = 0

        package mutating func keep(_ campaign: Campaign, for document: String) {
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
    package init(stored text: String, column: String) throws {
        guard let state = CampaignState(rawValue: text) else { throw UnreadableStoredValue(column: column, value: text) }
        self = state
    }
}

extension CampaignStatus {
    /// A status the listing SQL computed.
    package init(listed text: String) throws {
        guard let status = CampaignStatus(rawValue: text) else { throw UnreadableStoredValue(column: "campaigns.status", value: text) }
        self = status
    }
}

extension StoredCampaign {
    /// A `campaigns` row as either engine reads it.
    package init(id: Int64, document: String, state: String, revision: Int64, startedAt: Date?, createdAt: Date, updatedAt: Date, updatedBy: String) throws {
        var campaign = try CampaignSave.decode(document)
        campaign.id = id
        self.init(
            campaign: campaign, state: try CampaignState(stored: state, column: "campaigns.state"), revision: Int(revision),
            startedAt: startedAt, createdAt: createdAt, updatedAt: updatedAt, updatedBy: updatedBy)
    }
}

extension CampaignRevision {
    /// A `campaign_revisions` row as either engine reads it.
    package init(campaignID: Int64, revision: Int64, state: String, document: String, author: String, createdAt: Date) throws {
        var campaign = try CampaignSave.decode(document)
        campaign.id = campaignID
        self.init(
            revision: Int(revision), state: try CampaignState(stored: state, column: "campaign_revisions.state"), campaign: campaign,
            author: author, createdAt: createdAt)
    }
}

/// A value bound to a query that both engines run, written once (`CampaignListing`).
package enum SQLValue {
    case date(Date)
    case integer(Int64)
    case text(String)
}

/// Where the two engines' SQL differs in what the campaign list needs.
package struct SQLDialect: Sendable {
    /// The text of the `index`th parameter (from 1).
    package let parameter: @Sendable (Int) -> String
    /// An expression of `column` compared and ordered with ASCII letters folded and nothing else (SQLite's NOCASE).
    package let folded: @Sendable (String) -> String
    /// `column` matches the LIKE `pattern` (an expression), ASCII letters folded.
    package let likeFolded: @Sendable (_ column: String, _ pattern: String) -> String

    package static let sqlite = SQLDialect(
        parameter: { _ in "?" }, folded: { "\($0) COLLATE NOCASE" }, likeFolded: { "\($0) LIKE \($1) ESCAPE '\\'" })
    package static let postgres = SQLDialect(
        parameter: { "$\($0)" }, folded: { "herald_fold(\($0)) COLLATE \"C\"" },
        likeFolded: { "herald_fold(\($0)) LIKE herald_fold(\($1)) ESCAPE '\\'" })
}

/// The campaign list's SQL, one text for both engines: which campaigns match a query (with their app's
/// name and their status at `now`, computed as `CampaignStatus(state:schedule:at:)` decides, which the
/// storage contract holds it to for every state and every start and end around `now`), in which order,
/// and which page.
package struct CampaignListing {
    package private(set) var values: [SQLValue] = []
    package let dialect: SQLDialect

    package init(dialect: SQLDialect) {
        self.dialect = dialect
    }

    private mutating func bind(_ value: SQLValue) -> String {
        values.append(value)
        return dialect.parameter(values.count)
    }

    /// The campaigns matching `query`'s app, status and search, as a subquery named `listed`.
    package mutating func matching(_ query: CampaignQuery, now: Date) -> String {
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
    package mutating func count(_ query: CampaignQuery, now: Date) -> String {
        "SELECT COUNT(*) FROM \(matching(query, now: now))"
    }

    /// The query's page, in its order; every order ends with the id, so both engines break ties alike.
    package mutating func page(_ query: CampaignQuery, now: Date) -> String {
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
    package mutating func documents(_ query: CampaignQuery, after id: Int64, limit: Int, now: Date) -> String {
        let from = matching(query, now: now)
        return "SELECT id, status, document FROM \(from) WHERE id > \(bind(.integer(id))) ORDER BY id LIMIT \(bind(.integer(Int64(max(0, limit)))))"
    }
}

extension CampaignSummary {
    /// A row of `CampaignListing.page` as either engine reads it.
    package init(
        id: Int64, appID: Int64, appName: String, name: String, state: String, status: String, layout: String, priority: Int64,
        startAt: Date?, endAt: Date?, updatedAt: Date, updatedBy: String
    ) throws {
        self.init(
            id: id, appID: appID, appName: appName, name: name, state: try CampaignState(stored: state, column: "campaigns.state"),
            status: try CampaignStatus(listed: status), layout: layout, priority: Int(priority), startAt: startAt, endAt: endAt,
            updatedAt: updatedAt, updatedBy: updatedBy)
    }
}
