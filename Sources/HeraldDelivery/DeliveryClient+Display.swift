import Foundation
import HeraldDomain

/// Choosing a message for a trigger, and taking it from chosen to shown (`docs/delivery-semantics.md` §2, §3).
extension DeliveryClient {
    /// Fires an event: the highest-priority eligible campaign goes through the display pipeline, at most
    /// one per trigger.
    @discardableResult
    public func triggerEvent(_ name: String, properties: [String: FilterValue] = [:]) -> TriggerOutcome {
        let now = configuration.clock()
        checkTimeRules(now: now)
        return fire(name, properties: properties, now: now)
    }

    /// Shows the top of the stack (the newest waiting message) on demand: nothing when suppressed, in the
    /// background, with no renderer, while the slot is taken or inside the minimum interval (the message
    /// stays). A message no longer eligible is dropped and the next one tried. Returns the message handed
    /// to the renderer, if one was.
    @discardableResult
    public func displayNext() -> InAppMessage? {
        let now = configuration.clock()
        checkTimeRules(now: now)
        guard !messageDisplaySuppressed, inForeground, renderer != nil, slot == nil else { return nil }
        while let top = stack.last {
            guard let current = stillEligible(top, now: now) else {
                stack.removeLast()
                discard(top, .ineligible, now: now)
                continue
            }
            if !current.isTest, insideMinimumInterval(now: now) { return nil }
            stack.removeLast()
            if case .displayed(let shown) = offer(current, now: now) { return shown }
            return nil
        }
        return nil
    }

    /// Puts a message the app made (`InAppMessage(local:data:)`) on top of the stack; `displayNext()`
    /// shows it under the same rules as a campaign's. Nothing about it is reported to Herald.
    public func addToStack(_ message: InAppMessage) {
        checkTimeRules(now: configuration.clock())
        push(message)
    }

    /// Waiting messages, top (next to show) first.
    public var pendingMessages: [InAppMessage] { stack.reversed() }

    /// The message handed to the renderer and not yet ended.
    public var currentMessage: InAppMessage? {
        guard let slot, case .shown = slot.phase else { return nil }
        return slot.message
    }

    /// The message holding the slot while its images load.
    public var messageWaitingForImages: InAppMessage? {
        guard let slot, case .waitingForImages = slot.phase else { return nil }
        return slot.message
    }

    // MARK: The pipeline

    /// §2 for one event: suppression, matching, eligibility, choice, the slot, the interval; then §3.
    func fire(_ name: String, properties: [String: FilterValue], now: Date) -> TriggerOutcome {
        // Before suppression: a suppressed display does not undo what the user did.
        recordGoalConversions(name, properties: properties, now: now)
        guard !messageDisplaySuppressed else { return .suppressed }
        let eligible = campaigns.filter { Eligibility.triggers($0, event: name, properties: properties) && eligibleNow($0, now: now) }
        guard let chosen = Eligibility.pick(eligible) else {
            renderer?.noMatchingTrigger(name)
            return .noMatch
        }
        let message = InAppMessage(campaign: chosen, trigger: name, deviceLanguage: device.language)
        if slot != nil || !inForeground || renderer == nil {
            push(message)
            return .stacked(chosen.id)
        }
        if chosen.test != true, insideMinimumInterval(now: now) {
            discard(message, .throttled, now: now)
            return .throttled(chosen.id)
        }
        switch offer(message, now: now) {
        case .displayed: return .displayed(chosen.id)
        case .pending: return .pending(chosen.id)
        case .stacked: return .stacked(chosen.id)
        case .discarded(let reason): return .discarded(chosen.id, reason)
        }
    }

    /// What became of a message offered to the pipeline.
    enum Offer {
        case displayed(InAppMessage)
        case pending
        case stacked
        case discarded(DiscardReason)
    }

    /// §3 for a message leaving a trigger or the stack, the slot free: orientation, images, the app's
    /// decision, shown. The display timeout counts from `now`.
    func offer(_ waiting: InAppMessage, now: Date) -> Offer {
        let message = waiting.resolved(for: device.language)
        guard message.fits(device.orientation) else {
            discard(message, .orientation, now: now)
            return .discarded(.orientation)
        }
        return proceed(message, waitingSince: now, now: now)
    }

    /// From the images on: discarded when one failed, in the slot while they load, else the decision.
    private func proceed(_ message: InAppMessage, waitingSince: Date, now: Date) -> Offer {
        switch readiness(of: message) {
        case .failed:
            slot = nil
            discard(message, .imageFetch, now: now)
            if !message.isLocal { record(message, type: .error, now: now) { $0.errorCode = .imageFetch } }
            return .discarded(.imageFetch)
        case .loading:
            slot = Slot(message: message, phase: .waitingForImages(since: waitingSince))
            return .pending
        case .loaded(let image, let landscape):
            let ready = message.resolved(for: device.language, imageFile: image, landscapeImageFile: landscape)
            guard let renderer else {
                slot = nil
                push(ready)
                return .stacked
            }
            switch renderer.displayDecision(for: ready) {
            case .show:
                show(ready, on: renderer, now: now)
                return .displayed(ready)
            case .later:
                slot = nil
                push(ready)
                return .stacked
            case .discard:
                slot = nil
                discard(ready, .delegate, now: now)
                return .discarded(.delegate)
            }
        }
    }

