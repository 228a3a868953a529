import Foundation
import TestSupport
import HeraldDomain
import PropertyBased

/// Campaign JSON cases: valid documents, and valid documents with one thing broken, each with the
/// answer the format documents for it (a 400 for what cannot be read, a 422 for what breaks a rule).
enum CampaignCases {
    static func generator(app: Int64) -> Generator<CampaignCase, Shrink.None<CampaignCase>> {
        Generated.cases { draw in make(&draw, app: app) }
    }

    static func make(_ draw: inout Draw, app: Int64) -> CampaignCase {
        let (sent, stored, unordered) = ValidCampaign.document(&draw, app: app)
        func answer(_ json: JSONValue, _ expected: Expected) -> CampaignCase {
            CampaignCase(body: Array(json.text.utf8), expected: expected, stored: stored, dataOrderUnknown: unordered)
        }
        switch draw.int(0...19) {
        case 0...7:
            return answer(sent, .stored)
        case 8:
            // `message.translations` and `push.translations` map language tags to versions: a new key there
            // is a tag, not a misspelt field.
            let paths = sent.objectPaths.filter { !(unordered && $0 == "data") && $0 != "message.translations" && $0 != "push.translations" }
            let path = draw.pick(paths)
            let key = draw.pick(["colour", "priorty", "Name", "", "extra", "نام", "timezone", "filter", "__proto__"])
            let parent = path.isEmpty ? sent : sent.at(path) ?? sent
            return answer(path.isEmpty ? sent.setting(key, .number(1)) : sent.replacing(path, with: parent.setting(key, .number(1))),
                          .refused([422], "unknown key \(key) in \(path.isEmpty ? "the campaign" : path)"))
        case 9:
            return wrongType(&draw, sent, answer)
        case 10:
            let required = ["app", "name", "message", "message.layout", "triggers.0.event", "triggers.0.filters.0.property",
                            "triggers.0.filters.0.op", "frequency.type", "message.title.text", "message.action.url",
                            "message.dismiss.seconds", "targeting.appVersion.value", "message.primaryAction.text"]
                .filter { sent.at($0) != nil && sent.at($0).map { if case .null = $0 { false } else { true } } == true }
            let path = draw.pick(required)
            return answer(sent.replacing(path, with: draw.chance(0.8) ? nil : .null), .refused([400], "\(path) missing or null"))
        case 11:
            let key = draw.pick(["start", "end"])
            if draw.chance(0.3) {
                let schedule = JSONValue.object([(key, .string(GeneratedTime.outOfRange(&draw)))])
                return answer(sent.setting("schedule", schedule), .refused([422], "a time outside the supported range"))
            }
            let schedule = JSONValue.object([(key, .string(GeneratedTime.invalid(&draw)))])
            return answer(sent.setting("schedule", schedule), .refused([400], "a time the format does not allow"))
        case 12, 13:
            let (path, value, reason) = ruleBreak(&draw, sent)
            return answer(sent.setting(path, value), .refused([422], reason))
        case 14:
            let (path, token, statuses) = draw.pick([
                ("priority", "1e40", [400]), ("priority", "9223372036854775808", [400]), ("priority", "2.5", [400]),
                ("priority", "-9223372036854775809", [400]), ("app", "1.5", [400]),
                ("priority", "9223372036854775807", [422]), ("priority", "-1", [422]), ("app", "18446744073709551616", [400]),
                ("testOnDevice", "1", [400]), ("priority", "1e400", [400]),
            ] as [(String, String, Set<Int>)])
            return answer(sent.setting(path, .literal(token)), .refused(statuses, "\(path): \(token)"))
        case 15:
            let depth = draw.int(1...70)
            let nested = (0..<depth).reduce(JSONValue.number(1)) { inner, _ in .array([inner]) }
            return answer(sent.setting("extra", nested),
                          1 + depth > 32 ? .refused([400], "nested \(1 + depth) levels deep") : .refused([422], "unknown key extra"))
        case 16:
            var bytes = Array(sent.text.utf8)
            switch draw.int(0...3) {
            case 0: bytes = Array(bytes.prefix(draw.int(0...(bytes.count - 1))))
            case 1: bytes += Array(draw.pick(["x", "}", ",", " {}", "\u{0}"]).utf8)
            case 2: bytes.insert(draw.pick([0xFF, 0xC0, 0x80, 0xED]), at: draw.int(0...bytes.count))
            default: bytes = Array(draw.pick(["", " ", "null", "[]", "\"campaign\"", "{}", "1"]).utf8)
            }
            return CampaignCase(body: bytes, expected: .refused([400], "not a readable campaign"), stored: stored, dataOrderUnknown: unordered)
        case 17:
            var refused = answer(sent, .refused([415], "not sent as JSON"))
            refused.contentType = draw.pick(["text/plain", "application/x-www-form-urlencoded", "application/jsonx", "", "json"])
            return refused
        case 18:
            var accepted = answer(sent, .stored)
            accepted.contentType = draw.pick(["application/json; charset=utf-8", "APPLICATION/JSON", " application/json ; x=y"])
            return accepted
        default:
            return undocumented(&draw, sent, stored, unordered)
        }
    }

