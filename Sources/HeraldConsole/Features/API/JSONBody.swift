import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

extension Request {
    /// Refuses a body sent as anything but JSON: a 415 saying to send `what` ("the campaign") as JSON, and
    /// how (`shape`, an example), when given.
    func requireJSON(_ what: String, shape: String? = nil) throws {
        guard mediaType == "application/json" else {
            throw HTTPError(415, "Send \(what) as JSON with `Content-Type: application/json`\(shape.map { ": " + $0 } ?? "").")
        }
    }
}

extension APIKey {
    /// Refuses a document for an app other than the key's: a 422 naming `app`.
    func requireOwnApp(_ app: Int64) throws {
        guard app != appID else { return }
        throw HTTPError(422, "This key belongs to app \(appID); `app` must be \(appID).", fields: [FieldProblem("app", "Use \(appID), the app of this key.")])
    }
}

/// JSON that cannot be read as the document asked for: where it broke, for the person who sent it.
struct MalformedJSON: Error, Equatable {
    /// English, as the API answers.
    let message: String
    /// The catalog sentence of `message`, when there is one, for a page in the reader's language.
    let phrase: Phrase?
    /// The field the decoder stopped at, when it got that far.
    let field: FieldProblem?

    init(_ phrase: Phrase, field: FieldProblem? = nil) {
        message = phrase.english
        self.phrase = phrase
        self.field = field
    }

    init(_ message: String, field: FieldProblem?) {
        self.message = message
        phrase = nil
        self.field = field
    }

    /// `error` as a reading failure: this, or a key the document does not have (`UnknownKeyError`); nil
    /// for any other error.
    init?(reading error: any Error) {
        switch error {
        case let malformed as MalformedJSON:
            self = malformed
        case let unknown as UnknownKeyError:
            self.init(Phrase("errors.unknown_field", ["path": .text(unknown.path)]), field: unknown.problem)
        default:
            return nil
        }
    }
}

/// Decodes JSON from a request (an API body, an imported file), turning every failure into a
/// `MalformedJSON` that says where the JSON broke (the API answers it as a 400, an import shows it).
///
/// Before decoding, cheap passes refuse what the decoder should never see: bytes that are not UTF-8
/// (Foundation's message would only say "not valid JSON"), nesting deeper than any Herald document
/// (so a body of 100,000 `[` never reaches a parser that might recurse once per level), a comma
/// before a closing bracket, which JSON forbids but Foundation's parser lets through (so the API and
/// imports read the same JSON as the event reader), and a string holding more combining marks in a row
/// than `CombiningMarks.longestRun` (the decoder hashes keys and compares values, which costs the
/// square of such a run).
enum JSONBody {
    /// Campaign JSON nests 5 levels (`triggers[].filters[].value`), an export 7; this leaves room to spare.
    static let maxDepth = 32

    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws -> T {
        try check(body)
        do {
            return try CampaignJSON.decoder(refusingUnknownKeys: true).decode(type, from: Data(body))
        } catch DecodingError.dataCorrupted(let context)
            where context.codingPath.isEmpty && (try? JSONSerialization.jsonObject(with: Data(body), options: .fragmentsAllowed)) != nil {
            // Foundation reports a number that does not fit its field (9.5 for an integer, 10^40) as
            // "not valid JSON", with no path; the JSON itself is fine, so say what is wrong with it.
            throw MalformedJSON(Phrase("errors.json.number_range"))
        } catch let error as DecodingError {
            throw MalformedJSON(describe(error), field: error.path.isEmpty ? nil : error.problem)
        } catch let unknown as UnknownKeyError {
            throw unknown  // a 422 naming the field, not a parse error
        } catch {
            throw MalformedJSON(Phrase("errors.json.syntax"))
        }
    }

    /// Throws `MalformedJSON` when `body` is not UTF-8, nests arrays and objects deeper than `maxDepth`, has a
    /// trailing comma, or a string with too many combining marks in a row.
    static func check(_ body: [UInt8]) throws {
        if let offset = firstInvalidUTF8(body) {
            throw MalformedJSON(invalidUTF8(at: offset))
        }
        if let offset = firstTooDeep(body, limit: maxDepth) {
            throw MalformedJSON(tooDeep(at: offset))
        }
        if let offset = firstTrailingComma(body) {
            throw MalformedJSON(Phrase("errors.json.trailing_comma", ["byte": .number(offset)]))
        }
        if let offset = firstLongCombiningRun(body) {
            throw MalformedJSON(tooManyCombiningMarks(at: offset))
        }
    }

