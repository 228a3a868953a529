import Foundation
import TestSupport
import Testing
import HeraldDomain
@testable import HeraldConsole

/// Generated `Accept-Language` headers and time zone names, the two values from outside that choose a
/// page's language and the times it shows: never a trap, always one of the offered answers.
@Suite("Generated inputs: Accept-Language and time zone names")
struct LanguageHeaderProperty {
    static let offered = ConsoleLanguage.offered

    /// Pieces headers are made of: tags (offered, unknown, malformed), weights in range and out of it,
    /// and separators, stray characters and text in other scripts.
    static func header(_ draw: inout Draw) -> (header: String, exactFirst: ConsoleLanguage?) {
        let tags = ["fa", "fa-IR", "ar-EG", "de", "DE-at", "ja", "en", "en-XA", "fr", "*", "", "x", "zh-Hant-TW", "فا", "日本",
                    String(repeating: "a", count: draw.int(0...3000))]
        let weights = ["", ";q=1", ";q=0", ";q=0.5", ";q=1.0001", ";q=-0", ";q=NaN", ";q=1e309", ";q=", ";q=2^70", ";Q=0.3", ";q=0.001;x=1"]
        let entries = draw.list(0...40) { draw in draw.pick(tags) + draw.pick(weights) }
        var header = entries.joined(separator: draw.pick([",", ", ", ",,", " , "]))
        if draw.chance(0.1) { header += String(repeating: ",", count: draw.int(0...5000)) }
        if draw.chance(0.1) { header.unicodeScalars.append(draw.scalar(0...0x10FFFF)) }
        // A header that starts with an offered tag at full weight must choose it.
        guard draw.chance(0.3) else { return (header, nil) }
        let first = draw.pick(offered)
        return (first.rawValue + (header.isEmpty ? "" : ", " + header), first)
    }

    @Test("Any Accept-Language header chooses an offered language or none, and a first exact tag at full weight wins")
    func acceptLanguage() {
        var run = GeneratedRun("Accept-Language", cases: 2_000)
        run.run(Generated.cases { draw in Self.header(&draw) }) { value, run in
            let chosen = ConsoleLanguage.preferred(acceptLanguage: value.header, among: Self.offered)
            run.expect(chosen.map(Self.offered.contains) ?? true, "chose \(String(describing: chosen))", input: value.header)
            if let first = value.exactFirst {
                run.expect(chosen == first, "chose \(String(describing: chosen)) over \(first.rawValue)", input: value.header)
            }
            run.note(chosen?.rawValue ?? "none")
        }
    }

    @Test("Any time zone name is a known IANA zone or refused; what is accepted is kept as written and names a zone")
    func timeZoneNames() {
        var run = GeneratedRun("time zone names", cases: 2_000)
        let known = TimeZone.knownTimeZoneIdentifiers
        run.run(Generated.cases { draw -> String in
            switch draw.int(0...3) {
            case 0: draw.pick(known + ["UTC"])
            case 1: draw.pick(known).uppercased()
            case 2: String(String.UnicodeScalarView(draw.list(0...70) { draw in draw.scalar(0...0x2FF) }))
            default: draw.pick(["", "GMT+3", "../etc/passwd", "Asia/Tehran\u{0}", String(repeating: "A/", count: draw.int(0...5000)), "Mars/Olympus"])
            }
        }) { name, run in
            let kept = SettingsPages.timeZoneName(name)
            run.expect(kept == nil || kept == name, "\(name) became \(kept ?? "")", input: name)
            run.expect(kept.map { TimeZoneName.zone($0) != nil } ?? true, "kept a name that names no zone", input: name)
            run.expect(kept == nil || known.contains(name) || name == "UTC", "accepted an unknown zone", input: name)
            run.note(kept == nil ? "refused" : "accepted")
        }
    }
}
