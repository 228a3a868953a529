import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `POST /api/v1/events`: a batch from a delivery component, its events and its discard counts. Good items are
/// stored (once per id, in one transaction with their rollups); bad items are rejected one by one with the
/// reason. Browsers' beacons send the same JSON as text/plain, with the key in the query (see
/// `Route.takesKeyFromQuery`).
struct EventIngestor: Sendable {
    let services: Services

    static let maxEvents = 1000
    /// Devices' clocks drift: an event may claim to be this far in the future, no further.
    static let futureTolerance: TimeInterval = 3600
    static let earliest = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01

    struct Rejection: Encodable, Equatable {
        let index: Int
        let error: String
    }

    /// What became of a batch's events, and (`discards`) of its discard counts.
    struct Answer: Encodable {
        let accepted: Int
        let duplicates: Int
        let rejected: [Rejection]
        let discards: Outcome

        /// What became of the discard counts.
        struct Outcome: Encodable {
            let accepted: Int
            let duplicates: Int
            let rejected: [Rejection]
        }
    }

    func ingest(_ context: RequestContext, key: APIKey) throws -> Response {
        // `navigator.sendBeacon` sends a string as text/plain (a JSON type would need a preflight it cannot make).
        guard context.request.mediaType == "application/json" || context.request.mediaType == "text/plain" else {
            throw HTTPError(415, "Send events as JSON with `Content-Type: application/json` (or `text/plain`, as `navigator.sendBeacon` sends a string).")
        }
        let batch: EventBatch
        do {
            batch = try EventBatchReader.read(context.request.body)
        } catch {
            throw HTTPError(400, error.message)
        }
        guard batch.events.count <= Self.maxEvents else {
            throw HTTPError(422, "A batch holds at most \(Self.maxEvents) events; this one has \(batch.events.count). Send it in smaller batches.",
                            fields: [FieldProblem("events", "At most \(Self.maxEvents) events.")])
        }
        guard batch.discards.count <= DiscardCount.maxPerBatch else {
            throw HTTPError(
                422, "A batch holds at most \(DiscardCount.maxPerBatch) discard counts; this one has \(batch.discards.count). Send them in smaller batches.",
                fields: [FieldProblem("discards", "At most \(DiscardCount.maxPerBatch) discard counts.")])
        }
        let campaigns = try services.database.events.campaignChannels(appID: key.appID)
        let testDevices = Set(try services.database.apps.testDevices(appID: key.appID).map(\.installationID))
        let (events, rejected) = Self.sorted(batch.events) { check($0, appID: key.appID, campaigns: campaigns, testDevices: testDevices, now: context.now) }
        let (discards, rejectedDiscards) = Self.sorted(batch.discards) {
            check($0, appID: key.appID, campaigns: campaigns, testDevices: testDevices, now: context.now)
        }
        let stored = try services.database.events.ingest(events, discards: discards, now: context.now)
        RequestMetrics.recordEvents(accepted: stored.events.accepted, duplicates: stored.events.duplicates, rejected: rejected.count)
        let answer = Answer(
            accepted: stored.events.accepted, duplicates: stored.events.duplicates, rejected: rejected,
            discards: .init(accepted: stored.discards.accepted, duplicates: stored.discards.duplicates, rejected: rejectedDiscards))
        return .json(Array(try CampaignJSON.encoder().encode(answer)))
    }

    struct Problem: Error {
        let reason: String
    }

    /// The items `check` keeps, and a rejection for each it refuses, by the item's index.
    private static func sorted<Item, Kept>(_ items: [Item], _ check: (Item) -> Result<Kept, Problem>) -> (kept: [Kept], rejected: [Rejection]) {
        var kept: [Kept] = []
        var rejected: [Rejection] = []
        for (index, item) in items.enumerated() {
            switch check(item) {
            case .success(let value): kept.append(value)
            case .failure(let problem): rejected.append(Rejection(index: index, error: problem.reason))
            }
        }
        return (kept, rejected)
    }

