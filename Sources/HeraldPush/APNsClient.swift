import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1

/// Sends to Apple Push Notification service over HTTP/2 with a provider token (JWT, ES256).
public final class APNsClient: PushSender {
    public let configuration: APNsConfiguration
    private let exchange: ProviderExchange
    private let tokens: APNsProviderTokens

    /// APNs answers these (403) to a token it no longer takes; a fresh token may pass.
    static let tokenRefusals: Set<String> = ["ExpiredProviderToken", "InvalidProviderToken"]

    public init(configuration: APNsConfiguration, httpClient: HTTPClient) {
        self.configuration = configuration
        exchange = ProviderExchange(httpClient: httpClient)
        tokens = APNsProviderTokens(configuration: configuration)
    }

    public func send(_ request: PushRequest) async -> PushResult {
        if let reason = Self.localRefusal(request) { return .rejected(reason: reason) }
        guard let token = try? tokens.current(now: Date()) else {
            return .retry(after: nil, reason: "the APNs provider token could not be signed")
        }
        let first = await post(request, token: token)
        guard case .success(let answer) = first, answer.status == 403, let reason = answer.reason,
              Self.tokenRefusals.contains(reason)
        else { return first.pushResult }
        // Once with a fresh token: an expired one is replaced, and a key that is truly wrong stays refused.
        guard let fresh = try? tokens.replacement(for: token, now: Date()) else { return answer.result }
        return await post(request, token: fresh).pushResult
    }

    private func post(_ request: PushRequest, token: String) async -> Result<ProviderAnswer, ProviderExchange.ConnectionFailure> {
        var headers = HTTPHeaders()
        headers.add(name: "authorization", value: "bearer \(token)")
        headers.add(name: "apns-topic", value: configuration.topic)
        headers.add(name: "apns-push-type", value: request.apnsPushType)
        headers.add(name: "apns-priority", value: String(request.apnsPriority))
        if let expiration = request.expiration {
            headers.add(name: "apns-expiration", value: String(Self.unixSeconds(expiration)))
        }
        if let collapseID = request.collapseID { headers.add(name: "apns-collapse-id", value: collapseID) }
        if let apnsID = request.apnsID { headers.add(name: "apns-id", value: apnsID.uuidString.lowercased()) }
        headers.add(name: "content-type", value: "application/json")
        let url = PushSettingCheck.url(configuration.baseURL, appending: "/3/device/\(request.deviceToken)")
        return await exchange.post(url: url, headers: headers, body: request.body).map { reply in
            ProviderAnswer.apns(status: reply.status, apnsID: reply.headers.first(name: "apns-id"),
                                retryAfter: reply.headers.first(name: "retry-after"), body: reply.body, now: Date())
        }
    }

    /// What APNs would refuse, refused before sending, with APNs's own reason: nothing unchecked goes into
    /// the path or a header.
    static func localRefusal(_ request: PushRequest) -> String? {
        let token = request.deviceToken.utf8
        guard (1...200).contains(token.count),
              token.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") })
        else { return "BadDeviceToken" }
        guard (1...32).contains(request.apnsPushType.utf8.count),
              request.apnsPushType.utf8.allSatisfy({ (0x61...0x7A).contains($0) })
        else { return "InvalidPushType" }
        guard [10, 5, 1].contains(request.apnsPriority) else { return "BadPriority" }
        if let collapseID = request.collapseID {
            guard (1...64).contains(collapseID.utf8.count),
                  collapseID.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
            else { return "BadCollapseId" }
        }
        return nil
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// `apns-expiration`: unix seconds; a date before 1970 is 0 ("do not store"), one past 2100 is 2100.
    static func unixSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int64(min(seconds, 4_102_444_800))
    }
}

/// The provider token APNs checks on every request, made again only when due: Apple refuses one older
/// than an hour, and answers `TooManyProviderTokenUpdates` to a sender that makes them too often.
final class APNsProviderTokens: Sendable {
    /// A token is used this long, well inside Apple's hour.
    static let reuse: TimeInterval = 50 * 60
    /// A token made because the last was refused is made at most this often, so a wrong key costs one
    /// refused request per send, not a new token per send.
    static let refusedRefreshSpacing: TimeInterval = 60

    private struct State {
        var token: String?
        var issuedAt = Date.distantPast
        var lastRefusedRefresh = Date.distantPast
    }

    private let configuration: APNsConfiguration
    private let state = NIOLockedValueBox(State())

    init(configuration: APNsConfiguration) {
        self.configuration = configuration
    }

    /// The token in use, made anew when it is 50 minutes old (or the clock went back).
    func current(now: Date) throws -> String {
        try state.withLockedValue { state in
            let age = now.timeIntervalSince(state.issuedAt)
            if let token = state.token, age >= 0, age < Self.reuse { return token }
            return try make(&state, now: now)
        }
    }

    /// A token to retry with after APNs refused `refused`: the one another send already made, or a new
    /// one; nil when one was made for a refusal within the last minute.
    func replacement(for refused: String, now: Date) throws -> String? {
        try state.withLockedValue { state in
            if let token = state.token, token != refused { return token }
            let sinceLast = now.timeIntervalSince(state.lastRefusedRefresh)
            guard sinceLast < 0 || sinceLast >= Self.refusedRefreshSpacing else { return nil }
            state.lastRefusedRefresh = now
            return try make(&state, now: now)
        }
    }

    private func make(_ state: inout State, now: Date) throws -> String {
        let token = try JSONWebToken.apnsProviderToken(configuration, issuedAt: now)
        state.token = token
        state.issuedAt = now
        return token
    }
}
