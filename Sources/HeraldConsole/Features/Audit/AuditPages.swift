import HeraldDomain
import HeraldHTTP

/// `/audit`: every change, newest first.
struct AuditPages: Sendable {
    let services: Services
    static let pageSize = 50

    struct EntryRow: Sendable {
        let time: String
        /// For `<time datetime>`.
        let timeISO: String
        let actor: String
        /// The stored action code (`user.role_change`), kept as the label's title.
        let action: String
        /// The action in the reader's language.
        let actionLabel: String
        let subject: String
        let details: String
    }

    struct AuditList: Sendable {
        let entries: [EntryRow]
        let pagination: PaginationView?
    }

    func index(_ context: RequestContext) throws -> Response {
        let localizer = context.localizer
        let log = services.database.auditLog
        let total = try log.count()
        let lastPage = max(1, (total + Self.pageSize - 1) / Self.pageSize)
        let page = min(max(1, context.request.query["page"].flatMap(Int.init) ?? 1), lastPage)
        let entries = try log.page(offset: (page - 1) * Self.pageSize, limit: Self.pageSize).map {
            EntryRow(time: localizer.dateTime($0.occurredAt), timeISO: UTCTime.rfc3339($0.occurredAt), actor: localizer.actor($0.actor),
                     action: $0.action, actionLabel: Self.label(of: $0.action, localizer), subject: $0.subject, details: $0.details)
        }
        let model = AuditList(
            entries: entries,
            pagination: PaginationView.make(page: page, pageSize: Self.pageSize, total: total, localizer: context.localizer) { "/audit?page=\($0)" })
        return try services.page(.audit, title: localizer("audit.title"), model: model, context: context)
    }

    /// An action code as people read it (`user.role_change` is `audit.actions.user_role_change`); a code
    /// no catalog knows (written by a newer Herald) is shown as it is stored.
    static func label(of action: String, _ localizer: Localizer) -> String {
        let key = "audit.actions." + action.replacingOccurrences(of: ".", with: "_")
        let safe = action.utf8.count <= 64 && action.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ".") }
        return safe && localizer.has(key) ? localizer(key) : action
    }
}
