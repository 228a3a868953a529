import Foundation
import HeraldDomain

/// Push notifications the app hands to the client: received (`push_received`, and a silent push
/// refreshes the feed) and opened (`push_open`, and the `push_click` trigger) (`docs/delivery-semantics.md` §4).
extension DeliveryClient {
    /// A push notification arrived (iOS: `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` or
    /// `userNotificationCenter(_:willPresent:)`; FCM: `appDidReceiveMessage`). Records `push_received` with the
    /// push campaign's id, read from `herald_campaign_id` as `pushOpened(userInfo:)` reads it (none without it).
    /// A silent push (`aps.content-available` 1, or the data key `herald_refresh` "1") fetches the feed at
    /// once; its result is returned, nil for any other push.
    @discardableResult
    public nonisolated(nonsending) func pushReceived(userInfo: [AnyHashable: Any]) async -> FeedRefresh? {
        await pushReceived(campaignID: Self.pushCampaignID(in: userInfo), silent: Self.isSilentPush(userInfo))
    }

    /// `pushReceived(userInfo:)` with the payload already read.
    @discardableResult
    public func pushReceived(campaignID: Int64?, silent: Bool) async -> FeedRefresh? {
        let now = configuration.clock()
        checkTimeRules(now: now)
        if let campaignID { record(campaignID: campaignID, type: .pushReceived, language: nil, now: now) }
        return silent ? await refreshFeed() : nil
    }

    /// A push notification was opened: records `push_open` with the push campaign's id, then fires
    /// `push_click` with `campaign_id`, both read from the payload's `herald_campaign_id` (a number, or a
    /// decimal string as FCM data carries only strings); without one, nothing is recorded and `push_click`
    /// has no properties.
    @discardableResult
    public nonisolated(nonsending) func pushOpened(userInfo: [AnyHashable: Any]) async -> TriggerResult {
        await pushOpened(campaignID: Self.pushCampaignID(in: userInfo))
    }

    /// `pushOpened(userInfo:)` with the campaign id already read.
    @discardableResult
    public func pushOpened(campaignID: Int64?) -> TriggerResult {
        if let campaignID { record(campaignID: campaignID, type: .pushOpen, language: nil, now: configuration.clock()) }
        let properties: [String: FilterValue] = campaignID.map { ["campaign_id": .number(Double($0))] } ?? [:]
        return TriggerResult(event: "push_click", outcome: triggerEvent("push_click", properties: properties))
    }

    /// The push campaign's id in a notification's payload: a whole number from 1 to 2^53 − 1 (what every
    /// client reads exactly, JavaScript's included), or such a number in decimal digits only. Anything
    /// else counts as absent.
    public nonisolated static func pushCampaignID(in userInfo: [AnyHashable: Any]) -> Int64? {
        let largest: Int64 = (1 << 53) - 1
        let id: Int64? = switch userInfo["herald_campaign_id"] {
        case let number as Int: Int64(number)
        case let number as Int64: number
        case let number as Double: number.rounded() == number && abs(number) <= Double(largest) ? Int64(number) : nil
        case let text as String: text.utf8.count <= 16 && text.utf8.allSatisfy({ (48...57).contains($0) }) ? Int64(text) : nil
        default: nil
        }
        return id.flatMap { (1...largest).contains($0) ? $0 : nil }
    }

    /// Whether a payload asks the app to refresh in the background: APNs `aps.content-available` is 1, or
    /// (FCM data, strings only) `herald_refresh` is "1".
    public nonisolated static func isSilentPush(_ userInfo: [AnyHashable: Any]) -> Bool {
        let aps = userInfo["aps"] as? [AnyHashable: Any] ?? (userInfo["aps"] as? [String: Any]).map { Dictionary(uniqueKeysWithValues: $0.map { (AnyHashable($0.key), $0.value) }) }
        return isOne(aps?["content-available"]) || userInfo["herald_refresh"] as? String == "1"
    }

    /// 1 as a number of any type, or the text "1".
    private nonisolated static func isOne(_ value: Any?) -> Bool {
        switch value {
        case let number as Int: number == 1
        case let number as Int64: number == 1
        case let number as Double: number == 1
        case let text as String: text == "1"
        default: false
        }
    }
}
