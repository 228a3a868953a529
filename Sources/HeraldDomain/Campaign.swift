import Foundation

/// A campaign as one document: the format of the feed, the API, export and import (`docs/campaign-json.md`).
/// Absent optional fields are omitted from JSON, never null-filled.
public struct Campaign: Codable, Sendable, Equatable {
    public var id: Int64?
    public var app: Int64
    public var name: String
    public var description: String?
    /// Derived from the stored state and the schedule; ignored on input.
    public var status: CampaignStatus?
    /// 1 (highest) to 10.
    public var priority: Int
    public var schedule: Schedule
    public var triggers: [Trigger]
    public var frequency: Frequency
    public var targeting: Targeting
    /// Reaches only the app's test devices, at once, ignoring the schedule.
    public var testOnDevice: Bool
    /// In-app (the default) or push.
    public var channel: Channel
    /// An in-app campaign's message. A push campaign has none: an empty banner stands in, never written.
    public var message: Message
    /// A push campaign's notification; nil for in-app campaigns.
    public var push: PushNotification?
    /// Ordered key/value pairs delivered with the message (FIAM's appData, Braze's extras).
    public var data: CustomData
    /// The event that counts as a conversion, and its window; nil: conversions are only what the app
    /// attributes to a message itself.
    public var conversion: ConversionGoal?
    /// API only: the stored revision, for `If-Match`.
    public var revision: Int?

    public init(
        id: Int64? = nil, app: Int64, name: String, description: String? = nil, status: CampaignStatus? = nil,
        priority: Int = 5, schedule: Schedule = Schedule(), triggers: [Trigger] = [], frequency: Frequency = Frequency(),
        targeting: Targeting = Targeting(), testOnDevice: Bool = false, channel: Channel = .inApp, message: Message,
        push: PushNotification? = nil, data: CustomData = CustomData(), conversion: ConversionGoal? = nil
    ) {
        self.id = id
        self.app = app
        self.name = name
        self.description = description
        self.status = status
        self.priority = priority
        self.schedule = schedule
        self.triggers = triggers
        self.frequency = frequency
        self.targeting = targeting
        self.testOnDevice = testOnDevice
        self.channel = channel
        self.message = message
        self.push = push
        self.data = data
        self.conversion = conversion
    }

    /// A push campaign: `push` is its notification.
    public init(
        id: Int64? = nil, app: Int64, name: String, description: String? = nil, priority: Int = 5, schedule: Schedule = Schedule(),
        targeting: Targeting = Targeting(), testOnDevice: Bool = false, push: PushNotification, data: CustomData = CustomData()
    ) {
        self.init(
            id: id, app: app, name: name, description: description, priority: priority, schedule: schedule, targeting: targeting,
            testOnDevice: testOnDevice, channel: .push, message: Campaign.noMessage, push: push, data: data)
    }

    /// What stands in for a push campaign's message.
    public static let noMessage = Message(layout: .banner)
}

