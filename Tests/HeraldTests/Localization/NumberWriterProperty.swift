import Foundation
import TestSupport
import Testing
@testable import HeraldConsole

/// The console writes counts and one-decimal percentages by hand (`NumberWriter`) instead of through an
/// ICU formatter each: for any count and any share, in every language, its text is Foundation's, digit
/// for digit, or it defers to Foundation.
@Suite("Generated inputs: numbers as each language writes them")
struct NumberWriterProperty {
    /// Counts of every size: small ones, ones around each power of ten, and any up to Int.max.
    static func count(_ draw: inout Draw) -> Int {
        switch draw.int(0...3) {
        case 0: return draw.int(0...2_000)
        case 1:
            let power = Int(pow(10.0, Double(draw.int(1...18))))
            return max(0, power + draw.int(-3...3))
        case 2: return draw.int(0...Int(Int32.max))
        default: return draw.int(0...Int.max)
        }
    }

    @Test func everyLanguageHasAWriter() {
        for language in ConsoleLanguage.allCases {
            #expect(language.numberWriter != nil, "\(language) falls back to Foundation for every number")
        }
    }

    @Test func countsReadAsFoundationWritesThem() {
        var run = GeneratedRun("counts in each language", cases: 3000)
        run.run(Generated.cases { draw in (draw.pick(ConsoleLanguage.allCases), Self.count(&draw)) }) { input, run in
            let (language, value) = input
            let written = language.numberWriter?.integer(value)
            run.expect(written == value.formatted(.number.locale(language.locale)), "wrote \(written ?? "nil")", input: input)
            run.note(language.rawValue)
        }
    }

    @Test func sharesReadAsFoundationWritesThem() {
        var run = GeneratedRun("one-decimal percentages in each language", cases: 3000)
        run.run(Generated.cases { draw -> (ConsoleLanguage, Int, Int) in
            let language = draw.pick(ConsoleLanguage.allCases)
            // Ties (x.x5 %) come from wholes that divide a power of ten; the rest from any counts.
            if draw.chance(0.3) {
                let whole = draw.pick([8, 16, 32, 40, 80, 200, 400, 2000, 20_000, 160_000])
                return (language, draw.int(0...whole * 3), whole)
            }
            let whole = max(1, Self.count(&draw))
            let part = draw.chance(0.8) ? draw.int(0...whole) : Self.count(&draw)
            return (language, part, whole)
        }) { input, run in
            let (language, part, whole) = input
            let expected = NumberWriter.foundationPercent(part, of: whole, language.locale)
            let written = language.numberWriter?.percent(part, of: whole)
            run.expect(written == nil || written == expected, "wrote \(written ?? "nil"), Foundation \(expected)", input: input)
            run.note(written == nil ? "left to Foundation" : "written")
        }
    }
}
