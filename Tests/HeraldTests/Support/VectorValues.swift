import Foundation
import HeraldDelivery
import HeraldDomain

extension JSONValue {
    var string: String? { if case .string(let text) = self { text } else { nil } }
    var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    var array: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    var members: [(key: String, value: JSONValue)] { if case .object(let members) = self { members } else { [] } }
    var number: Double? { numberValue }
}

/// Reading a conformance vector's values, and writing what the client did the way a vector says it.
enum VectorValue {
    static func string(_ value: JSONValue?, _ field: String) throws -> String {
        guard let text = value?.string else { throw TestFailure("\(field) must be a string") }
        return text
    }

    static func number(_ value: JSONValue?, _ field: String) throws -> Double {
        guard let number = value?.number else { throw TestFailure("\(field) must be a number") }
        return number
    }

    static func bool(_ value: JSONValue?, _ field: String) throws -> Bool {
        guard let flag = value?.bool else { throw TestFailure("\(field) must be true or false") }
        return flag
    }

    static func date(_ value: JSONValue?) throws -> Date {
        guard let text = value?.string, let date = UTCTime.date(rfc3339: text) else { throw TestFailure("a time must be RFC 3339: \(value?.text ?? "none")") }
        return date
    }

    static func enumeration<Value: RawRepresentable<String>>(_ type: Value.Type, _ value: JSONValue?, _ field: String) throws -> Value {
        guard let text = value?.string, let parsed = Value(rawValue: text) else { throw TestFailure("\(field) \(value?.text ?? "none") is not one of \(Value.self)") }
        return parsed
    }

    /// The renderer's answers as vectors write them.
    enum Decision: String {
        case show, later, discard

        var decision: DisplayDecision {
            switch self {
            case .show: .show
            case .later: .later
            case .discard: .discard
            }
        }
    }

    static func properties(_ value: JSONValue?) throws -> [String: FilterValue] {
        guard let value else { return [:] }
        return try CampaignJSON.decoder().decode([String: FilterValue].self, from: Data(value.text.utf8))
    }

    /// The vector's device fields over `base` (all of them for the vector's `device`, some for a `device` step).
    static func device(_ value: JSONValue, over base: DeviceContext?) throws -> DeviceContext {
        var device = base ?? DeviceContext(platform: .ios, appVersion: "1.0.0", language: "en", country: "US")
        if let platform = value["platform"] { device.platform = try enumeration(Platform.self, platform, "platform") }
        if let version = value["appVersion"] { device.appVersion = try string(version, "appVersion") }
        if let language = value["language"] { device.language = try string(language, "language") }
        if let country = value["country"] { device.country = try string(country, "country") }
        if let orientation = value["orientation"] { device.orientation = try enumeration(DeviceOrientation.self, orientation, "orientation") }
        if let properties = value["userProperties"] { device.userProperties = try Self.properties(properties) }
        return device
    }

    /// A push payload as the app gets it: strings, numbers and dictionaries (`aps`).
    static func userInfo(_ value: JSONValue?) -> [AnyHashable: Any] {
        var info: [AnyHashable: Any] = [:]
        for member in value?.members ?? [] {
            switch member.value {
            case .string(let text): info[member.key] = text
            case .number(let number): info[member.key] = number == number.rounded() && abs(number) < 1e15 ? Int(number) as Any : number
            case .bool(let flag): info[member.key] = flag
            case .object: info[member.key] = userInfo(member.value)
            default: info[member.key] = member.value.text
            }
        }
        return info
    }

    /// A message as the vector names it: its campaign id, or `local`.
    static func id(_ message: InAppMessage) -> String {
        message.campaignID.map(String.init) ?? "local"
    }

    /// An expected id: a number, `"local"`, or null.
    static func id(_ value: JSONValue) -> String {
        if let number = value.number { return String(Int64(number)) }
        return value.string ?? "null"
    }

    /// Discard counts summed per campaign, reason, day and installation id, one line each, in one order.
    static func discardLines(_ counts: [(campaign: Int64, reason: String, day: String, count: Int, installation: String)]) -> [String] {
        var sums: [String: Int] = [:]
        for count in counts {
            sums["campaignId=\(count.campaign) reason=\(count.reason) day=\(count.day) installationId=\(count.installation)", default: 0] += count.count
        }
        return sums.map { "\($0.key) count=\($0.value)" }.sorted()
    }

