import HeraldDomain
import HeraldHTTP
import HeraldStorage

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
        /// Whether subject and details are in the reader's language; older lines show the English they were stored in.
        let translated: Bool
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
        let entries = try log.page(offset: (page - 1) * Self.pageSize, limit: Self.pageSize).map { entry in
            let words = Self.words(of: entry, localizer)
            return EntryRow(
                time: localizer.dateTime(entry.occurredAt), timeISO: UTCTime.rfc3339(entry.occurredAt), actor: localizer.actor(entry.actor),
                action: entry.action, actionLabel: Self.label(of: entry.action, localizer), subject: words?.subject ?? entry.subject,
                details: words?.details ?? entry.details, translated: words != nil)
        }
        let model = AuditList(
            entries: entries,
            pagination: PaginationView.make(page: page, pageSize: Self.pageSize, total: total, localizer: context.localizer) { "/audit?page=\($0)" })
        return try services.page(.audit, title: localizer("audit.title"), model: model, context: context)
    }

    /// A line's subject and details in the reader's language, from the arguments it was stored with; nil for
    /// a line stored without them (before Herald kept them), or with words no catalog has (a newer Herald's).
    static func words(of entry: AuditEntry, _ localizer: Localizer) -> (subject: String, details: String)? {
        guard let stored = AuditLine.stored(entry.arguments),
              let subject = sentence("audit.lines.subjects." + stored.subjectKind, stored.arguments, localizer) else { return nil }
        guard let detailsKind = stored.detailsKind else { return (subject, "") }
        guard let details = sentence("audit.lines.details." + detailsKind, stored.arguments, localizer) else { return nil }
        return (subject, details)
    }

    /// The catalog's sentence `key` filled with `arguments`: text isolated, numbers in the language's digits,
    /// console words by their keys; in the plural form for `count` when there is one.
    private static func sentence(_ key: String, _ arguments: [String: AuditArgument], _ localizer: Localizer) -> String? {
        guard isCatalogKey(key), let english = localizer.english.entries[key] else { return nil }
        // Every catalog's sentence has English's arguments (LocalizationTests): a line missing one is not words.
        let needed: Set<String> = switch english {
        case .text(let text): StringCatalog.arguments(in: text)
        case .plural(let forms): StringCatalog.arguments(in: forms[.other] ?? "")
        }
        guard needed.isSubset(of: arguments.keys) else { return nil }
        func word(_ key: String) -> String? { isCatalogKey(key) && localizer.has(key) ? localizer(key) : nil }
        var filled: [String: String] = [:]
        var count: Int?
        for (name, argument) in arguments {
            switch argument {
            case .text(let text): filled[name] = Localizer.isolated(text)
            case .number(let number):
                filled[name] = localizer.number(number)
                if name == "count" { count = number }
            case .term(let key):
                guard let words = word(key) else { return nil }
                filled[name] = words
            case .terms(let keys):
                let words = keys.compactMap(word)
                guard words.count == keys.count else { return nil }
                filled[name] = words.joined(separator: localizer("layout.list_separator"))
            }
        }
        if let count { return localizer.plural(key, count: count, filled) }
        return localizer(key, filled)
    }

    /// Whether `key` is a key the catalogs could hold: a stored line names keys, and it is read back from the database.
    private static func isCatalogKey(_ key: String) -> Bool {
        key.utf8.count <= 100 && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ".") }
    }

    /// An action code as people read it (`user.role_change` is `audit.actions.user_role_change`); a code
    /// no catalog knows (written by a newer Herald) is shown as it is stored.
    static func label(of action: String, _ localizer: Localizer) -> String {
        let key = "audit.actions." + action.replacingOccurrences(of: ".", with: "_")
        return action.utf8.count <= 64 && isCatalogKey(key) && localizer.has(key) ? localizer(key) : action
    }
}
