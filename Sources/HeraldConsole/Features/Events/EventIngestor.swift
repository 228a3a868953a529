import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `POST /api/v1/events`: a batch from a delivery component. Good items are stored (once per id, in one
/// transaction with their rollups); bad items are rejected one by one with the reason. Browsers' beacons
/// send the same JSON as text/plain, with the key in the query (see `Route.takesKeyFromQuery`).
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

    struct Answer: Encodable {
        let accepted: Int
        let duplicates: Int
        let rejected: [Rejection]
    }

    func ingest(_ context: RequestContext) throws -> Response {
        guard let key = context.apiKey else { throw HTTPError(401, "Send an API key as `Authorization: Bearer <key>`.") }
        // `navigator.sendBeacon` sends a string as text/plain (a JSON type would need a preflight it cannot make).
        guard context.request.mediaType == "application/json" || context.request.mediaType == "text/plain" else {
            throw HTTPError(415, "Send events as JSON with `Content-Type: application/json` (or `text/plain`, as `navigator.sendBeacon` sends a string).")
        }
        let items: [Batch.Item]
        do {
            items = try EventBatchReader.read(context.request.body)
        } catch {
            throw HTTPError(400, error.message)
        }
        guard items.count <= Self.maxEvents else {
            throw HTTPError(422, "A batch holds at most \(Self.maxEvents) events; this one has \(items.count). Send it in smaller batches.",
                            fields: [FieldProblem("events", "At most \(Self.maxEvents) events.")])
        }
        let campaigns = try services.database.events.campaignIDs(appID: key.appID)
        let testDevices = Set(try services.database.apps.testDevices(appID: key.appID).map(\.installationID))
        var events: [Event] = []
        var rejected: [Rejection] = []
        for (index, item) in items.enumerated() {
            switch check(item, appID: key.appID, campaigns: campaigns, testDevices: testDevices, now: context.now) {
            case .success(let event): events.append(event)
            case .failure(let problem): rejected.append(Rejection(index: index, error: problem.reason))
            }
        }
        let (accepted, duplicates) = try services.database.events.ingest(events, now: context.now)
        RequestMetrics.recordEvents(accepted: accepted, duplicates: duplicates, rejected: rejected.count)
        return .json(Array(try CampaignJSON.encoder().encode(Answer(accepted: accepted, duplicates: duplicates, rejected: rejected))))
    }

    struct Problem: Error {
        let reason: String
    }

    private func check(
        _ item: Batch.Item, appID: Int64, campaigns: Set<Int64>, testDevices: Set<String>, now: Date
    ) -> Result<Event, Problem> {
        guard let item = item.fields else { return .failure(Problem(reason: item.wrongType ?? "Each event must be a JSON object.")) }
        guard let id = item.id.flatMap(Self.canonicalUUID) else {
            return .failure(Problem(reason: "`id` must be a UUID the client made for this event, so a retried batch counts once."))
        }
        guard let type = item.type.flatMap(EventType.init(rawValue:)) else {
            return .failure(Problem(reason: "`type` must be \(EventType.spokenList)."))
        }
        guard let campaignID = item.campaignId, campaigns.contains(campaignID) else {
            return .failure(Problem(reason: "`campaignId` must be a campaign of this key's app."))
        }
        guard let occurredText = item.occurredAt,
              let occurredAt = UTCTime.date(rfc3339: occurredText) else {
            return .failure(Problem(reason: "`occurredAt` must be an RFC 3339 time such as 2026-11-21T10:15:00Z."))
        }
        guard occurredAt <= now.addingTimeInterval(Self.futureTolerance), occurredAt >= Self.earliest else {
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

    /// `{"events": [...]}`, read by `EventBatchReader`.
    enum Batch {
        /// One event as sent: its fields, or why it is not an object of the expected field types.
        struct Item {
            let fields: Fields?
            let wrongType: String?

            init(fields: Fields) {
                self.fields = fields
                wrongType = nil
            }

            init(wrongType: String) {
                fields = nil
                self.wrongType = wrongType
            }

            /// Every field an event may carry, all optional: which are required depends on `type`.
            struct Fields {
                var id, type, occurredAt, platform, installationId, action, url, dismissType, errorCode, event, language: String?
                var campaignId: Int64?

                /// The text fields by their JSON name.
                static let text: [String: WritableKeyPath<Fields, String?> & Sendable] = [
                    "id": \.id, "type": \.type, "occurredAt": \.occurredAt, "platform": \.platform,
                    "installationId": \.installationId, "action": \.action, "url": \.url, "dismissType": \.dismissType,
                    "errorCode": \.errorCode, "event": \.event, "language": \.language,
                ]
            }
        }
    }
}

/// `DELETE /api/v1/installations/{installationId}`: erase one installation's raw events and its registration.
struct InstallationEraser: Sendable {
    let services: Services

    private struct Answer: Encodable {
        let installationId: String
        let erasedEvents: Int
        let erasedRegistration: Bool
    }

    func erase(_ context: RequestContext) throws -> Response {
        guard let key = context.apiKey else { throw HTTPError(401, "Send an API key as `Authorization: Bearer <key>`.") }
        let installation = try InstallationRegistrar.addressedID(context)
        let erased = try services.database.events.eraseInstallation(installation, appID: key.appID, actor: context.actor, now: context.now)
        let answer = Answer(installationId: installation, erasedEvents: erased.events, erasedRegistration: erased.registration)
        return .json(Array(try CampaignJSON.encoder().encode(answer)))
    }
}