extension Campaign {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, app, name, description, status, priority, schedule, triggers, frequency, targeting, testOnDevice, channel, message
        case push, data, conversion, revision
        /// Output-only, in a publish's answer (what would keep the campaign from reaching devices): a
        /// document sent back with it is read without it.
        case warnings
    }

    /// Only `app`, `name` and `message` (`push` for a push campaign) are required; the rest default as
    /// documented in `docs/campaign-json.md`.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        id = try container.decodeIfPresent(Int64.self, forKey: .id)
        app = try container.decode(Int64.self, forKey: .app)
        name = try container.decode(String.self, forKey: .name)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        status = try container.decodeIfPresent(CampaignStatus.self, forKey: .status)
        priority = try container.decodeIfPresent(Int.self, forKey: .priority) ?? 5
        schedule = try container.decodeIfPresent(Schedule.self, forKey: .schedule) ?? Schedule()
        triggers = try container.decodeIfPresent([Trigger].self, forKey: .triggers) ?? []
        frequency = try container.decodeIfPresent(Frequency.self, forKey: .frequency) ?? Frequency()
        targeting = try container.decodeIfPresent(Targeting.self, forKey: .targeting) ?? Targeting()
        testOnDevice = try container.decodeIfPresent(Bool.self, forKey: .testOnDevice) ?? false
        channel = try container.decodeIfPresent(Channel.self, forKey: .channel) ?? .inApp
        switch channel {
        case .inApp:
            message = try container.decode(Message.self, forKey: .message)
            push = try container.decodeIfPresent(PushNotification.self, forKey: .push)
        case .push:
            message = try container.decodeIfPresent(Message.self, forKey: .message) ?? Self.noMessage
            push = try container.decode(PushNotification.self, forKey: .push)
        }
        data = try container.decodeIfPresent(CustomData.self, forKey: .data) ?? CustomData()
        conversion = try container.decodeIfPresent(ConversionGoal.self, forKey: .conversion)
        revision = try container.decodeIfPresent(Int.self, forKey: .revision)
    }

    /// Each campaign writes its own channel's content only: `message` or `push`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(id, forKey: .id)
        try container.encode(app, forKey: .app)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encodeIfPresent(status, forKey: .status)
        try container.encode(priority, forKey: .priority)
        try container.encode(schedule, forKey: .schedule)
        try container.encode(triggers, forKey: .triggers)
        try container.encode(frequency, forKey: .frequency)
        try container.encode(targeting, forKey: .targeting)
        try container.encode(testOnDevice, forKey: .testOnDevice)
        try container.encode(channel, forKey: .channel)
        switch channel {
        case .inApp: try container.encode(message, forKey: .message)
        case .push: try container.encodeIfPresent(push, forKey: .push)
        }
        try container.encode(data, forKey: .data)
        try container.encodeIfPresent(conversion, forKey: .conversion)
        try container.encodeIfPresent(revision, forKey: .revision)
    }

    /// The campaign as it is stored and compared: without output-only fields (id, status, the API's
    /// revision), and without the message fields its layout does not use, which Campaign JSON drops
    /// when a campaign is saved, whether it came from the composer, the API or an import.
    public var content: Campaign {
        var copy = self
        switch channel {
        case .inApp:
            copy.message = message.keepingLayoutFields
            copy.push = nil
        case .push:
            copy.message = Self.noMessage
        }
        copy.id = nil
        copy.status = nil
        copy.revision = nil
        return copy
    }
}

/// Where a campaign is in its life: `draft` → `scheduled`/`running` → `paused`/`ended` → `archived`.
public enum CampaignStatus: String, Codable, Sendable, CaseIterable {
    case draft, scheduled, running, paused, ended, archived

    public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    /// The status people see at `now`: what was done with the campaign (`state`), and for a published or
    /// paused one, its schedule: ended once its end has come (a paused one too), scheduled before its
    /// start, else running (or paused). The campaign list computes the same in SQL (`CampaignListing`).
    public init(state: CampaignState, schedule: Schedule, at now: Date) {
        let endPassed = schedule.end.map { $0 <= now } ?? false
        switch state {
        case .draft: self = .draft
        case .archived: self = .archived
        case .stopped: self = .ended
        case .paused: self = endPassed ? .ended : .paused
        case .published:
            if endPassed {
                self = .ended
            } else if let start = schedule.start, start > now {
                self = .scheduled
            } else {
                self = .running
            }
        }
    }
}

/// What people did with a campaign; the status shown also depends on the schedule (`CampaignStatus(state:schedule:at:)`).
public enum CampaignState: String, Sendable, Codable, CaseIterable {
    case draft, published, paused, stopped, archived

    public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}

/// When a campaign may show. A nil start means "when published"; a nil end means "never ends".
public struct Schedule: Codable, Sendable, Equatable {
    public var start: Date?
    public var end: Date?
    /// The IANA time zone the marketer scheduled in; times are stored in UTC.
    public var timeZone: String

    public init(start: Date? = nil, end: Date? = nil, timeZone: String = "UTC") {
        self.start = start
        self.end = end
        self.timeZone = timeZone
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case start, end, timeZone }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        start = try container.decodeIfPresent(Date.self, forKey: .start)
        end = try container.decodeIfPresent(Date.self, forKey: .end)
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone) ?? "UTC"
    }

    // Start and end are always present, null meaning "on publish" and "never".
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start, forKey: .start)
        try container.encode(end, forKey: .end)
        try container.encode(timeZone, forKey: .timeZone)
    }
}

