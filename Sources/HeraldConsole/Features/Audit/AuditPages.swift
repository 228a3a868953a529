import HeraldHTTP

/// `/audit`: every change, newest first.
struct AuditPages: Sendable {
    let services: Services
    static let pageSize = 50

    struct EntryRow: Sendable {
        let time: String
        let actor: String
        let action: String
        let subject: String
        let details: String
    }

    struct AuditList: Sendable {
        let entries: [EntryRow]
        let pagination: PaginationView?
    }

    func index(_ context: RequestContext) throws -> Response {
        let log = services.database.auditLog
        let total = try log.count()
        let lastPage = max(1, (total + Self.pageSize - 1) / Self.pageSize)
        let page = min(max(1, context.request.query["page"].flatMap(Int.init) ?? 1), lastPage)
        let entries = try log.page(offset: (page - 1) * Self.pageSize, limit: Self.pageSize).map {
            EntryRow(time: DisplayTime.dateTime($0.occurredAt), actor: $0.actor, action: $0.action, subject: $0.subject, details: $0.details)
        }
        let model = AuditList(
            entries: entries,
            pagination: PaginationView.make(page: page, pageSize: Self.pageSize, total: total, localizer: context.localizer) { "/audit?page=\($0)" })
        return try services.page(.audit, title: "Audit log", model: model, context: context)
    }
}
