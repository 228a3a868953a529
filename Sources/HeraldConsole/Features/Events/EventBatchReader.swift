import HeraldHTTP

/// Reads an events body, `{"events": [...], "discards": [...]}`, straight from its bytes into an `EventBatch`.
/// Ingestion decodes a thousand objects per request, and Foundation's decoder spent more time on them than
/// storing them took. A malformed body is one 400 naming the byte where it broke; an item of the
/// wrong shape becomes an item that says why, so it rejects only itself.
struct EventBatchReader {
    struct Malformed: Error {
        let message: String
    }

    static func read(_ body: [UInt8]) throws(Malformed) -> EventBatch {
        try body.withUnsafeBufferPointer { bytes throws(Malformed) in
            var reader = EventBatchReader(bytes: bytes)
            return try reader.batch()
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private mutating func batch() throws(Malformed) -> EventBatch {
        var events: [EventBatch.Item<EventFields>]?
        var discards: [EventBatch.Item<DiscardFields>] = []
        try expect(UInt8(ascii: "{"), "the body must be a JSON object")
        if !consume(UInt8(ascii: "}")) {
            repeat {
                let key = try string()
                try expect(UInt8(ascii: ":"), "expected ':'")
                if key == "events" {
                    guard peek() == UInt8(ascii: "[") else { throw Malformed(message: "Wrong type at `events`: expected an array.") }
                    events = try list(of: "event")
                } else if key == "discards" {
                    if peek() == UInt8(ascii: "n") {
                        try literal("null")
                        discards = []
                        continue
                    }
                    guard peek() == UInt8(ascii: "[") else { throw Malformed(message: "Wrong type at `discards`: expected an array (or null).") }
                    discards = try list(of: "discard count")
                } else {
                    try skipValue(depth: 1)
                }
            } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"), "expected ',' or '}'")
        }
        skipWhitespace()
        guard position == bytes.count else { throw broken("unexpected text after the JSON object") }
        guard let events else { throw Malformed(message: "Missing `events` at the top level.") }
        return EventBatch(events: events, discards: discards)
    }

    /// An array of items, each an object (`what` names one, for the item that is not).
    private mutating func list<Fields: BatchItemFields>(of what: String) throws(Malformed) -> [EventBatch.Item<Fields>] {
        try expect(UInt8(ascii: "["), "expected '['")
        var items: [EventBatch.Item<Fields>] = []
        if consume(UInt8(ascii: "]")) { return items }
        repeat {
            items.append(try item(what))
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"), "expected ',' or ']'")
        return items
    }

    private mutating func item<Fields: BatchItemFields>(_ what: String) throws(Malformed) -> EventBatch.Item<Fields> {
        guard peek() == UInt8(ascii: "{") else {
            try skipValue(depth: 2)
            return EventBatch.Item(wrongType: "Each \(what) must be a JSON object.")
        }
        position += 1
        var fields = Fields()
        var wrongType: String?
        if !consume(UInt8(ascii: "}")) {
            repeat {
                let key = try string()
                try expect(UInt8(ascii: ":"), "expected ':'")
                if let integer = Fields.integers[key] {
                    switch try scalar(depth: 3) {
                    case .integer(let value): fields[keyPath: integer.field] = value
                    case .null: fields[keyPath: integer.field] = nil
                    default: wrongType = wrongType ?? integer.wrongType
                    }
                } else if let field = Fields.text[key] {
                    switch try scalar(depth: 3) {
                    case .string(let value): fields[keyPath: field] = value
                    case .null: fields[keyPath: field] = nil
                    default: wrongType = wrongType ?? "`\(key)` must be a string."
                    }
                } else {
                    try skipValue(depth: 3)
                }
            } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"), "expected ',' or '}'")
        }
        return wrongType.map { EventBatch.Item(wrongType: $0) } ?? EventBatch.Item(fields: fields)
    }

    private enum Scalar {
        case string(String), integer(Int64), null, other
    }

    /// A field's value: strings and whole numbers are read, anything else is skipped over.
    private mutating func scalar(depth: Int) throws(Malformed) -> Scalar {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = position
            try skipNumber()
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            return Int64(text).map(Scalar.integer) ?? .other
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            try skipValue(depth: depth)
            return .other
        }
    }

    /// Skips a value inside `depth` open arrays and objects; opening more than `JSONBody.maxDepth` is refused.
    private mutating func skipValue(depth: Int) throws(Malformed) {
        let opening = peek()
        if opening == UInt8(ascii: "{") || opening == UInt8(ascii: "[") {
            guard depth < JSONBody.maxDepth else { throw Malformed(message: JSONBody.tooDeep(at: position).english) }
        }
        switch opening {
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "{"):
            position += 1
            if consume(UInt8(ascii: "}")) { return }
            repeat {
                _ = try string()
                try expect(UInt8(ascii: ":"), "expected ':'")
                try skipValue(depth: depth + 1)
            } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"), "expected ',' or '}'")
        case UInt8(ascii: "["):
            position += 1
            if consume(UInt8(ascii: "]")) { return }
            repeat {
                try skipValue(depth: depth + 1)
            } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "]"), "expected ',' or ']'")
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
        default: throw broken("expected a value")
        }
    }

    /// A JSON string, unescaped; its bytes must be UTF-8.
    private mutating func string() throws(Malformed) -> String {
        try expect(UInt8(ascii: "\""), "expected a string")
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\"), bytes[position] >= 0x20 {
            position += 1
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "\"") {
            // The common case: no escapes, the bytes are the text.
            defer { position += 1 }
            return try text(UnsafeBufferPointer(rebasing: bytes[start..<position]), from: start)
        }
        var unescaped = Array(bytes[start..<position])
        while true {
            guard position < bytes.count else { throw broken("a string is not closed") }
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try unescaped.withUnsafeBufferPointer { buffer throws(Malformed) in try text(buffer, from: start) }
            case UInt8(ascii: "\\"):
                try unescape(into: &unescaped)
            case 0..<0x20:
                throw broken("a control character inside a string")
            default:
                unescaped.append(byte)
            }
        }
    }

    private mutating func unescape(into text: inout [UInt8]) throws(Malformed) {
        guard position < bytes.count else { throw broken("a string is not closed") }
        let escape = bytes[position]
        position += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                guard consume(UInt8(ascii: "\\"), skippingWhitespace: false), consume(UInt8(ascii: "u"), skippingWhitespace: false) else {
                    throw broken("an unpaired surrogate escape")
                }
                let low = try hexQuad()
                guard (0xDC00...0xDFFF).contains(low) else { throw broken("an unpaired surrogate escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw broken("an unpaired surrogate escape") }
            text.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw broken("an unknown escape in a string")
        }
    }

    private mutating func hexQuad() throws(Malformed) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard position < bytes.count, let digit = PercentEncoding.hexValue(bytes[position]) else { throw broken("a \\u escape needs four hex digits") }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private func text(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) throws(Malformed) -> String {
        guard let text = String(validating: buffer, as: UTF8.self) else {
            // Escapes come out shorter than they went in, so the offset is found in the body itself.
            let offset = JSONBody.firstInvalidUTF8(Array(bytes[start...])).map { start + $0 } ?? start
            throw Malformed(message: JSONBody.invalidUTF8(at: offset).english)
        }
        // Before anything compares or hashes it (a key against the fields, a type against the vocabulary).
        if CombiningMarks.exceedRun(in: text) { throw Malformed(message: JSONBody.tooManyCombiningMarks(at: start).english) }
        return text
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`
    private mutating func skipNumber() throws(Malformed) {
        _ = consume(UInt8(ascii: "-"), skippingWhitespace: false)
        if !consume(UInt8(ascii: "0"), skippingWhitespace: false) {
            guard try digits() > 0 else { throw broken("a number needs digits") }
        }
        if consume(UInt8(ascii: "."), skippingWhitespace: false) {
            guard try digits() > 0 else { throw broken("a number needs digits after '.'") }
        }
        if consume(UInt8(ascii: "e"), skippingWhitespace: false) || consume(UInt8(ascii: "E"), skippingWhitespace: false) {
            _ = consume(UInt8(ascii: "+"), skippingWhitespace: false) || consume(UInt8(ascii: "-"), skippingWhitespace: false)
            guard try digits() > 0 else { throw broken("an exponent needs digits") }
        }
    }

    private mutating func digits() throws(Malformed) -> Int {
        let start = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
        return position - start
    }

    private mutating func literal(_ word: StaticString) throws(Malformed) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard position + expected.count <= bytes.count, bytes[position..<position + expected.count].elementsEqual(expected) else {
            throw broken("expected a value")
        }
        position += expected.count
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }

    /// The next byte after whitespace; 0 at the end (never valid there).
    private mutating func peek() -> UInt8 {
        skipWhitespace()
        return position < bytes.count ? bytes[position] : 0
    }

    private mutating func consume(_ byte: UInt8, skippingWhitespace: Bool = true) -> Bool {
        if skippingWhitespace { skipWhitespace() }
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func expect(_ byte: UInt8, _ problem: String) throws(Malformed) {
        guard consume(byte) else { throw broken(problem) }
    }

    private func broken(_ problem: String) -> Malformed {
        guard position < bytes.count else { return Malformed(message: "The body is not valid JSON: it ends too early.") }
        return Malformed(message: "The body is not valid JSON: \(problem) at byte \(position).")
    }
}
