/// What a console user may do: viewers read, editors compose and publish, admins do everything.
public enum Role: String, CaseIterable, Sendable, Codable, Comparable {
    case viewer, editor, admin

    /// Whether this role includes everything `required` may do.
    public func includes(_ required: Role) -> Bool { self >= required }

    public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .viewer: 0
        case .editor: 1
        case .admin: 2
        }
    }

    /// The name shown in the console.
    public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}

/// What an API key may do; a key carries one or more.
public enum APIScope: String, CaseIterable, Sendable, Codable {
    case feedRead = "feed:read"
    case eventsWrite = "events:write"
    case campaignsRead = "campaigns:read"
    case campaignsWrite = "campaigns:write"
    /// Erases an installation's events (data-subject requests).
    case installationsDelete = "installations:delete"

    /// One line for the key form.
    public var summary: String {
        switch self {
        case .feedRead: "Read the app's campaign feed (delivery components)"
        case .eventsWrite: "Send impressions, clicks and other events"
        case .campaignsRead: "Read campaigns through the management API"
        case .campaignsWrite: "Create and change campaigns through the management API"
        case .installationsDelete: "Erase an installation's events (data-subject deletion requests)"
        }
    }
}

/// A platform an app ships on.
public enum Platform: String, CaseIterable, Sendable, Codable {
    case ios, android, web

    public var title: String {
        switch self {
        case .ios: "iOS"
        case .android: "Android"
        case .web: "Web"
        }
    }
}