    /// Expected custom data, a list of `{"key", "value"}`, as one line of its pairs in order.
    static func pairs(_ expected: JSONValue) -> String {
        (expected.array ?? []).map { pair(key: $0["key"]?.string ?? "?", value: $0["value"]?.string ?? "?") }.joined(separator: ", ")
    }

    /// The custom data a renderer got, written as `pairs(_:)` writes the expected.
    static func pairs(_ data: CustomData) -> String {
        data.pairs.map { pair(key: $0.key, value: $0.value) }.joined(separator: ", ")
    }

    /// A pair with its text JSON-quoted, so an empty value or one with a comma or a line break reads unambiguously.
    private static func pair(key: String, value: String) -> String {
        "\(JSONValue.string(key).text)=\(JSONValue.string(value).text)"
    }

    static func describe(_ result: TriggerResult) -> String {
        let (name, campaign, reason): (String, Int64?, DiscardReason?) = switch result.outcome {
        case .displayed(let id): ("displayed", id, nil)
        case .stacked(let id): ("stacked", id, nil)
        case .throttled(let id): ("throttled", id, nil)
        case .pending(let id): ("pending", id, nil)
        case .discarded(let id, let why): ("discarded", id, why)
        case .suppressed: ("suppressed", nil, nil)
        case .noMatch: ("noMatch", nil, nil)
        }
        return outcome(event: result.event, name: name, campaign: campaign.map(String.init), reason: reason?.rawValue)
    }

    static func outcomes(_ expected: JSONValue) -> String {
        (expected.array ?? []).map { item in
            outcome(event: item["event"]?.string ?? "?", name: item["outcome"]?.string ?? "?",
                    campaign: item["campaign"].flatMap { $0.number.map { String(Int64($0)) } }, reason: item["reason"]?.string)
        }.joined(separator: ", ")
    }

    private static func outcome(event: String, name: String, campaign: String?, reason: String?) -> String {
        "\(event) → \(name)" + (campaign.map { " \($0)" } ?? "") + (reason.map { " (\($0))" } ?? "")
    }

    /// The fields an event is compared on; `secondsAfterStart` and `installationId` only when the vector gives them.
    static func eventFields(_ expected: JSONValue?) -> [String] {
        var fields = ["type", "campaignId", "language", "action", "url", "dismissType", "errorCode", "event"]
        for optional in ["secondsAfterStart", "installationId"] where expected == nil || expected?[optional] != nil {
            fields.append(optional)
        }
        return fields
    }

    /// An expected event as one line of its compared fields.
    static func line(expected: JSONValue) -> String {
        eventFields(expected).map { field in
            let value = expected[field]
            let text = switch value {
            case .number(let number)?: number == number.rounded() ? String(Int64(number)) : String(number)
            case let other?: other.string ?? other.text
            case nil: "-"
            }
            return "\(field)=\(text)"
        }.joined(separator: " ")
    }

    /// An event the client made as one line of the fields `expected` compares (all of them without one).
    static func line(_ event: OutgoingEvent, expected: JSONValue?, start: Date, installationID: String?) -> String {
        eventFields(expected).map { field in
            let text: String = switch field {
            case "type": event.type.rawValue
            case "campaignId": String(event.campaignId)
            case "language": event.language ?? "-"
            case "action": event.action?.rawValue ?? "-"
            case "url": event.url ?? "-"
            case "dismissType": event.dismissType?.rawValue ?? "-"
            case "errorCode": event.errorCode?.rawValue ?? "-"
            case "event": event.event ?? "-"
            case "secondsAfterStart":
                { let seconds = event.occurredAt.timeIntervalSince(start); return seconds == seconds.rounded() ? String(Int64(seconds)) : String(seconds) }()
            case "installationId": event.installationId.map { $0 == installationID ? "true" : "another (\($0))" } ?? "false"
            default: "?"
            }
            return "\(field)=\(text)"
        }.joined(separator: " ")
    }
}
