import Foundation
import HeraldDomain

/// What happened to an upload.
public enum UploadResult: Sendable, Equatable {
    /// Every queued event reached the server (`accepted` new, the rest already stored), or was refused for good.
    case uploaded(accepted: Int, duplicates: Int, rejected: Int)
    /// Nothing to send, an upload already under way, or waiting for the backoff to pass.
    case idle
    /// Kept for a later retry.
    case failed(String)
    /// The server refused the key (401) or its scope (403): nothing more until `resume(apiKey:)`.
    case stopped(Int)
}

/// What the renderer and the app report, the events they become, and their upload (`docs/delivery-semantics.md` §6).
extension DeliveryClient {
    /// The renderer showed the message: it holds the slot as long as it is on screen, and its campaign's
    /// impression counts for frequency.
    public func impressionDetected(_ message: InAppMessage) {
        let now = configuration.clock()
        checkTimeRules(now: now)
        markImpressed(message)
        guard let campaignID = message.campaignID else { return }
        state.lastImpressions[String(campaignID)] = now
        saveState()
        record(message, type: .impression, now: now)
    }

    /// A click ends the display, as it does in the standard display components.
    public func messageClicked(_ message: InAppMessage, action: ClickAction, url: String? = nil) {
        let now = configuration.clock()
        checkTimeRules(now: now)
        record(message, type: .click, now: now) {
            $0.action = action
            $0.url = url
        }
        endDisplay(of: message)
    }

    public func messageDismissed(_ message: InAppMessage, type: DismissType) {
        let now = configuration.clock()
        checkTimeRules(now: now)
        record(message, type: .dismiss, now: now) { $0.dismissType = type }
        endDisplay(of: message)
    }

    public func displayError(_ message: InAppMessage, code: DisplayErrorCode) {
        let now = configuration.clock()
        checkTimeRules(now: now)
        record(message, type: .error, now: now) { $0.errorCode = code }
        endDisplay(of: message)
    }

    /// A conversion (such as a purchase) that the app attributes to a message.
    public func recordConversion(_ event: String, for message: InAppMessage) {
        let now = configuration.clock()
        checkTimeRules(now: now)
        record(message, type: .conversion, now: now) { $0.event = event }
    }

    /// §6.2: an event the app fires is a conversion for each campaign whose goal it matches, inside the
    /// goal's window after the device's last impression of that campaign; one `conversion` event per
    /// campaign per firing, in the language version the device is shown.
    func recordGoalConversions(_ name: String, properties: [String: FilterValue], now: Date) {
        for campaign in campaigns {
            guard let goal = campaign.conversion, Eligibility.converts(goal, event: name, properties: properties),
                  let shownAt = state.lastImpressions[String(campaign.id)], goal.covers(shownAt: shownAt, now: now) else { continue }
            let language = InAppMessage(campaign: campaign, trigger: name, deviceLanguage: device.language).language
            record(campaignID: campaign.id, type: .conversion, language: language, now: now) { $0.event = name }
        }
    }

    /// Queues an event for a campaign's message; a locally created message reports nothing.
    func record(_ message: InAppMessage, type: EventType, now: Date, detail: (inout OutgoingEvent) -> Void = { _ in }) {
        guard let campaignID = message.campaignID else { return }
        record(campaignID: campaignID, type: type, language: message.language, now: now, detail: detail)
    }

    /// Queues an event for a campaign (a message's, or a push's), with the installation id only while data collection is on.
    func record(campaignID: Int64, type: EventType, language: String?, now: Date, detail: (inout OutgoingEvent) -> Void = { _ in }) {
        var event = OutgoingEvent(
            id: TimeOrderedUUID.make(at: now).uuidString.lowercased(), type: type, campaignId: campaignID, occurredAt: now,
            platform: device.platform.rawValue, installationId: automaticDataCollectionEnabled ? state.installationID : nil,
            language: language)
        detail(&event)
        do {
            try queue.append(event)
        } catch {
            storageFailed(.events, error)
        }
    }

    // MARK: Upload

    /// Events waiting to be uploaded, oldest first.
    public var queuedEvents: [OutgoingEvent] { queue.events }

    /// Events dropped because the queue was full (the oldest go first), since this client started.
    public var droppedEventCount: Int { queue.dropped }

    /// Discard counts waiting to be uploaded with the events, oldest first, as they will be sent.
    public var pendingDiscards: [OutgoingDiscard] { discardTally.entries.map(outgoing) }

