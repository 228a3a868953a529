import HeraldHTTP
import TestSupport
import Testing

/// Generated `If-Match` and `If-None-Match` values, read by the one `EntityTag` reader that the feed, the
/// web client's script, static files and the campaign API's If-Match use: it agrees with a model written
/// from RFC 9110's grammar (§8.8.3, §13.1.1, §13.1.2, lists as §5.6.1), never traps, and compares
/// strongly and weakly as §8.8.3.2 says.
@Suite("Generated inputs: entity tags")
struct EntityTagProperty {
    /// What the model reads: nil (not a condition), `*`, or the tags as (weak, opaque tag), in order.
    enum ModelCondition: Equatable {
        case any
        case tags([Tag])
    }

    struct Tag: Equatable {
        let weak: Bool
        let opaque: String
    }

    /// `If-Match = "*" / #entity-tag`, with blanks around elements and empty elements allowed, and at
    /// least one tag; etagc is `!`, `#` to `~` and any non-ASCII scalar.
    static func model(_ value: String) -> ModelCondition? {
        if value.wholeMatch(of: /[ \t]*\*[ \t]*/.matchingSemantics(.unicodeScalar)) != nil { return .any }
        let tag = #/(W/)?"([!#-~\x{80}-\x{10FFFF}]*)"/#
        let list = #/[ \t,]*((W/)?"[!#-~\x{80}-\x{10FFFF}]*"[ \t]*(,[ \t,]*|$))+/#
        guard value.wholeMatch(of: list.matchingSemantics(.unicodeScalar)) != nil else { return nil }
        return .tags(value.matches(of: tag.matchingSemantics(.unicodeScalar)).map { Tag(weak: $0.1 != nil, opaque: String($0.2)) })
    }

    static func read(_ condition: EntityTagCondition?) -> ModelCondition? {
        switch condition {
        case nil: nil
        case .any: .any
        case .tags(let tags): .tags(tags.map { Tag(weak: $0.isWeak, opaque: $0.opaqueTag) })
        }
    }

    static let opaqueParts = ["r3", "r12", "0f3a9c", "+gzip", ",", "a,b", "W/", "*", "é", "日本", "🇮🇷", "!", "#~", "", "'", "\\"]
    static let brokenParts = [" ", "\"", "\t", "\u{7F}", "\u{0}", "\u{1}", "\r\n"]

    static func opaque(_ draw: inout Draw) -> String {
        var text = draw.list(0...3) { draw in draw.pick(Self.opaqueParts) }.joined()
        if draw.chance(0.05) { text += draw.pick(Self.brokenParts) }
        return text
    }

    static func element(_ draw: inout Draw) -> String {
        switch draw.int(0...9) {
        case 0: return draw.pick(["*", "", " ", "W/", "w/\"x\"", "r3", "\"r3", "W/ \"r3\"", "W/W/\"x\""])
        case 1...3: return "W/\"" + opaque(&draw) + "\""
        default: return "\"" + opaque(&draw) + "\""
        }
    }

    static func value(_ draw: inout Draw) -> String {
        if draw.chance(0.1) { return draw.pick([" ", "\t", ""]) + "*" + draw.pick(["", " ", "\t", ", \"r3\"", ","]) }
        var value = draw.list(0...6) { draw in
            draw.pick(["", " ", "\t"]) + element(&draw) + draw.pick(["", " ", "\t"])
        }.joined(separator: draw.pick([",", ", ", ",,", " , ", "\t,", ";"]))
        if draw.chance(0.05) { value.unicodeScalars.insert(draw.scalar(0...0x10FFFF), at: value.unicodeScalars.startIndex) }
        if draw.chance(0.05) { value.unicodeScalars.append(draw.scalar(0...0x10FFFF)) }
        return value
    }