    /// A value of the wrong JSON type where the format names one.
    static func wrongType(_ draw: inout Draw, _ sent: JSONValue, _ answer: (JSONValue, Expected) -> CampaignCase) -> CampaignCase {
        enum Kind { case text, integer, flag, object, array, list }
        let fields: [(String, Kind)] = [
            ("app", .integer), ("name", .text), ("priority", .integer), ("testOnDevice", .flag), ("message", .object),
            ("message.layout", .text), ("triggers", .array), ("schedule", .object), ("frequency", .object), ("targeting", .object),
            ("schedule.timeZone", .text), ("schedule.start", .text), ("message.title.text", .text), ("message.title", .object),
            ("message.dismiss.seconds", .integer), ("triggers.0.event", .text), ("triggers.0.filters", .array),
            ("targeting.percentage", .integer), ("targeting.platforms", .array), ("data", .list), ("description", .text),
            ("targeting.platforms.0", .text), ("message.primaryAction", .object), ("frequency.days", .integer),
        ]
        let present = fields.filter { field in sent.at(field.0).map { if case .null = $0 { false } else { true } } ?? false }
        let (path, kind) = draw.pick(present)
        let wrong: [JSONValue] = switch kind {
        case .text: [.number(1), .bool(true), .array([]), .object([])]
        case .integer: [.string("5"), .bool(true), .array([]), .object([])]
        case .flag: [.string("true"), .number(1), .array([])]
        case .object: [.array([]), .string("x"), .number(1), .bool(false)]
        case .array: [.object([]), .string("x"), .number(1)]
        case .list: [.string("x"), .number(1), .bool(true)]
        }
        if path == "message.layout" || path == "targeting.platforms.0" || (path == "schedule.start" && draw.chance(0.5)) {
            return answer(sent.replacing(path, with: .string(draw.pick(["carousel", "CARD", "", "iOS", "2026"]))), .refused([400], "\(path): not one of its values"))
        }
        return answer(sent.replacing(path, with: draw.pick(wrong)), .refused([400], "\(path): wrong type"))
    }