    /// Discards dropped with the oldest counts when too many waited, since this client started.
    public var droppedDiscardCount: Int { discardTally.dropped }

    /// A count as it leaves the device: with the installation id only if data collection was on when it started
    /// and is on now.
    private func outgoing(_ entry: DiscardTally.Entry) -> OutgoingDiscard {
        OutgoingDiscard(
            id: entry.id, campaignId: entry.campaignId, reason: entry.reason, day: entry.day, count: entry.count,
            installationId: entry.identified && automaticDataCollectionEnabled ? state.installationID : nil)
    }

    /// Uploads queued events in batches, the discard counts with the first. Ids never change, and a count taken
    /// by an upload never changes again, so a retry after a lost answer counts once.
    /// After a failure, retries wait as feed fetches do (1 s, 2 s, 4 s … 5 min, ±20 %, never before
    /// `Retry-After`). A batch refused as a whole (a 4xx other than 401, 403, 408 and 429) is dropped.
    @discardableResult
    public func flushEvents() async -> UploadResult {
        if let stoppedStatus { return .stopped(stoppedStatus) }
        guard !queue.isEmpty || !discardTally.isEmpty, !uploading, configuration.clock() >= nextUploadAttempt else { return .idle }
        uploading = true
        defer { uploading = false }
        var accepted = 0, duplicates = 0, rejected = 0
        while !queue.isEmpty || !discardTally.isEmpty {
            let batch = Array(queue.events.prefix(max(1, configuration.uploadBatchSize)))
            let discards = discardTally.takeForUpload { storageFailed(.events, $0) }
            let body: Data
            do {
                body = try CampaignJSON.encoder().encode(UploadBody(events: batch, discards: discards.isEmpty ? nil : discards.map(outgoing)))
            } catch {
                return uploadFailed("the events did not encode: \(error)", retryAfter: nil)
            }
            let request = TransportRequest(
                method: "POST", url: configuration.serverURL.appendingPathComponent("api/v1/events"),
                headers: ["Authorization": "Bearer \(apiKey)", "Content-Type": "application/json"], body: body)
            let response: TransportResponse
            do {
                response = try await configuration.transport.send(request)
            } catch {
                return uploadFailed("\(error)", retryAfter: nil)
            }
            switch response.status {
            case 200..<300:
                // 2xx means stored durably, whether or not the answer reads.
                let answer = try? CampaignJSON.decoder().decode(UploadAnswer.self, from: response.body)
                accepted += answer?.accepted ?? batch.count
                duplicates += answer?.duplicates ?? 0
                rejected += answer?.rejected.count ?? 0
                acknowledge(batch, discards)
            case 401, 403:
                stop(status: response.status)
                return .stopped(response.status)
            case 408, 429, 500...:
                let retryAfter = RetryAfter.delay(response.header("Retry-After"), now: configuration.clock())
                return uploadFailed("the server answered \(response.status)", retryAfter: retryAfter)
            case 400..<500:
                // Refused as a whole: it would never pass, so it is dropped rather than retried forever.
                rejected += batch.count
                acknowledge(batch, discards)
            default:
                return uploadFailed("the server answered \(response.status)", retryAfter: nil)
            }
        }
        uploadBackoff.reset()
        nextUploadAttempt = .distantPast
        return .uploaded(accepted: accepted, duplicates: duplicates, rejected: rejected)
    }

    /// A batch as the events endpoint takes it.
    private struct UploadBody: Encodable {
        let events: [OutgoingEvent]
        let discards: [OutgoingDiscard]?
    }

    private struct UploadAnswer: Decodable {
        struct Rejection: Decodable { let index: Int }
        let accepted: Int
        let duplicates: Int
        let rejected: [Rejection]
    }

    private func acknowledge(_ batch: [OutgoingEvent], _ discards: [DiscardTally.Entry]) {
        do {
            try queue.remove(ids: Set(batch.map(\.id)))
        } catch {
            storageFailed(.events, error)
        }
        guard !discards.isEmpty else { return }
        do {
            try discardTally.remove(ids: Set(discards.map(\.id)))
        } catch {
            storageFailed(.events, error)
        }
    }

    private func uploadFailed(_ reason: String, retryAfter: TimeInterval?) -> UploadResult {
        let delay = uploadBackoff.delayAfterFailure(random: configuration.random(), retryAfter: retryAfter)
        nextUploadAttempt = configuration.clock().addingTimeInterval(delay)
        return .failed(reason)
    }
}
