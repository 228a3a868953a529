import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP

/// Foundation's JSON parser, as the reference the hand-written readers are compared with.
enum ReferenceJSON {
    /// The parsed value, or nil when Foundation refuses the text.
    static func parse(_ bytes: [UInt8]) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
    }

    /// Whether a `,` outside strings is followed by `}` or `]`: Foundation reads `[1,]`, JSON does not.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        var inString = false, escaped = false, afterComma = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true; afterComma = false
            case UInt8(ascii: ","): afterComma = true
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if afterComma { return true }
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): break
            default: afterComma = false
            }
        }
        return false
    }

    /// Whether a number outside strings is too large for a `Double`: JSON allows it, Foundation refuses it.
    static func hasHugeNumber(_ bytes: [UInt8]) -> Bool {
        var inString = false, escaped = false, token: [UInt8] = []
        func huge() -> Bool { !token.isEmpty && Double(String(decoding: token, as: UTF8.self)).map { !$0.isFinite } == true }
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                token.append(byte)
            default:
                if huge() { return true }
                token = []
                inString = byte == UInt8(ascii: "\"")
            }
        }
        return huge()
    }

    /// Whether a key or string anywhere in `value` holds more combining marks in a row than text from outside may.
    static func holdsLongCombiningRun(_ value: Any) -> Bool {
        switch value {
        case let text as String: CombiningMarks.exceedRun(in: text)
        case let array as [Any]: array.contains(where: holdsLongCombiningRun)
        case let object as [String: Any]: object.contains { CombiningMarks.exceedRun(in: $0.key) || holdsLongCombiningRun($0.value) }
        default: false
        }
    }

    /// Whether `bytes` hold U+FEFF, which Foundation's parser drops when it follows an escape (and so may
    /// join two runs of combining marks that the text keeps apart).
    static func holdsByteOrderMark(_ bytes: [UInt8]) -> Bool {
        bytes.indices.dropLast(2).contains { bytes[$0] == 0xEF && bytes[$0 + 1] == 0xBB && bytes[$0 + 2] == 0xBF }
    }

    /// How many arrays and objects nest at the deepest point (0 for a string or number).
    static func depth(_ value: Any) -> Int {
        switch value {
        case let array as [Any]: 1 + (array.map(depth).max() ?? 0)
        case let object as [String: Any]: 1 + (object.values.map(depth).max() ?? 0)
        default: 0
        }
    }
}

