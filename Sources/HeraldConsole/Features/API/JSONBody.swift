import Foundation
import HeraldDomain
import HeraldHTTP

/// Decodes JSON from a request (an API body, an imported file), turning every failure into a 400 that
/// says where the JSON broke.
///
/// Before decoding, one cheap pass refuses what the decoder should never see: bytes that are not UTF-8
/// (Foundation's message would only say "not valid JSON"), and nesting deeper than any Herald document
/// (so a body of 100,000 `[` never reaches a parser that might recurse once per level).
enum JSONBody {
    /// Campaign JSON nests 5 levels (`triggers[].filters[].value`), an export 7; this leaves room to spare.
    static let maxDepth = 32

    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws -> T {
        try check(body)
        do {
            return try CampaignJSON.decoder().decode(type, from: Data(body))
        } catch DecodingError.dataCorrupted(let context)
            where context.codingPath.isEmpty && (try? JSONSerialization.jsonObject(with: Data(body), options: .fragmentsAllowed)) != nil {
            // Foundation reports a number that does not fit its field (9.5 for an integer, 10^40) as
            // "not valid JSON", with no path; the JSON itself is fine, so say what is wrong with it.
            throw HTTPError(400, "A number in the JSON does not fit its field: integers are whole numbers (no fraction or exponent) from \(Int64.min) to \(Int64.max).")
        } catch let error as DecodingError {
            throw HTTPError(400, describe(error))
        } catch {
            throw HTTPError(400, "The body is not valid JSON: \(error.localizedDescription)")
        }
    }

    /// Throws a 400 when `body` is not UTF-8 or nests arrays and objects deeper than `maxDepth`.
    static func check(_ body: [UInt8]) throws {
        if let offset = firstInvalidUTF8(body) {
            throw HTTPError(400, invalidUTF8(at: offset))
        }
        if let offset = firstTooDeep(body, limit: maxDepth) {
            throw HTTPError(400, tooDeep(at: offset))
        }
    }

    static func invalidUTF8(at offset: Int) -> String {
        "The JSON is not valid UTF-8 at byte \(offset): send text as UTF-8."
    }

    static func tooDeep(at offset: Int) -> String {
        "The JSON nests arrays and objects more than \(maxDepth) levels deep (at byte \(offset)); Herald's documents need only a few."
    }

    /// The offset of the first byte that does not start a valid UTF-8 sequence, or nil when all do.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// The offset of the first `[` or `{` (outside strings) that opens level `limit + 1`, or nil.
    static func firstTooDeep(_ bytes: [UInt8], limit: Int) -> Int? {
        var depth = 0
        var inString = false
        var escaped = false
        for (offset, byte) in bytes.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return offset }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
        }
        return nil
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [CodingKey]) -> String {
            let text = keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "the top level" : "`\(text)`"
        }
        switch error {
        case .dataCorrupted(let context):
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            if context.codingPath.isEmpty {
                return "The body is not valid JSON" + (underlying.map { ": \($0)" } ?? ": \(context.debugDescription)")
            }
            return "Invalid value at \(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "Missing `\(key.stringValue)` at \(path(context.codingPath))."
        case .typeMismatch(let type, let context):
            return "Wrong type at \(path(context.codingPath)): expected \(Self.name(of: type))."
        case .valueNotFound(let type, let context):
            return "Missing value at \(path(context.codingPath)): expected \(Self.name(of: type))."
        @unknown default:
            return "The body does not match the expected JSON."
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        default: "\(type)".lowercased().contains("array") ? "an array" : "an object"
        }
    }
}
