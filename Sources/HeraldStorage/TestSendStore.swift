import Foundation
import HeraldDomain

/// A campaign's current document sent to chosen test devices, apart from the live campaign: its state,
/// revision and figures stay as they were. An in-app test is in the devices' feeds until `expiresAt`; a
/// push test is one notification per device with a registered token, through the push outbox.
public struct TestSend: Sendable, Equatable, Identifiable {
    /// What happened to one device when the test was sent.
    public enum Outcome: String, Sendable, Equatable {
        /// In-app: in the device's feed until the test expires.
        case inFeed = "in_feed"
        /// Push: a notification is in the outbox (`Device.delivery` says what followed).
        case queued
        /// Push: the installation has registered no push token, so there is nothing to send to.
        case noToken = "no_token"
    }

    /// A queued notification as the outbox has it now.
    public struct Delivery: Sendable, Equatable {
        /// `pending`, `sending`, `sent`, `failed`, `unregistered`, `skipped` or `unknown` (as `push_outbox.state`).
        public var state: String
        /// The provider's reason, for the states that did not arrive.
        public var reason: String?
        public var sentAt: Date?
    }

    public struct Device: Sendable, Equatable {
        public var installationID: String
        /// The test device's name when the test was sent.
        public var name: String
        public var outcome: Outcome
        public var delivery: Delivery?
    }

    public var id: Int64
    public var appID: Int64
    public var campaignID: Int64
    public var channel: Channel
    /// The campaign's revision that was sent, and its document then.
    public var revision: Int
    public var campaign: Campaign
    public var sentAt: Date
    /// Who sent it, as audit lines name people (`AuditActor.label`).
    public var sentBy: String
    public var expiresAt: Date
    public var devices: [Device]

    /// How long an in-app test stays in its devices' feeds: time to pick up the phone and fire its
    /// trigger, short enough that a forgotten test does not follow its tester through the day.
    public static let inAppLifetime: TimeInterval = 3600
    /// The most devices one test goes to.
    public static let maxDevices = 50
    /// The sends kept per campaign (older ones, with their outbox rows, are removed by the next send).
    public static let keptPerCampaign = 20
    /// The most live in-app tests an app's feeds carry (the newest).
    public static let liveLimit = 200

    /// Whether the test is still in its devices' feeds at `now`.
    public func isLive(at now: Date) -> Bool {
        channel == .inApp && now < expiresAt
    }

    /// Where a test stands on one device, as pages and the API say it.
    public enum Status: Sendable, Equatable {
        /// In-app: in the device's feed until the test expires.
        case inFeed(until: Date)
        /// In-app: the test has left the device's feed.
        case expired(at: Date)
        case noToken
        /// Push: waiting in the outbox, or with the provider now.
        case pending
        case sent(at: Date?)
        /// Push: the provider refused it, or Herald gave up after its tries.
        case failed(reason: String?)
        /// Push: the provider called the token dead; the installation lost it.
        case unregistered(reason: String?)
        /// Push: Herald stopped between handing it over and hearing back; it is not sent again.
        case unknown
        /// An outbox row in a state this version does not know (written by a newer Herald).
        case other(state: String, reason: String?)

        /// The API's word for it.
        public var code: String {
            switch self {
            case .inFeed: "in_feed"
            case .expired: "expired"
            case .noToken: "no_token"
            case .pending: "pending"
            case .sent: "sent"
            case .failed: "failed"
            case .unregistered: "unregistered"
            case .unknown: "unknown"
            case .other(let state, _): state
            }
        }

        /// Whether more may happen to it (a push still in the outbox).
        public var isSettled: Bool { self != .pending }
    }

    /// Where the test stands on `device` at `now`.
    public func status(of device: Device, at now: Date) -> Status {
        switch device.outcome {
        case .inFeed: return now < expiresAt ? .inFeed(until: expiresAt) : .expired(at: expiresAt)
        case .noToken: return .noToken
        case .queued:
            // A queued row went with its send; none means it was removed with an older send, which keeps no rows.
            guard let delivery = device.delivery else { return .unknown }
            switch delivery.state {
            case "pending", "sending": return .pending
            case "sent": return .sent(at: delivery.sentAt)
            case "failed", "skipped": return .failed(reason: delivery.reason)
            case "unregistered": return .unregistered(reason: delivery.reason)
            case "unknown": return .unknown
            default: return .other(state: delivery.state, reason: delivery.reason)
            }
        }
    }

