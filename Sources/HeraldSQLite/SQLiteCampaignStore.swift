import Foundation
import GRDB
import HeraldDomain
import HeraldStorage

/// The `campaigns` and `campaign_revisions` tables in SQLite.
struct SQLiteCampaignStore: CampaignStore {
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
