/// `{"events": [...], "discards": [...]}` as a delivery component sends it, read by `EventBatchReader`:
/// each item's fields, or why it is not an object of the expected field types.
struct EventBatch {
    var events: [Item<EventFields>] = []
    /// Absent (or null) in a batch without discard counts.
    var discards: [Item<DiscardFields>] = []

    /// One item as sent: its fields, or why it is not an object of the expected field types.
    struct Item<Fields: BatchItemFields> {
        let fields: Fields?
        let wrongType: String?

        init(fields: Fields) {
            self.fields = fields
            wrongType = nil
        }

        init(wrongType: String) {
            fields = nil
            self.wrongType = wrongType
        }
    }
}

/// The fields one kind of batch item may carry, all optional (which are required is the ingestion's rule),
/// by their JSON names: text, and whole numbers with what to say when one is something else.
protocol BatchItemFields {
    init()
    static var text: [String: WritableKeyPath<Self, String?> & Sendable] { get }
    static var integers: [String: (field: WritableKeyPath<Self, Int64?> & Sendable, wrongType: String)] { get }
}

/// Every field an event may carry: which are required depends on `type`.
struct EventFields: BatchItemFields {
    var id, type, occurredAt, platform, installationId, action, url, dismissType, errorCode, event, language: String?
    var campaignId: Int64?

    static let text: [String: WritableKeyPath<Self, String?> & Sendable] = [
        "id": \.id, "type": \.type, "occurredAt": \.occurredAt, "platform": \.platform,
        "installationId": \.installationId, "action": \.action, "url": \.url, "dismissType": \.dismissType,
        "errorCode": \.errorCode, "event": \.event, "language": \.language,
    ]
    static let integers: [String: (field: WritableKeyPath<Self, Int64?> & Sendable, wrongType: String)] = [
        "campaignId": (\.campaignId, "`campaignId` must be a campaign id (a whole number)."),
    ]
}

/// Every field a discard count carries (`DiscardCount`).
struct DiscardFields: BatchItemFields {
    var id, reason, day, installationId: String?
    var campaignId, count: Int64?

    static let text: [String: WritableKeyPath<Self, String?> & Sendable] = [
        "id": \.id, "reason": \.reason, "day": \.day, "installationId": \.installationId,
    ]
    static let integers: [String: (field: WritableKeyPath<Self, Int64?> & Sendable, wrongType: String)] = [
        "campaignId": (\.campaignId, "`campaignId` must be a campaign id (a whole number)."),
        "count": (\.count, "`count` must be a whole number."),
    ]
}