/// `EventBatchReader.read`: it accepts only JSON Foundation also reads, finds as many items as the
/// `events` array holds and as the `discards` array holds (none when it is absent or null), and reads every
/// well-formed batch that is no deeper than the limit.
enum EventBatchTarget {
    static func run(_ bytes: [UInt8]) {
        let batch: EventBatch
        do {
            batch = try EventBatchReader.read(bytes)
        } catch {
            require(error.message.hasPrefix("The body is not valid JSON") || error.message.contains("`events`") || error.message.contains("`discards`")
                    || error.message.contains("nests arrays and objects") || error.message.contains("not valid UTF-8")
                    || error.message.contains("combining marks in a row"),
                    "the refusal does not say what is wrong: \(error.message)")
            // Refusing what Foundation reads is right only past the nesting limit, with `events` absent or not an
            // array, `discards` neither an array nor null, for a trailing comma (which Foundation lets through
            // and JSON does not), or for a string with too many combining marks in a row.
            if JSONBody.firstInvalidUTF8(bytes) == nil, !ReferenceJSON.hasTrailingComma(bytes),
               let object = ReferenceJSON.parse(bytes) as? [String: Any], ReferenceJSON.depth(object) <= JSONBody.maxDepth,
               object["events"] is [Any], occurrences(of: #""events""#, in: bytes) == 1,
               object["discards"] == nil || object["discards"] is [Any] || object["discards"] is NSNull,
               occurrences(of: #""discards""#, in: bytes) <= 1,
               !ReferenceJSON.holdsLongCombiningRun(object), !ReferenceJSON.holdsByteOrderMark(bytes) {
                require(false, "a well-formed batch was refused: \(error.message)")
            }
            return
        }
        guard let object = ReferenceJSON.parse(bytes) as? [String: Any], let events = object["events"] as? [Any] else {
            require(ReferenceJSON.hasHugeNumber(bytes), "read \(batch.events.count) items from a body Foundation does not read as {\"events\": [...]}")
            return
        }
        require(batch.events.count == events.count, "read \(batch.events.count) items from an array of \(events.count)")
        for (item, event) in zip(batch.events, events) where !(event is [String: Any]) {
            require(item.fields == nil && item.wrongType != nil, "a non-object event was read as an event")
        }
        // (With the key written twice, which value counts is Foundation's choice, not JSON's.)
        if occurrences(of: #""discards""#, in: bytes) <= 1 {
            let discards = object["discards"] as? [Any] ?? []
            require(batch.discards.count == discards.count, "read \(batch.discards.count) discard counts from an array of \(discards.count)")
            for (item, discard) in zip(batch.discards, discards) where !(discard is [String: Any]) {
                require(item.fields == nil && item.wrongType != nil, "a non-object discard count was read as one")
            }
        }
        // A language tag that ingestion would keep is stored in canonical case: still valid, the same tag
        // but for case, and canonical once and for all.
        for tag in batch.events.compactMap({ $0.fields?.language }) where LanguageTag.isValid(tag) {
            let canonical = LanguageTag.canonical(tag)
            require(LanguageTag.isValid(canonical) && canonical.lowercased() == tag.lowercased() && LanguageTag.canonical(canonical) == canonical,
                    "\(tag) in canonical case is \(canonical)")
        }
    }

    private static func occurrences(of needle: String, in bytes: [UInt8]) -> Int {
        let needle = Array(needle.utf8)
        guard bytes.count >= needle.count else { return 0 }
        return (0...(bytes.count - needle.count)).count { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}

/// `JSONBody.check` and `decode`: the UTF-8, depth and trailing-comma checks agree with `String`,
/// Foundation and a second scanner, and decoding anything into Herald's documents answers or throws,
/// never traps.
enum JSONBodyTarget {
    static func run(_ bytes: [UInt8]) {
        let invalidAt = JSONBody.firstInvalidUTF8(bytes)
        require((invalidAt == nil) == (String(validating: bytes, as: UTF8.self) != nil), "the UTF-8 check disagrees with String")
        if let invalidAt {
            require(String(validating: bytes[..<invalidAt], as: UTF8.self) != nil, "the bytes before offset \(invalidAt) are not UTF-8")
        }
        let tooDeepAt = JSONBody.firstTooDeep(bytes, limit: JSONBody.maxDepth)
        if invalidAt == nil, tooDeepAt == nil, let value = ReferenceJSON.parse(bytes) {
            require(ReferenceJSON.depth(value) <= JSONBody.maxDepth, "JSON \(ReferenceJSON.depth(value)) levels deep passed the check")
        }
        let trailingAt = JSONBody.firstTrailingComma(bytes)
        require((trailingAt != nil) == ReferenceJSON.hasTrailingComma(bytes), "the trailing comma checks disagree")
        let longRunAt = invalidAt == nil ? JSONBody.firstLongCombiningRun(bytes) : nil
        if invalidAt == nil, !ReferenceJSON.holdsByteOrderMark(bytes), let value = ReferenceJSON.parse(bytes) {
            require((longRunAt != nil) == ReferenceJSON.holdsLongCombiningRun(value), "the combining-mark check disagrees with Foundation's strings")
        }
        do {
            try JSONBody.check(bytes)
            require(invalidAt == nil && tooDeepAt == nil && trailingAt == nil && longRunAt == nil, "the check let through what its parts refuse")
        } catch {
            require(invalidAt != nil || tooDeepAt != nil || trailingAt != nil || longRunAt != nil, "the check refused what its parts let through")
        }
        _ = try? JSONBody.decode(CampaignExport.self, from: bytes)
        _ = try? JSONBody.decode([Campaign].self, from: bytes)
    }
}

/// Campaign JSON as the API and imports read it: the strict decoder, then validation, and for a
/// campaign without problems, what Herald writes reads back equal, leniently (feed, store) and
/// strictly (export, then import).
enum CampaignJSONTarget {
    static func run(_ bytes: [UInt8]) {
        if let campaign = try? JSONBody.decode(Campaign.self, from: bytes) {
            check(campaign)
        }
        if let export = try? JSONBody.decode(CampaignExport.self, from: bytes) {
            export.campaigns.forEach(check)
        }
    }

    static func check(_ campaign: Campaign) {
        _ = campaign.problems(for: .publish)
        guard campaign.problems(for: .draft).isEmpty else { return }
        let stored = campaign.content
        let document: Data
        do {
            document = try CampaignJSON.encoder().encode(stored)
        } catch {
            require(false, "a valid campaign does not encode: \(error)")
            return
        }
        let text = String(decoding: document, as: UTF8.self)
        for strict in [false, true] {
            do {
                let readBack = try CampaignJSON.decoder(refusingUnknownKeys: strict).decode(Campaign.self, from: document)
                require(readBack == stored, "\(text) reads back as \(readBack)")
            } catch {
                require(false, "\(text) does not read back\(strict ? " strictly" : ""): \(error)")
            }
        }
    }
}