/// One event that fires the message; any trigger of a campaign fires it.
public struct Trigger: Codable, Sendable, Equatable {
    /// A built-in event (`app_launch`, `app_foreground`, `session_start`, `push_click`), `purchase`, or a custom event ID.
    public var event: String
    public var filters: [PropertyFilter]

    public init(event: String, filters: [PropertyFilter] = []) {
        self.event = event
        self.filters = filters
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case event, filters }

    /// `filters` may be left out.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        event = try container.decode(String.self, forKey: .event)
        filters = try container.decodeIfPresent([PropertyFilter].self, forKey: .filters) ?? []
    }

    public static let builtInEvents = ["app_launch", "app_foreground", "session_start", pushClickEvent]
    public static let purchaseEvent = "purchase"
    /// Fired when a push notification is opened; the only built-in event with a property its filters may compare.
    public static let pushClickEvent = "push_click"
    /// The property of `push_click`: the id of the push campaign opened (a number).
    public static let pushCampaignProperty = "campaign_id"
}

/// What counts as the message having worked: the app firing `event` (with properties matching every
/// filter) within `windowHours` after the device's impression of the campaign. The delivery client
/// records each such firing as a `conversion` event (`docs/delivery-semantics.md` §6.2), on the device,
/// so it needs no user identity and works offline.
public struct ConversionGoal: Codable, Sendable, Equatable {
    public var event: String
    public var filters: [PropertyFilter]
    public var windowHours: Int

    /// Three days, Braze's default conversion window.
    public static let defaultWindowHours = 72

    public init(event: String, filters: [PropertyFilter] = [], windowHours: Int = defaultWindowHours) {
        self.event = event
        self.filters = filters
        self.windowHours = windowHours
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case event, filters, windowHours }

    /// `filters` and `windowHours` may be left out.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        event = try container.decode(String.self, forKey: .event)
        filters = try container.decodeIfPresent([PropertyFilter].self, forKey: .filters) ?? []
        windowHours = try container.decodeIfPresent(Int.self, forKey: .windowHours) ?? Self.defaultWindowHours
    }

    /// Whether an impression at `shownAt` is followed by `now` inside the window: after it (or at the
    /// same instant), and no more than `windowHours` later.
    public func covers(shownAt: Date, now: Date) -> Bool {
        guard CampaignLimits.conversionWindowHours.contains(windowHours) else { return false }
        let elapsed = now.timeIntervalSince(shownAt)
        return elapsed >= 0 && elapsed <= Double(windowHours) * 3600
    }
}

/// A condition on an event's (or a user's) property.
public struct PropertyFilter: Codable, Sendable, Equatable {
    public var property: String
    public var op: FilterOperator
    /// Absent for `exists`.
    public var value: FilterValue?

    public init(property: String, op: FilterOperator, value: FilterValue? = nil) {
        self.property = property
        self.op = op
        self.value = value
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case property, op, value }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        property = try container.decode(String.self, forKey: .property)
        op = try container.decode(FilterOperator.self, forKey: .op)
        value = try container.decodeIfPresent(FilterValue.self, forKey: .value)
    }
}

public enum FilterOperator: String, Codable, Sendable, CaseIterable {
    case eq, ne, gt, gte, lt, lte, contains, exists

    public var title: String {
        switch self {
        case .eq: "equals"
        case .ne: "does not equal"
        case .gt: "is greater than"
        case .gte: "is at least"
        case .lt: "is less than"
        case .lte: "is at most"
        case .contains: "contains"
        case .exists: "exists"
        }
    }
}

/// A typed filter value: JSON string, number or boolean.
public enum FilterValue: Codable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .number(let number):
            if number == number.rounded(), abs(number) < 1e15 { try container.encode(Int64(number)) } else { try container.encode(number) }
        case .bool(let flag): try container.encode(flag)
        }
    }

    /// The type's name, as the form's type selector says it.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .bool: "bool"
        }
    }

    /// The value as a form shows it.
    public var text: String {
        switch self {
        case .string(let text): text
        case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .bool(let flag): flag ? "true" : "false"
        }
    }
}