    /// When a test sent at `now` leaves the feeds: a push test is never in them.
    package static func expiry(of channel: Channel, sentAt now: Date) -> Date {
        channel == .inApp ? now.addingTimeInterval(inAppLifetime) : now
    }
}

public enum TestSendError: Error, Equatable {
    /// No device, or more than `TestSend.maxDevices`.
    case deviceCount
}

/// Test sends on either engine.
public protocol TestSendStore: Sendable {
    /// Records a test of `stored` as it is now to `devices` (test devices of its app), with its audit line,
    /// in one transaction: an in-app test goes in the devices' feeds; a push test queues one notification
    /// per device with a registered token, due now. Keeps the newest `TestSend.keptPerCampaign` sends of
    /// the campaign. The campaign itself is not written.
    func send(_ stored: StoredCampaign, to devices: [TestDevice], actor: AuditActor, now: Date) throws -> TestSend
    func find(id: Int64) throws -> TestSend?
    /// The campaign's newest sends, newest first.
    func recent(campaignID: Int64, limit: Int) throws -> [TestSend]
    /// The app's in-app tests still in feeds at `now`, newest first, at most `TestSend.liveLimit`.
    func live(appID: Int64, now: Date) throws -> [TestSend]
}

/// A `test_sends` row and its devices as either engine reads them.
package struct TestSendRow {
    package var id: Int64
    package var appID: Int64
    package var campaignID: Int64
    package var channel: String
    package var revision: Int64
    package var document: String
    package var sentAt: Date
    package var sentBy: String
    package var expiresAt: Date

    package init(
        id: Int64, appID: Int64, campaignID: Int64, channel: String, revision: Int64, document: String, sentAt: Date,
        sentBy: String, expiresAt: Date
    ) {
        self.id = id
        self.appID = appID
        self.campaignID = campaignID
        self.channel = channel
        self.revision = revision
        self.document = document
        self.sentAt = sentAt
        self.sentBy = sentBy
        self.expiresAt = expiresAt
    }

    package func testSend(devices: [TestSend.Device]) throws -> TestSend {
        guard let channel = Channel(rawValue: channel) else { throw UnreadableStoredValue(column: "test_sends.channel", value: channel) }
        var campaign = try CampaignSave.decode(document)
        campaign.id = campaignID
        return TestSend(
            id: id, appID: appID, campaignID: campaignID, channel: channel, revision: Int(revision), campaign: campaign, sentAt: sentAt,
            sentBy: sentBy, expiresAt: expiresAt, devices: devices)
    }

    /// One device's row, with its outbox row's columns when it was queued.
    package static func device(
        installationID: String, name: String, outcome: String, state: String?, reason: String?, sentAt: Date?
    ) throws -> TestSend.Device {
        guard let known = TestSend.Outcome(rawValue: outcome) else { throw UnreadableStoredValue(column: "test_send_devices.outcome", value: outcome) }
        return TestSend.Device(
            installationID: installationID, name: name, outcome: known,
            delivery: state.map { TestSend.Delivery(state: $0, reason: reason, sentAt: sentAt) })
    }

    /// What a send writes, decided alike on every engine: the row's columns, and each device's outcome from
    /// its registration (`tokens`: the installations with a push token, by installation id).
    package struct Plan {
        package let document: String
        package let channel: Channel
        package let expiresAt: Date
        package let devices: [(device: TestDevice, outcome: TestSend.Outcome, installation: Installation?)]

        package init(_ stored: StoredCampaign, devices chosen: [TestDevice], tokens: [String: Installation], now: Date) throws {
            var seen = Set<String>()
            let devices = chosen.filter { seen.insert($0.installationID).inserted }
            guard (1...TestSend.maxDevices).contains(devices.count) else { throw TestSendError.deviceCount }
            document = try CampaignSave.encode(stored.campaign.content)
            channel = stored.campaign.channel
            expiresAt = TestSend.expiry(of: channel, sentAt: now)
            self.devices = devices.map { device in
                guard stored.campaign.channel == .push else { return (device, .inFeed, nil) }
                guard let installation = tokens[device.installationID], installation.pushToken != nil, installation.pushProvider != nil else {
                    return (device, .noToken, nil)
                }
                return (device, .queued, installation)
            }
        }
    }
}
