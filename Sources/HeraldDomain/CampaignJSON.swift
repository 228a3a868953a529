import Foundation

/// The JSON coders every producer and consumer of Campaign JSON uses.
///
/// Times are RFC 3339, written in UTC to the millisecond, so that whatever one Herald writes, every
/// Herald (and every delivery client) reads back to the same value. Validation keeps stored times
/// inside `UTCTime.supported`, where that holds.
public enum CampaignJSON {
    /// The version of the Campaign JSON format, in every feed and export.
    public static let schemaVersion = 1

    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(UTCTime.rfc3339(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A decoder for Campaign JSON. `refusingUnknownKeys` for what people and scripts send (the API,
    /// imports): a misspelt key (`"priorty": 1`) is an error naming its path instead of a silent default.
    /// Delivery clients and stored documents read leniently, so an older client keeps reading a newer feed.
    public static func decoder(refusingUnknownKeys: Bool = false) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = UTCTime.date(rfc3339: text) else {
                let problem = ProblemText("time_invalid", ["text": .text(String(text.prefix(40)))])
                throw DecodingError.dataCorrupted(.init(
                    codingPath: container.codingPath, debugDescription: problem.message, underlyingError: NotATime(problem: problem)))
            }
            return date
        }
        if refusingUnknownKeys { decoder.userInfo[refusesUnknownKeys] = true }
        return decoder
    }

    static let refusesUnknownKeys = CodingUserInfoKey(rawValue: "herald.refusesUnknownKeys")!
}

/// A key Campaign JSON does not define, sent to a decoder that refuses them.
public struct UnknownKeyError: Error, Sendable, Equatable {
    /// The key's JSON path, such as `message.title.colour` or `triggers.0.filter`.
    public let path: String
    /// The known key it most resembles, when one is close.
    public let suggestion: String?

    public var problem: FieldProblem {
        FieldProblem(path, suggestion.map { ProblemText("unknown_field_suggestion", ["suggestion": .text($0)]) } ?? ProblemText("unknown_field"))
    }
}

/// The error under a `DecodingError` for text that is not a Campaign JSON time, with its words.
struct NotATime: Error {
    let problem: ProblemText
}

extension Decoder {
    /// The keyed container of a Campaign JSON object, after refusing keys `Keys` does not name when
    /// the decoder was made with `refusingUnknownKeys`.
    public func container<Keys: CodingKey & CaseIterable>(knownKeys keys: Keys.Type) throws -> KeyedDecodingContainer<Keys> {
        if userInfo[CampaignJSON.refusesUnknownKeys] as? Bool == true {
            let sent = try container(keyedBy: AnyCodingKey.self)
            let known = Keys.allCases.map(\.stringValue)
            if let unknown = sent.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
                let path = (codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } + [unknown]).joined(separator: ".")
                throw UnknownKeyError(path: path, suggestion: Self.closest(to: unknown, among: known))
            }
        }
        return try container(keyedBy: Keys.self)
    }

    /// The candidate at most two edits from `key` (ignoring case), if any: a typo, not another word.
    private static func closest(to key: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(Array(key.lowercased().utf8.prefix(64)), Array($0.lowercased().utf8))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
        return best.0
    }

    /// Levenshtein distance; keys are short (the sent one is cut to 64 bytes above).
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension DecodingError {
    /// Where the JSON did not match, as a dotted path (`triggers.0.event`); empty at the top level.
    public var path: String {
        let keys: [CodingKey] = switch self {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context): context.codingPath
        case .keyNotFound(let key, let context): context.codingPath + [key]
        @unknown default: []
        }
        return keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    /// What did not match, in words for the person who sent it.
    public var reason: String {
        if case .dataCorrupted(let context) = self { return context.debugDescription }
        return problemText.message
    }

    /// What did not match as a key and arguments, for the console to say in the reader's language.
    public var problemText: ProblemText {
        switch self {
        case .dataCorrupted(let context): (context.underlyingError as? NotATime)?.problem ?? ProblemText("value_invalid")
        case .keyNotFound: ProblemText("field_required")
        case .typeMismatch(let type, _), .valueNotFound(let type, _): ProblemText("expected_" + Self.name(of: type))
        @unknown default: ProblemText("value_invalid")
        }
    }

    /// The problem at `path`, its English `reason` kept for the API.
    public var problem: FieldProblem {
        FieldProblem(path, problemText, message: reason)
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "string"
        case is Int.Type, is Int64.Type: "integer"
        case is Double.Type: "number"
        case is Bool.Type: "bool"
        default: "\(type)".lowercased().contains("array") ? "array" : "object"
        }
    }
}

/// Any key, for reading the keys an object was sent with.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
