import Foundation
import HeraldStorage
import HeraldDomain
import PostgresNIO

/// Campaigns and their revisions on PostgreSQL.
struct PostgresCampaignStore: CampaignStore {
    let database: PostgresAppDatabase

    static let columns = "id, document, state, revision, started_at, created_at, updated_at, updated_by"

    /// A row of `columns` as a stored campaign.
    static func stored(_ row: PostgresRow) throws -> StoredCampaign {
        let (id, document, state, revision, startedAt, createdAt, updatedAt, updatedBy) = try row.decode(
            (Int64, String, String, Int64, Date?, Date, Date, String).self)
        return try StoredCampaign(
            id: id, document: document, state: state, revision: revision, startedAt: startedAt, createdAt: createdAt, updatedAt: updatedAt,
            updatedBy: updatedBy)
    }

    func create(_ campaign: Campaign, state: CampaignState, actor: AuditActor, now: Date) throws -> Int64 {
        try database.write { try Self.insert(campaign, state: state, actor: actor, now: now, in: $0) }
    }

    func createAll(_ campaigns: [Campaign], state: CampaignState, actor: AuditActor, now: Date) throws -> [Int64] {
        try database.write { session in try campaigns.map { try Self.insert($0, state: state, actor: actor, now: now, in: session) } }
    }

    private static func insert(_ campaign: Campaign, state: CampaignState, actor: AuditActor, now: Date, in session: PostgresSession) throws -> Int64 {
        let save = try CampaignSave(creating: campaign, state: state, now: now)
        let stamp = now.storedPrecision
        guard let id = try session.one(
            """
            INSERT INTO campaigns (app_id, name, state, layout, priority, start_at, end_at, started_at, test_on_device,
                                   document, revision, created_at, updated_at, updated_by)
            VALUES (\(campaign.app), \(campaign.name), \(state.rawValue), \(campaign.listedLayout), \(Int64(campaign.priority)),
                    \(campaign.schedule.start?.storedPrecision), \(campaign.schedule.end?.storedPrecision), \(save.startedAt?.storedPrecision),
                    \(campaign.testOnDevice), \(save.document), \(Int64(save.revision)), \(stamp), \(stamp), \(actor.label))
            RETURNING id
            """, as: Int64.self)
        else { throw UnreadableStoredValue(column: "campaigns.id", value: campaign.name) }
        try record(save, id: id, actor: actor, now: now, in: session)
        return id
    }

    /// The revision row and the audit line of a save.
    private static func record(_ save: CampaignSave, id: Int64, actor: AuditActor, now: Date, in session: PostgresSession) throws {
        try session.execute(
            """
            INSERT INTO campaign_revisions (campaign_id, revision, state, document, author, created_at)
            VALUES (\(id), \(Int64(save.revision)), \(save.state.rawValue), \(save.document), \(actor.label), \(now.storedPrecision))
            """)
        try PostgresAuditLogStore.record(actor, save.line(id: id), at: now, in: session)
    }

    @discardableResult
    func update(_ campaign: Campaign, expectedRevision: Int, state newState: CampaignState?, actor: AuditActor, now: Date) throws -> Int {
        guard let id = campaign.id else { throw CampaignStoreError.notFound }
        return try database.write { session in
            // Locked until commit: two instances saving over one revision cannot both pass the check.
            guard let current = try session.rows("SELECT \(unescaped: Self.columns) FROM campaigns WHERE id = \(id) FOR UPDATE").first.map(Self.stored)
            else { throw CampaignStoreError.notFound }
            let save = try CampaignSave(updating: campaign, over: current, expectedRevision: expectedRevision, state: newState, now: now)
            try session.execute(
                """
                UPDATE campaigns SET name = \(campaign.name), state = \(save.state.rawValue), layout = \(campaign.listedLayout),
                    priority = \(Int64(campaign.priority)), start_at = \(campaign.schedule.start?.storedPrecision),
                    end_at = \(campaign.schedule.end?.storedPrecision), started_at = \(save.startedAt?.storedPrecision),
                    test_on_device = \(campaign.testOnDevice), document = \(save.document), revision = \(Int64(save.revision)),
                    updated_at = \(now.storedPrecision), updated_by = \(actor.label)
                WHERE id = \(id)
                """)
            try Self.record(save, id: id, actor: actor, now: now, in: session)
            return save.revision
        }
    }