/// How often one device may see the campaign.
public struct Frequency: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case once, everyNDays = "every_n_days", always
    }

    public var type: Kind
    /// For `every_n_days`.
    public var days: Int?

    public init(type: Kind = .once, days: Int? = nil) {
        self.type = type
        self.days = days
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case type, days }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        type = try container.decode(Kind.self, forKey: .type)
        days = try container.decodeIfPresent(Int.self, forKey: .days)
    }
}

/// Who may see the campaign; exported in the feed and evaluated by the delivery client.
public struct Targeting: Codable, Sendable, Equatable {
    public var platforms: [Platform]?
    public var appVersion: VersionRule?
    public var languages: [String]?
    public var countries: [String]?
    public var userProperties: [PropertyFilter]?
    public var daysSinceFirstOpen: DayRange?
    /// Percentage of installations (1–100), sticky per installation.
    public var percentage: Int?

    public init(
        platforms: [Platform]? = nil, appVersion: VersionRule? = nil, languages: [String]? = nil, countries: [String]? = nil,
        userProperties: [PropertyFilter]? = nil, daysSinceFirstOpen: DayRange? = nil, percentage: Int? = nil
    ) {
        self.platforms = platforms
        self.appVersion = appVersion
        self.languages = languages
        self.countries = countries
        self.userProperties = userProperties
        self.daysSinceFirstOpen = daysSinceFirstOpen
        self.percentage = percentage
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case platforms, appVersion, languages, countries, userProperties, daysSinceFirstOpen, percentage
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        platforms = try container.decodeIfPresent([Platform].self, forKey: .platforms)
        appVersion = try container.decodeIfPresent(VersionRule.self, forKey: .appVersion)
        languages = try container.decodeIfPresent([String].self, forKey: .languages)
        countries = try container.decodeIfPresent([String].self, forKey: .countries)
        userProperties = try container.decodeIfPresent([PropertyFilter].self, forKey: .userProperties)
        daysSinceFirstOpen = try container.decodeIfPresent(DayRange.self, forKey: .daysSinceFirstOpen)
        percentage = try container.decodeIfPresent(Int.self, forKey: .percentage)
    }

    public struct VersionRule: Codable, Sendable, Equatable {
        public enum Operator: String, Codable, Sendable, CaseIterable {
            case equals, contains, notContains = "not_contains", regex
        }

        public var op: Operator
        public var value: String

        public init(op: Operator, value: String) {
            self.op = op
            self.value = value
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case op, value }

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(knownKeys: CodingKeys.self)
            op = try container.decode(Operator.self, forKey: .op)
            value = try container.decode(String.self, forKey: .value)
        }
    }

    public struct DayRange: Codable, Sendable, Equatable {
        public var min: Int?
        public var max: Int?

        public init(min: Int? = nil, max: Int? = nil) {
            self.min = min
            self.max = max
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case min, max }

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(knownKeys: CodingKeys.self)
            min = try container.decodeIfPresent(Int.self, forKey: .min)
            max = try container.decodeIfPresent(Int.self, forKey: .max)
        }
    }
}

/// Ordered custom key/value strings. JSON writes them as an array of `{"key", "value"}` because
/// JSON objects have no order; an object is accepted on input, in whatever order the decoder gives.
public struct CustomData: Codable, Sendable, Equatable {
    public var pairs: [Pair]

    public struct Pair: Codable, Sendable, Equatable {
        public var key: String
        public var value: String

        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case key, value }

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(knownKeys: CodingKeys.self)
            key = try container.decode(String.self, forKey: .key)
            value = try container.decode(String.self, forKey: .value)
        }
    }

    public init(_ pairs: [Pair] = []) {
        self.pairs = pairs
    }

    public init(from decoder: Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var pairs: [Pair] = []
            while !array.isAtEnd { pairs.append(try array.decode(Pair.self)) }
            self.pairs = pairs
            return
        }
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        pairs = try container.allKeys.map { Pair(key: $0.stringValue, value: try container.decode(String.self, forKey: $0)) }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(pairs)
    }
}
