import Foundation
import HeraldDomain

/// Sessions and the app's life cycle: the built-in triggers the client fires itself (`docs/delivery-semantics.md`
/// §4); push clicks are in `DeliveryClient+Push.swift`.
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
