import Foundation
import HeraldDomain

/// Sessions, the app's life cycle and push clicks: the built-in triggers the client fires itself
/// (`docs/delivery-semantics.md` §4).
extension DeliveryClient {
    /// The app started: fires `app_launch`, then `session_start` unless a session is still open (the app
    /// went to the background less than the session timeout ago). Also starts loading the images of
    /// eligible campaigns that are not on disk yet.
    @discardableResult
    public func start() -> [TriggerResult] {
        let now = configuration.clock()
        checkTimeRules(now: now)
        prefetchImages(now: now)
        var results = [TriggerResult(event: "app_launch", outcome: fire("app_launch", properties: [:], now: now))]
        results += enterForeground(now: now)
        return results
    }

    /// The app came back to the foreground: fires `session_start` first if the session ended, then
    /// `app_foreground`.
    @discardableResult
    public func appWillEnterForeground() -> [TriggerResult] {
        let now = configuration.clock()
        checkTimeRules(now: now)
        inForeground = true
        return enterForeground(now: now) + [TriggerResult(event: "app_foreground", outcome: fire("app_foreground", properties: [:], now: now))]
    }

    /// The app went to the background: a message not yet seen goes back on the stack, messages triggered
    /// from now on wait there, the session's timeout starts, and queued events are uploaded.
    @discardableResult
    public func appDidEnterBackground() async -> UploadResult {
        let now = configuration.clock()
        checkTimeRules(now: now)
        inForeground = false
        returnUnseenMessageToStack()
        state.backgroundedAt = now
        saveState()
        return await flushEvents()
    }

    /// A push notification was opened: fires `push_click` with `campaign_id`, read from the payload's
    /// `herald_campaign_id` (a number, or a decimal string as FCM data carries only strings); without
    /// one, `push_click` has no properties.
    @discardableResult
    public nonisolated(nonsending) func pushOpened(userInfo: [AnyHashable: Any]) async -> TriggerResult {
        await pushOpened(campaignID: Self.pushCampaignID(in: userInfo))
    }

    /// `pushOpened(userInfo:)` with the campaign id already read.
    @discardableResult
    public func pushOpened(campaignID: Int64?) -> TriggerResult {
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

    /// Opens a session unless one continues, firing `session_start` for a new one. The app is in the
    /// foreground from here on.
    private func enterForeground(now: Date) -> [TriggerResult] {
        let continues = sessionContinues(now: now)
        sessionOpen = true
        if state.backgroundedAt != nil {
            state.backgroundedAt = nil
            saveState()
        }
        guard !continues else { return [] }
        return [TriggerResult(event: "session_start", outcome: fire("session_start", properties: [:], now: now))]
    }

    /// A session is open while the app is in the foreground (since a session began in this process), and
    /// for the session timeout after it went to the background, a relaunch included. A process that ended
    /// in the foreground left no time to count from: its session has ended.
    private func sessionContinues(now: Date) -> Bool {
        if let backgroundedAt = state.backgroundedAt {
            return now.timeIntervalSince(backgroundedAt) < configuration.sessionTimeout
        }
        return sessionOpen
    }
}