    static func tooManyCombiningMarks(at offset: Int) -> Phrase {
        Phrase("errors.json.combining_marks", ["byte": .number(offset), "limit": .number(CombiningMarks.longestRun)])
    }

    /// The offset of the first string (its opening quote) holding more than `CombiningMarks.longestRun`
    /// combining marks in a row, written as UTF-8 or as `\u` escapes; nil when none does. `bytes` is UTF-8.
    static func firstLongCombiningRun(_ bytes: [UInt8]) -> Int? {
        // Only a byte from 0xCC on starts a scalar from U+0300, and only `\u` writes one otherwise.
        guard bytes.contains(where: { $0 >= 0xCC || $0 == UInt8(ascii: "\\") }) else { return nil }
        var stringStart: Int?
        var run = CombiningMarks.Run()
        var position = 0
        /// The four hex digits at `at` as a number, or nil.
        func hexQuad(at: Int) -> UInt32? {
            guard at + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[at..<at + 4] {
                guard let digit = PercentEncoding.hexValue(byte) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while position < bytes.count {
            let byte = bytes[position]
            guard let start = stringStart else {
                if byte == UInt8(ascii: "\"") { stringStart = position; run.reset() }
                position += 1
                continue
            }
            if byte == UInt8(ascii: "\"") {
                stringStart = nil
                position += 1
            } else if byte == UInt8(ascii: "\\") {
                // `\uXXXX` (a surrogate pair as two) is a scalar; any other escape is ASCII.
                var scalar: Unicode.Scalar?
                if position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u"), let value = hexQuad(at: position + 2) {
                    position += 6
                    if (0xD800...0xDBFF).contains(value), position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                       bytes[position + 1] == UInt8(ascii: "u"), let low = hexQuad(at: position + 2), (0xDC00...0xDFFF).contains(low) {
                        position += 6
                        scalar = Unicode.Scalar(0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00))
                    } else {
                        scalar = Unicode.Scalar(value)
                    }
                } else {
                    position += 2
                }
                if let scalar { if run.add(scalar) { return start } } else { run.reset() }
            } else if byte < 0x80 {
                run.reset()
                position += 1
            } else {
                // A valid UTF-8 sequence (checked first): its length and first bits are in its lead byte.
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                guard position + length <= bytes.count else { return nil }
                var value = UInt32(byte) & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F)
                for continuation in bytes[(position + 1)..<(position + length)] { value = value << 6 | UInt32(continuation & 0x3F) }
                position += length
                if let scalar = Unicode.Scalar(value), run.add(scalar) { return start }
            }
        }
        return nil
    }

    static func invalidUTF8(at offset: Int) -> Phrase {
        Phrase("errors.json.invalid_utf8", ["byte": .number(offset)])
    }

    static func tooDeep(at offset: Int) -> Phrase {
        Phrase("errors.json.too_deep", ["byte": .number(offset), "limit": .number(maxDepth)])
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
        return firstOutsideStrings(bytes) { offset, byte in
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                return depth > limit ? offset : nil
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                return nil
            default:
                return nil
            }
        }
    }

    /// The offset of the first comma (outside strings) followed, past whitespace, by `]` or `}`, or nil.
    static func firstTrailingComma(_ bytes: [UInt8]) -> Int? {
        var comma: Int?
        return firstOutsideStrings(bytes) { offset, byte in
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                return nil
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                return comma
            default:
                comma = byte == UInt8(ascii: ",") ? offset : nil
                return nil
            }
        }
    }

    /// The first offset `found` returns for a byte outside JSON strings (a string's opening quote
    /// included), or nil.
    private static func firstOutsideStrings(_ bytes: [UInt8], _ found: (Int, UInt8) -> Int?) -> Int? {
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
            if byte == UInt8(ascii: "\"") { inString = true }
            if let offset = found(offset, byte) { return offset }
        }
        return nil
    }

    static func describe(_ error: DecodingError) -> String {
        if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return "The body is not valid JSON: \(underlying ?? context.debugDescription)"
        }
        let place = error.path.isEmpty ? "the top level" : "`\(error.path)`"
        switch error {
        case .keyNotFound(let key, _):
            let parent = error.path.split(separator: ".").dropLast().joined(separator: ".")
            return "Missing `\(key.stringValue)` at \(parent.isEmpty ? "the top level" : "`\(parent)`")."
        case .typeMismatch, .valueNotFound:
            return "Wrong type at \(place): \(error.reason)."
        default:
            return "Invalid value at \(place): \(error.reason)"
        }
    }
}