    private func show(_ message: InAppMessage, on renderer: any DeliveryDisplayDelegate, now: Date) {
        slot = Slot(message: message, phase: .shown(at: now, impressed: false))
        state.lastDisplay = now
        saveState()
        do {
            try images.touch(message.requiredImages)
        } catch {
            storageFailed(.images, error)
        }
        renderer.display(message)
    }

    /// An image finished loading (or failed): the message waiting in the slot goes on, unless its time ran
    /// out, the app is suppressing display (it goes back on the stack), or it still waits for another image.
    func imagesSettled(now: Date) {
        checkTimeRules(now: now)
        guard let slot, case .waitingForImages(let since) = slot.phase, readiness(of: slot.message) != .loading else { return }
        if messageDisplaySuppressed {
            self.slot = nil
            push(slot.message)
            return
        }
        _ = proceed(slot.message, waitingSince: since, now: now)
    }

    /// The display timeout (images not loaded in time) and the renderer timeout (no word from the renderer).
    func checkTimeRules(now: Date) {
        guard let slot else { return }
        switch slot.phase {
        case .waitingForImages(let since) where now.timeIntervalSince(since) >= configuration.displayTimeout:
            self.slot = nil
            discard(slot.message, .timeout, now: now)
        case .shown(let at, false) where now.timeIntervalSince(at) >= configuration.rendererTimeout:
            // A renderer that never reported may still hold the message: it takes it away, as the web client's does.
            self.slot = nil
            discard(slot.message, .rendererTimeout, now: now)
            renderer?.withdraw(slot.message)
        default:
            break
        }
    }

    /// The app went to the background: a message in the slot before its impression goes back on top of the
    /// stack, and the renderer takes it off the screen if it had it.
    func returnUnseenMessageToStack() {
        guard let slot else { return }
        switch slot.phase {
        case .shown(_, true):
            return
        case .shown:
            self.slot = nil
            push(slot.message)
            renderer?.withdraw(slot.message)
        case .waitingForImages:
            self.slot = nil
            push(slot.message)
        }
    }

    /// Ends the display of `message` if it holds the slot (a click, a dismissal or an error).
    func endDisplay(of message: InAppMessage) {
        if slot?.message.id == message.id { slot = nil }
    }

    /// Notes the impression of the message in the slot: it now holds the slot as long as it is on screen.
    func markImpressed(_ message: InAppMessage) {
        guard let current = slot, current.message.id == message.id, case .shown(let at, _) = current.phase else { return }
        slot?.phase = .shown(at: at, impressed: true)
    }

    // MARK: Rules

    /// Newest on top; a campaign waits only once (a newer trigger moves it up); the bottom drops when full.
    func push(_ message: InAppMessage) {
        stack.removeAll { $0.id == message.id || (message.campaignID != nil && $0.campaignID == message.campaignID) }
        stack.append(message)
        while stack.count > Self.stackLimit {
            discard(stack.removeFirst(), .stackFull, now: configuration.clock())
        }
    }

    func insideMinimumInterval(now: Date) -> Bool {
        guard let last = state.lastDisplay else { return false }
        return now.timeIntervalSince(last) < minimumInterval
    }

    /// A waiting message as it may show now: a local one as it is; a campaign's as the current feed has it,
    /// if it is still there and eligible.
    private func stillEligible(_ message: InAppMessage, now: Date) -> InAppMessage? {
        guard let id = message.campaignID else { return message }
        guard let campaign = feedCampaign(id: id), eligibleNow(campaign, now: now) else { return nil }
        return message.replacingCampaign(campaign, deviceLanguage: device.language)
    }

    func eligibleNow(_ campaign: FeedCampaign, now: Date) -> Bool {
        Eligibility.scheduled(campaign, now: now) && targets(campaign, now: now) && frequencyAllows(campaign, now: now)
    }

    func targets(_ campaign: FeedCampaign, now: Date) -> Bool {
        Eligibility.targets(campaign, device: device, firstOpen: state.firstOpen ?? now, installationID: state.installationID, now: now)
    }

    func frequencyAllows(_ campaign: FeedCampaign, now: Date) -> Bool {
        Eligibility.frequencyAllows(campaign, lastImpression: state.lastImpressions[String(campaign.id)], now: now)
    }

    /// Counts a message chosen and not shown: in `discards`, and (a campaign's) for upload with the events, with
    /// the installation id later only if data collection is on now.
    func discard(_ message: InAppMessage, _ reason: DiscardReason, now: Date) {
        discards[reason, default: 0] += 1
        guard let campaignID = message.campaignID else { return }
        do {
            try discardTally.add(campaignID: campaignID, reason: reason, now: now, identified: automaticDataCollectionEnabled)
        } catch {
            storageFailed(.events, error)
        }
    }
}