    /// A readable document that breaks one rule of `docs/campaign-json.md`: the top-level member to set, its value, and the rule.
    static func ruleBreak(_ draw: inout Draw, _ sent: JSONValue) -> (String, JSONValue, String) {
        func text(_ count: Int) -> JSONValue { .string(GeneratedText.characters(count)) }
        func trigger(_ event: String, filters: [JSONValue] = []) -> JSONValue { .object([("event", .string(event)), ("filters", .array(filters))]) }
        func filter(_ op: String, _ value: JSONValue?) -> JSONValue {
            .object([("property", .string("p")), ("op", .string(op))] + (value.map { [("value", $0)] } ?? []))
        }
        // A layout that uses the field: a field it does not use is dropped, not judged.
        func message(_ key: String, _ value: JSONValue) -> JSONValue {
            let layouts = Message.Layout.allCases.filter { $0.fields.contains(Message.Field(rawValue: key)!) }
            return .object([("layout", .string(draw.pick(layouts).rawValue)), (key, value)])
        }
        switch draw.int(0...37) {
        case 0: return ("name", .string(""), "blank name")
        case 1: return ("name", .string(" \n\t "), "blank name")
        case 2: return ("name", text(201), "name over 200 characters")
        case 3: return ("name", .string(GeneratedText.withControl(&draw)), "a control character in the name")
        case 4: return ("description", text(2001), "description over 2000 characters")
        case 5: return ("priority", .number(0), "priority 0")
        case 6: return ("priority", .number(11), "priority 11")
        case 7: return ("priority", .number(-3), "priority -3")
        case 8: return ("triggers", .array(Array(repeating: trigger("app_launch"), count: 21)), "21 triggers")
        case 9: return ("triggers", .array([trigger(draw.pick(["1abc", "firebase_x", "Ga_thing", "a-b", "", String(repeating: "a", count: 41), "a b"]))]), "a bad event ID")
        case 10: return ("triggers", .array([trigger("app_launch", filters: [filter("exists", nil)])]), "filters on a built-in event")
        case 11: return ("triggers", .array([trigger("purchase", filters: Array(repeating: filter("exists", nil), count: 11))]), "11 filters")
        case 12:
            let wrong: [JSONValue] = [filter("gt", .string("5")), filter("contains", .number(5)), filter("eq", nil), filter("lt", .bool(true))]
            return ("triggers", .array([trigger("purchase", filters: [draw.pick(wrong)])]), "a filter's value of the wrong kind")
        case 13: return ("triggers", .array([trigger("purchase", filters: [.object([("property", draw.pick([.string(""), text(41)])), ("op", .string("exists"))])])]), "a bad property")
        case 14: return ("schedule", .object([("start", .string("2030-01-01T00:00:00Z")), ("end", .string(draw.pick(["2030-01-01T00:00:00Z", "2029-12-31T23:59:59.999Z", "2029-12-31T23:00:00-01:00"])))]), "an end not after the start")
        case 15: return ("schedule", .object([("timeZone", .string(draw.pick(["Mars/Olympus", "", "utc ", "Europe/Paris\u{0}", String(repeating: "A", count: 65), "+01:00"])))]), "not a time zone")
        case 16: return ("frequency", .object([("type", .string("every_n_days"))] + draw.pick([[], [("days", .number(0))], [("days", .number(366))]])), "days between showings")
        case 17: return ("targeting", .object([("percentage", .number(Double(draw.pick([0, 101, -1]))))]), "a percentage outside 1–100")
        case 18: return ("targeting", .object([("languages", .array([.string(draw.pick(["EN", "english", "e", "en_US", "fa-"]))]))]), "a bad language")
        case 19: return ("targeting", .object([("countries", .array([.string(draw.pick(["us", "USA", "U", "ÎR"]))]))]), "a bad country")
        case 20: return ("targeting", .object([("languages", .array(Array(repeating: .string("en"), count: 51)))]), "51 languages")
        case 21: return ("targeting", .object([("appVersion", .object([("op", .string("regex")), ("value", .string(draw.pick(["(", "[a-", ""])))]))]), "a bad app version rule")
        case 22: return ("targeting", .object([("appVersion", .object([("op", .string("equals")), ("value", text(101))]))]), "an app version rule over 100 characters")
        case 23: return ("targeting", .object([("daysSinceFirstOpen", .object(draw.pick([[("min", .number(-1))], [("max", .number(36_501))], [("min", .number(5)), ("max", .number(4))]])))]), "days since first open")
        case 24: return ("targeting", .object([("userProperties", .array(Array(repeating: filter("exists", nil), count: 11)))]), "11 user property filters")
        case 25: return ("message", message("title", .object([("text", text(201))])), "a title over 200 characters")
        case 26: return ("message", message("body", .object([("text", text(1001))])), "a body over 1000 characters")
        case 27: return ("message", message("primaryAction", .object([("text", text(61))])), "a button text over 60 characters")
        case 28: return ("message", message("backgroundColor", .string(draw.pick(["red", "#12345", "#1234567", "#GGGGGG", "1A73E8"]))), "a bad color")
        case 29: return ("message", message("imageUrl", .string(draw.pick(["http://example.com/p.png", "ftp://example.com/p", "https://", "example.com/p.png", "javascript:alert(1)"]))), "an image that is not https")
        case 30: return ("message", message("action", .object([("url", .string(draw.pick(["javascript:alert(1)", "data:text/html,x", "http://example.com", "example.com", "JavaScript:x", "https://"])))])), "a refused link")
        case 31: return ("message", message("dismiss", .object([("seconds", .number(Double(draw.pick([0, 121, -1]))))])), "dismiss seconds outside 1–120")
        case 32: return ("message", message("landscapeImageUrl", .string("https://example.com/" + String(repeating: "a", count: 2000))), "a link over 2000 characters")
        case 33: return ("data", .array(Array(repeating: JSONValue.object([("key", .string("k")), ("value", .string("v"))]), count: 2)), "a duplicate data key")
        case 34: return ("data", .array((0...50).map { JSONValue.object([("key", .string("k\($0)")), ("value", .string("v"))]) }), "51 data pairs")
        case 35: return ("data", .array([.object([("key", draw.pick([.string(""), text(101)])), ("value", .string("v"))])]), "a bad data key")
        case 36: return ("data", .array([.object([("key", .string("k")), ("value", text(1001))])]), "a data value over 1000 characters")
        default: return ("data", .array([.object([("key", .string(GeneratedText.withControl(&draw))), ("value", .string("v"))])]), "a control character in a data key")
        }
    }

    /// Documents the format leaves open: they must only never be a 5xx.
    static func undocumented(_ draw: inout Draw, _ sent: JSONValue, _ stored: JSONValue, _ unordered: Bool) -> CampaignCase {
        let (json, reason): (JSONValue, String) = switch draw.int(0...3) {
        case 0: (.object(draw.pick([[("name", .string("first"))], [("app", .number(1))]]) + objectMembers(sent)), "a duplicate key")
        case 1: (sent.setting("priority", .literal(draw.pick(["3.0", "3e0", "30e-1", "1E1"]))), "a whole number written with a fraction")
        case 2: (sent.setting("name", .literal("\"\\ud800 lone\"")), "a lone surrogate escape")
        default: (sent.setting("data", .object([("e\u{301}", .string("1")), ("\u{e9}", .string("2"))])), "canonically equivalent data keys")
        }
        var bytes = Array(json.text.utf8)
        if draw.chance(0.1) { bytes = [0xEF, 0xBB, 0xBF] + bytes }
        return CampaignCase(body: bytes, expected: .either(reason), stored: stored, dataOrderUnknown: unordered)
    }

    private static func objectMembers(_ value: JSONValue) -> [(key: String, value: JSONValue)] {
        if case .object(let members) = value { return members }
        return []
    }
}