    func deleteDraft(id: Int64, actor: AuditActor, now: Date) throws -> Bool {
        try database.write { session in
            guard let name = try session.one("DELETE FROM campaigns WHERE id = \(id) AND state = 'draft' RETURNING name", as: String.self) else {
                return false
            }
            try PostgresAuditLogStore.record(actor, .campaignDeleted(id: id, name: name), at: now, in: session)
            return true
        }
    }

    func find(id: Int64) throws -> StoredCampaign? {
        try database.read { try $0.rows("SELECT \(unescaped: Self.columns) FROM campaigns WHERE id = \(id)").first.map(Self.stored) }
    }

    func revisions(id: Int64) throws -> [CampaignRevision] {
        try database.read { session in
            try session.rows(
                """
                SELECT revision, state, document, author, created_at FROM campaign_revisions WHERE campaign_id = \(id)
                ORDER BY revision DESC
                """
            ).map { row in
                let (revision, state, document, author, createdAt) = try row.decode((Int64, String, String, String, Date).self)
                return try CampaignRevision(campaignID: id, revision: revision, state: state, document: document, author: author, createdAt: createdAt)
            }
        }
    }

    func list(_ query: CampaignQuery, now: Date) throws -> (campaigns: [CampaignSummary], total: Int) {
        try database.read { session in
            var counting = CampaignListing(dialect: .postgres)
            let count = counting.count(query, now: now)
            let total = try session.one(Self.query(count, counting.values), as: Int64.self) ?? 0
            var paging = CampaignListing(dialect: .postgres)
            let page = paging.page(query, now: now)
            let summaries = try session.rows(Self.query(page, paging.values)).map { row in
                let (id, appID, appName, name, state, status, layout, priority, startAt, endAt, updatedAt, updatedBy) = try row.decode(
                    (Int64, Int64, String, String, String, String, String, Int64, Date?, Date?, Date, String).self)
                return try CampaignSummary(
                    id: id, appID: appID, appName: appName, name: name, state: state, status: status, layout: layout, priority: priority,
                    startAt: startAt, endAt: endAt, updatedAt: updatedAt, updatedBy: updatedBy)
            }
            return (summaries, Int(total))
        }
    }

    func documents(matching query: CampaignQuery, after id: Int64, limit: Int, now: Date) throws -> [CampaignDocument] {
        try database.read { session in
            var listing = CampaignListing(dialect: .postgres)
            let sql = listing.documents(query, after: id, limit: limit, now: now)
            return try session.rows(Self.query(sql, listing.values)).map { row in
                let (id, status, document) = try row.decode((Int64, String, String).self)
                return CampaignDocument(id: id, status: try CampaignStatus(listed: status), json: document)
            }
        }
    }

    /// `sql` (with `$1`, `$2`, … for `values`, in order) and its values bound as parameters.
    private static func query(_ sql: String, _ values: [SQLValue]) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .date(let date): bindings.append(date)
            case .integer(let integer): bindings.append(integer)
            case .text(let text): bindings.append(text)
            }
        }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    func feedCandidates(appID: Int64) throws -> [StoredCampaign] {
        try database.read { session in
            try session.rows(
                """
                SELECT \(unescaped: Self.columns) FROM campaigns WHERE app_id = \(appID) AND layout <> \(Campaign.pushLayout)
                AND (state = 'published' OR (test_on_device AND state IN ('draft', 'published', 'paused')))
                ORDER BY id
                """
            ).map(Self.stored)
        }
    }
}