    @Test("Any If-Match or If-None-Match value reads as RFC 9110's grammar does, writes back to itself, and matches as §8.8.3.2 says")
    func conditions() {
        var run = GeneratedRun("entity tags", cases: 5_000)
        run.run(Generated.cases { draw in
            // The representation compared against: often one the value names, sometimes the other strength.
            (value: Self.value(&draw), current: Self.opaque(&draw), weak: draw.chance(0.2))
        }) { drawn, run in
            let condition = EntityTagCondition(drawn.value)
            let expected = Self.model(drawn.value)
            run.expect(Self.read(condition) == expected, "read as \(String(describing: condition)), the model \(String(describing: expected))", input: drawn.value)
            guard let condition else {
                run.note("refused")
                return
            }
            // What is read, written as a header, reads the same.
            let written = switch condition {
            case .any: "*"
            case .tags(let tags): tags.map(\.description).joined(separator: ", ")
            }
            run.expect(EntityTagCondition(written) == condition, "wrote back as \(written.debugDescription)", input: drawn.value)

            guard drawn.current.utf8.allSatisfy({ $0 == 0x21 || ($0 >= 0x23 && $0 != 0x7F) }) else { return }
            let current = EntityTag(drawn.current, weak: drawn.weak)
            let named: [Tag] = if case .tags(let tags) = expected { tags } else { [] }
            let weakly = expected == .any || named.contains { $0.opaque == current.opaqueTag }
            let strongly = expected == .any || (!current.isWeak && named.contains { !$0.weak && $0.opaque == current.opaqueTag })
            run.expect(condition.matchesWeakly(current) == weakly, "weak comparison with \(current)", input: drawn.value)
            run.expect(condition.matchesStrongly(current) == strongly, "strong comparison with \(current)", input: drawn.value)
            run.expect(current.isMatched(byIfNoneMatch: drawn.value) == weakly, "If-None-Match against \(current)", input: drawn.value)
            // Each tag read is named by its own header, weak or not.
            if case .tags(let tags) = condition, let first = tags.first {
                run.expect(first.isMatched(byIfNoneMatch: first.description), "\(first) does not match itself", input: drawn.value)
                run.expect(first.isWeak || EntityTagCondition(first.description)?.matchesStrongly(first) == true,
                           "\(first) does not match itself strongly", input: drawn.value)
            }
            run.note(weakly ? (strongly ? "matches strongly" : "matches weakly only") : "no match")
        }
    }

    @Test("Hand-picked conditions", arguments: [
        ("*", "*"), (" * ", "*"), (#""r3""#, #""r3""#), (#"W/"r3""#, #"W/"r3""#), (#", "a,b",, W/"x" "#, #""a,b", W/"x""#),
        (#""""#, #""""#), ("", nil), (" , ", nil), ("r3", nil), (#""r3"#, nil), (#""r 3""#, nil), (#"W/ "r3""#, nil),
        (#"w/"r3""#, nil), (#""r3" "r4""#, nil), (#"*, "r3""#, nil), (#""r3", *"#, nil), ("\"r\u{7F}\"", nil),
    ] as [(String, String?)])
    func handPicked(value: String, written: String?) {
        let condition = EntityTagCondition(value)
        let rewritten: String? = switch condition {
        case nil: nil
        case .any: "*"
        case .tags(let tags): tags.map(\.description).joined(separator: ", ")
        }
        #expect(rewritten == written)
    }

    @Test("Strong comparison needs two strong tags; weak comparison only the same opaque tag")
    func comparisons() {
        let strong = EntityTag("r3")
        let weak = EntityTag("r3", weak: true)
        #expect(strong.matchesStrongly(EntityTag("r3")))
        #expect(!strong.matchesStrongly(weak) && !weak.matchesStrongly(strong) && !weak.matchesStrongly(weak))
        #expect(strong.matchesWeakly(weak) && weak.matchesWeakly(strong) && weak.matchesWeakly(weak))
        #expect(!strong.matchesWeakly(EntityTag("r4")))
        #expect(strong.isMatched(byIfNoneMatch: #"W/"r3""#) && !strong.isMatched(byIfNoneMatch: nil))
        // A value that is no condition is ignored, as if not sent.
        #expect(!strong.isMatched(byIfNoneMatch: #"r3, "r3""#))
    }
}
