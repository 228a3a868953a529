import Foundation

/// Who (a user, an API key, or the command line) changed what.
public struct AuditActor: Sendable, Equatable {
    public var userID: Int64?
    public var keyID: Int64?
    /// How the actor is shown: an email, a key's name, or "command line".
    public var label: String

    public init(userID: Int64?, keyID: Int64?, label: String) {
        self.userID = userID
        self.keyID = keyID
        self.label = label
    }

    public static func user(id: Int64, email: String) -> AuditActor { AuditActor(userID: id, keyID: nil, label: email) }
    public static func key(id: Int64, name: String) -> AuditActor { AuditActor(userID: nil, keyID: id, label: keyPrefix + name) }
    public static let commandLine = AuditActor(userID: nil, keyID: nil, label: "command line")
    public static let visitor = AuditActor(userID: nil, keyID: nil, label: "visitor")

    private static let keyPrefix = "API key "

    /// What a stored label (an audit line's actor, a campaign's "edited by") names, so the console can
    /// say it in the reader's language: labels are stored in English once and never rewritten.
    public enum Kind: Sendable, Equatable {
        case person(String)
        case key(name: String)
        case commandLine
        case visitor
    }

    public static func kind(ofLabel label: String) -> Kind {
        if label == commandLine.label { return .commandLine }
        if label == visitor.label { return .visitor }
        if label.hasPrefix(keyPrefix) { return .key(name: String(label.dropFirst(keyPrefix.count))) }
        return .person(label)
    }
}

/// One line of the audit log.
public struct AuditEntry: Sendable, Equatable {
    public var id: Int64
    public var occurredAt: Date
    public var actor: String
    public var action: String
    public var subject: String
    public var details: String
    /// `AuditLine.storedArguments`, for the audit page to write the line in its reader's language; nil on
    /// lines written before Herald kept them, which show `subject` and `details` as stored.
    public var arguments: String?

    public init(id: Int64, occurredAt: Date, actor: String, action: String, subject: String, details: String, arguments: String? = nil) {
        self.id = id
        self.occurredAt = occurredAt
        self.actor = actor
        self.action = action
        self.subject = subject
        self.details = details
        self.arguments = arguments
    }
}

/// Who changed what: the append-only `audit_log` table on either engine.
public protocol AuditLogStore: Sendable {
    /// A line that is no change to the data (a backup), with no arguments: shown as written.
    func record(_ actor: AuditActor, action: String, subject: String, details: String, at time: Date) throws
    /// A page of entries, newest first.
    func page(offset: Int, limit: Int) throws -> [AuditEntry]
    /// The newest entry of `action` (the last backup, for the System page).
    func latest(action: String) throws -> AuditEntry?
    func count() throws -> Int
}

extension AuditLogStore {
    public func record(_ actor: AuditActor, action: String, subject: String, at time: Date) throws {
        try record(actor, action: action, subject: subject, details: "", at: time)
    }
}
