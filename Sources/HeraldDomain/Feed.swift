import Foundation

/// What `GET /api/v1/feed` answers: the app's live campaigns, highest priority first.
public struct Feed: Codable, Sendable, Equatable {
    public struct App: Codable, Sendable, Equatable {
        public var id: Int64
        public var name: String
        /// The least time between two messages on one device.
        public var minIntervalSeconds: Int

        public init(id: Int64, name: String, minIntervalSeconds: Int) {
            self.id = id
            self.name = name
            self.minIntervalSeconds = minIntervalSeconds
        }
    }

    public var schemaVersion: Int
    public var app: App
    public var generatedAt: Date
    public var pollAfterSeconds: Int
    public var campaigns: [FeedCampaign]

    public init(schemaVersion: Int = CampaignJSON.schemaVersion, app: App, generatedAt: Date, pollAfterSeconds: Int, campaigns: [FeedCampaign]) {
        self.schemaVersion = schemaVersion
        self.app = app
        self.generatedAt = generatedAt
        self.pollAfterSeconds = pollAfterSeconds
        self.campaigns = campaigns
    }
}

extension Feed {
    enum CodingKeys: String, CodingKey { case schemaVersion, app, generatedAt, pollAfterSeconds, campaigns }

    /// A campaign a client cannot read (a newer shape, a server's mistake) is skipped, not the whole feed:
    /// the others still show, as they do in herald.js.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        app = try container.decode(App.self, forKey: .app)
        generatedAt = try container.decode(Date.self, forKey: .generatedAt)
        pollAfterSeconds = try container.decode(Int.self, forKey: .pollAfterSeconds)
        var list = try container.nestedUnkeyedContainer(forKey: .campaigns)
        var campaigns: [FeedCampaign] = []
        while !list.isAtEnd {
            if let campaign = try? list.decode(FeedCampaign.self) {
                campaigns.append(campaign)
            } else {
                // A failed decode does not move the container on; this always reads, and does.
                _ = try list.decode(Unread.self)
            }
        }
        self.campaigns = campaigns
    }

    private struct Unread: Decodable {
        init(from decoder: Decoder) {}
    }
}

/// A campaign as a device gets it: what a delivery client acts on and nothing else
/// (`docs/delivery-semantics.md` §1). Not the name, the description or the status: those are the
/// marketers' words, and no renderer needs them; a client that wants a label uses the id or a key in `data`.
///
/// Decoded leniently (like every feed): a client keeps working when a newer Herald adds a field.
public struct FeedCampaign: Codable, Sendable, Equatable {
    public var id: Int64
    /// 1 (highest) to 10.
    public var priority: Int
    public var schedule: Schedule
    public var triggers: [Trigger]
    public var frequency: Frequency
    public var targeting: Targeting
    /// With its language versions.
    public var message: Message
    public var data: CustomData
    /// When the campaign went live, for the priority tie-break (latest wins).
    public var startedAt: Date?
    /// True on test campaigns sent to a test device; absent otherwise.
    public var test: Bool?
    /// The campaign's conversion goal, which the client watches for after an impression; absent when it has none.
    public var conversion: ConversionGoal?

    public init(
        id: Int64, priority: Int = 5, schedule: Schedule = Schedule(), triggers: [Trigger] = [], frequency: Frequency = Frequency(),
        targeting: Targeting = Targeting(), message: Message, data: CustomData = CustomData(), startedAt: Date? = nil, test: Bool? = nil,
        conversion: ConversionGoal? = nil
    ) {
        self.id = id
        self.priority = priority
        self.schedule = schedule
        self.triggers = triggers
        self.frequency = frequency
        self.targeting = targeting
        self.message = message
        self.data = data
        self.startedAt = startedAt
        self.test = test
        self.conversion = conversion
    }

    /// The device's part of a stored campaign.
    public init(_ campaign: Campaign, id: Int64, startedAt: Date?, test: Bool) {
        self.init(
            id: id, priority: campaign.priority, schedule: campaign.schedule, triggers: campaign.triggers, frequency: campaign.frequency,
            targeting: campaign.targeting, message: campaign.message, data: campaign.data, startedAt: startedAt, test: test ? true : nil,
            conversion: campaign.conversion)
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, priority, schedule, triggers, frequency, targeting, message, data, startedAt, test, conversion
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        priority = try container.decodeIfPresent(Int.self, forKey: .priority) ?? 5
        schedule = try container.decodeIfPresent(Schedule.self, forKey: .schedule) ?? Schedule()
        triggers = try container.decodeIfPresent([Trigger].self, forKey: .triggers) ?? []
        frequency = try container.decodeIfPresent(Frequency.self, forKey: .frequency) ?? Frequency()
        targeting = try container.decodeIfPresent(Targeting.self, forKey: .targeting) ?? Targeting()
        message = try container.decode(Message.self, forKey: .message)
        data = try container.decodeIfPresent(CustomData.self, forKey: .data) ?? CustomData()
        startedAt = try container.decodeIfPresent(Date.self, forKey: .startedAt)
        test = try container.decodeIfPresent(Bool.self, forKey: .test)
        conversion = try container.decodeIfPresent(ConversionGoal.self, forKey: .conversion)
    }
}
