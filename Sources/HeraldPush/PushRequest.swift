import Foundation

/// One notification for one device, as the provider receives it.
public struct PushRequest: Sendable, Equatable {
    /// The APNs device token (hex) or the FCM registration token.
    public var deviceToken: String
    /// The exact HTTP body: for APNs the payload JSON; for FCM the whole `{"message":{"token":…,…}}` JSON.
    public var body: Data
    /// `apns-push-type`: "alert" or "background" (APNs only).
    public var apnsPushType: String
    /// `apns-priority`: 10 (now) or 5 (when the device sees fit); background pushes must use 5.
    public var apnsPriority: Int
    /// `apns-expiration`, sent as unix seconds; nil omits the header (APNs then tries once, no storing).
    public var expiration: Date?
    /// `apns-collapse-id` (at most 64 bytes): a newer notification with the same id replaces the older.
    public var collapseID: String?
    /// `apns-id`: APNs echoes it back and uses it in its own logs.
    public var apnsID: UUID?

    public init(
        deviceToken: String, body: Data, apnsPushType: String = "alert", apnsPriority: Int = 10,
        expiration: Date? = nil, collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.deviceToken = deviceToken
        self.body = body
        self.apnsPushType = apnsPushType
        self.apnsPriority = apnsPriority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }
}

/// What became of one send, in the terms the outbox acts on.
public enum PushResult: Sendable, Equatable {
    /// The provider took it: the APNs `apns-id` response header, or FCM's message `name`.
    case sent(providerID: String?)
    /// Try again later (429, 5xx, a connection or token-endpoint failure); `after` is the provider's
    /// `Retry-After`, from 0 s to a day, when it gave one.
    case retry(after: Duration?, reason: String)
    /// The token is dead (APNs 410, FCM `UNREGISTERED`): stop sending to it.
    case unregistered(reason: String)
    /// Refused for good (any other 4xx): the provider's reason, e.g. `BadDeviceToken`, `PayloadTooLarge`,
    /// `INVALID_ARGUMENT`.
    case rejected(reason: String)
}

/// Sends one notification to one device. Never throws: every failure is a `PushResult`.
public protocol PushSender: Sendable {
    func send(_ request: PushRequest) async -> PushResult
}