    private func check(
        _ item: EventBatch.Item<EventFields>, appID: Int64, campaigns: [Int64: Channel], testDevices: Set<String>, now: Date
    ) -> Result<Event, Problem> {
        guard let item = item.fields else { return .failure(Problem(reason: item.wrongType ?? "Each event must be a JSON object.")) }
        guard let id = item.id.flatMap(Self.canonicalUUID) else {
            return .failure(Problem(reason: "`id` must be a UUID the client made for this event, so a retried batch counts once."))
        }
        guard let type = item.type.flatMap(EventType.init(rawValue:)) else {
            return .failure(Problem(reason: "`type` must be \(EventType.spokenList)."))
        }
        guard let campaignID = item.campaignId, let channel = campaigns[campaignID] else {
            return .failure(Problem(reason: "`campaignId` must be a campaign of this key's app."))
        }
        guard type.channel == channel else {
            return .failure(Problem(reason: Self.otherChannel(type: type.rawValue, campaignID: campaignID, channel: channel)))
        }
        guard let occurredText = item.occurredAt,
              let occurredAt = UTCTime.date(rfc3339: occurredText) else {
            return .failure(Problem(reason: "`occurredAt` must be an RFC 3339 time such as 2026-11-21T10:15:00Z."))
        }
        guard Self.plausible(occurredAt, now: now) else {
            return .failure(Problem(reason: "`occurredAt` is too far in the future or the past; check the device's clock."))
        }
        guard let platform = item.platform, Platform(rawValue: platform) != nil else {
            return .failure(Problem(reason: "`platform` must be ios, android or web."))
        }
        let installation = item.installationId
        if let installation, !InstallationID.isValid(installation) {
            return .failure(Problem(reason: "`installationId` must be \(InstallationID.rule), or absent when the user has not opted in."))
        }
        var language: String?
        if let tag = item.language {
            guard LanguageTag.isValid(tag) else {
                return .failure(Problem(reason: "`language` must be the language tag of the version shown, such as fa, de or pt-BR (at most \(LanguageTag.maxLength) characters), or absent for the default version."))
            }
            language = LanguageTag.canonical(tag)
        }
        let detail: String
        var url: String?
        switch type {
        case .impression, .pushReceived, .pushOpen:
            detail = ""
        case .click:
            guard let action = item.action.flatMap(ClickAction.init(rawValue:)) else {
                return .failure(Problem(reason: "A click needs `action`: \(ClickAction.spokenList)."))
            }
            detail = action.rawValue
            url = item.url
            if let url, url.scalarCount > 2000 { return .failure(Problem(reason: "`url` is longer than 2000 characters (Unicode scalars).")) }
        case .dismiss:
            guard let kind = item.dismissType.flatMap(DismissType.init(rawValue:)) else {
                return .failure(Problem(reason: "A dismiss needs `dismissType`: \(DismissType.spokenList)."))
            }
            detail = kind.rawValue
        case .error:
            guard let code = item.errorCode.flatMap(DisplayErrorCode.init(rawValue:)) else {
                return .failure(Problem(reason: "An error needs `errorCode`: \(DisplayErrorCode.spokenList)."))
            }
            detail = code.rawValue
        case .conversion:
            guard let event = item.event, EventID.problem(event) == nil else {
                return .failure(Problem(reason: "A conversion needs `event`, the conversion's event ID (a letter first, then letters, digits, _)."))
            }
            detail = event
        }
        return .success(Event(
            id: id, appID: appID, campaignID: campaignID, type: type, occurredAt: occurredAt, platform: platform,
            installationID: installation, detail: detail, url: url, test: installation.map(testDevices.contains) ?? false,
            language: language))
    }

    /// Whether a device may claim `date`: from `earliest` to `futureTolerance` past `now`.
    static func plausible(_ date: Date, now: Date) -> Bool {
        date >= earliest && date <= now.addingTimeInterval(futureTolerance)
    }

    /// A discard count kept, or why it is refused: a UUID id, an in-app campaign of the app, a reason of the
    /// vocabulary, a UTC day a device may claim, a count from 1 to `DiscardCount.maxCount`.
    private func check(
        _ item: EventBatch.Item<DiscardFields>, appID: Int64, campaigns: [Int64: Channel], testDevices: Set<String>, now: Date
    ) -> Result<Discard, Problem> {
        guard let item = item.fields else { return .failure(Problem(reason: item.wrongType ?? "Each discard count must be a JSON object.")) }
        guard let id = item.id.flatMap(Self.canonicalUUID) else {
            return .failure(Problem(reason: "`id` must be a UUID the client made for this count, so a retried upload counts once."))
        }
        guard let campaignID = item.campaignId, let channel = campaigns[campaignID] else {
            return .failure(Problem(reason: "`campaignId` must be a campaign of this key's app."))
        }
        guard channel == .inApp else {
            return .failure(Problem(reason: "`campaignId` \(campaignID) is a push campaign: discards are about in-app campaigns' messages."))
        }
        guard let reason = item.reason.flatMap(DiscardReason.init(rawValue:)) else {
            return .failure(Problem(reason: "`reason` must be \(DiscardReason.spokenList)."))
        }
        guard let dayText = item.day, let day = UTCTime.date(day: dayText), Self.plausible(day, now: now) else {
            return .failure(Problem(reason: "`day` must be the UTC day of the discards, such as 2026-11-21, from 2020-01-01 to today; check the device's clock."))
        }
        guard let count = item.count, (1...Int64(DiscardCount.maxCount)).contains(count) else {
            return .failure(Problem(reason: "`count` must be a whole number from 1 to \(DiscardCount.maxCount)."))
        }
        let installation = item.installationId
        if let installation, !InstallationID.isValid(installation) {
            return .failure(Problem(reason: "`installationId` must be \(InstallationID.rule), or absent when the user has not opted in."))
        }
        return .success(Discard(
            id: id, appID: appID, campaignID: campaignID, reason: reason, day: UTCTime.day(day), count: Int(count),
            test: installation.map(testDevices.contains) ?? false))
    }

    /// Why an event of `type` cannot be about campaign `campaignID`, a campaign of `channel`.
    static func otherChannel(type: String, campaignID: Int64, channel: Channel) -> String {
        let kind = channel == .push ? "a push campaign" : "an in-app campaign"
        return "`campaignId` \(campaignID) is \(kind): its events are \(channel.eventTypes.map(\.rawValue).spokenList), not \(type)."
    }

    /// `text` in lower case if it is a UUID in the 8-4-4-4-12 hex form, else nil. By hand: this runs for
    /// every event, and `UUID(uuidString:)` costs more than storing the event.
    static func canonicalUUID(_ text: String) -> String? {
        guard text.utf8.count == 36 else { return nil }
        var canonical: [UInt8] = []
        canonical.reserveCapacity(36)
        for (index, byte) in text.utf8.enumerated() {
            switch (index, byte) {
            case (8, UInt8(ascii: "-")), (13, UInt8(ascii: "-")), (18, UInt8(ascii: "-")), (23, UInt8(ascii: "-")):
                canonical.append(byte)
            case (8, _), (13, _), (18, _), (23, _):
                return nil
            case (_, UInt8(ascii: "0")...UInt8(ascii: "9")), (_, UInt8(ascii: "a")...UInt8(ascii: "f")):
                canonical.append(byte)
            case (_, UInt8(ascii: "A")...UInt8(ascii: "F")):
                canonical.append(byte | 0x20)
            default:
                return nil
            }
        }
        return String(decoding: canonical, as: UTF8.self)
    }
}
