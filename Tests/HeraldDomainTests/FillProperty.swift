import Testing
import TestSupport
@testable import HeraldDomain

/// `ProblemText.fill` fills every translated string the console and the API write. It scans bytes; the
/// reference below is the old filler reading one Unicode scalar at a time (the old one read characters,
/// so a brace with a combining mark after it was no brace; now a brace is always one). For any template
/// (names, stray and nested braces, text in every script) and any arguments, both write the same.
@Suite("Generated inputs: filling {names} in strings")
struct FillProperty {
    static func reference(_ template: String, _ arguments: [String: String]) -> String {
        guard !arguments.isEmpty, template.contains("{") else { return template }
        var result = ""
        var name: String?
        for character in template.unicodeScalars {
            if character == "{" {
                if let pending = name { result += "{" + pending }
                name = ""
            } else if character == "}", let pending = name {
                result += arguments[pending] ?? "{" + pending + "}"
                name = nil
            } else if name != nil {
                name?.unicodeScalars.append(character)
            } else {
                result.unicodeScalars.append(character)
            }
        }
        if let pending = name { result += "{" + pending }
        return result
    }

    static let names = ["count", "name", "day", "ctr", "", "a b", "émoji😀"]

    @Test func fillingWritesWhatReadingCharacterByCharacterWrote() {
        var run = GeneratedRun("filling names", cases: 4000)
        run.run(Generated.cases { draw -> (String, [String: String]) in
            let template = draw.list(0...10) { draw -> String in
                switch draw.int(0...4) {
                case 0: "{" + draw.pick(Self.names) + "}"
                case 1: draw.pick(["{", "}", "{{", "}}", "{a{", "}{"])
                default: GeneratedText.valid(&draw, maxPieces: 2, maxCharacters: 12)
                }
            }.joined()
            var arguments: [String: String] = [:]
            for name in Self.names where draw.chance(0.5) {
                arguments[name] = draw.chance(0.2) ? "{" + draw.pick(Self.names) + "}" : GeneratedText.valid(&draw, maxPieces: 1, maxCharacters: 8)
            }
            return (template, arguments)
        }) { input, run in
            let (template, arguments) = input
            let filled = ProblemText.fill(template, arguments)
            run.expect(filled == Self.reference(template, arguments), "wrote \(filled)", input: input)
            run.note(filled == template ? "unchanged" : "filled")
        }
    }
}
