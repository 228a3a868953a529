import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import TestSupport
import Testing

/// Every page in the pseudo-language `en-XA`, where each catalog string is marked ⟦…⟧: a word that is not
/// marked, and is neither data the test seeded nor one of the few words every language keeps, did not come
/// from a catalog, so no translation will ever reach it. A failure lists every such text as
/// `page: 'text'`, all at once.
@Suite("Pseudo-locale: every word on every page comes from a string catalog")
struct PseudoLocaleTests {
    @Test("Every GET page of the route table, error pages, forms after a failed POST, flash messages and the CSV header are in the catalogs")
    func everyPageIsTranslated() async throws {
        let console = try await PseudoConsole()
        console.visitEveryPage()
        console.visitErrorPages()
        console.submitFailingForms()
        console.submitSucceedingForms()
        console.visitCSV()

        #expect(console.problems.isEmpty, "The test could not check everything:\n\(console.problems.joined(separator: "\n"))")
        #expect(console.pages >= 100, "only \(console.pages) pages were checked: the crawl or the seeding broke")
        let findings = console.findings()
        if !findings.isEmpty {
            // One line per text (texts that differ only in seeded data and numbers are one), on the first page
            // it was seen, with how many other pages show it too.
            let words = UntranslatedWords(seeded: console.seeded)
            var order: [String] = []
            var seen: [String: [PseudoFinding]] = [:]
            for finding in findings {
                let template = words.template(of: finding.piece.description)
                if seen[template] == nil { order.append(template) }
                seen[template, default: []].append(finding)
            }
            let lines = order.map { template in
                let all = seen[template] ?? []
                let pages = Set(all.map(\.page)).count
                return "\(all[0].page): \(all[0].piece)" + (pages > 1 ? " (and on \(pages - 1) more page\(pages > 2 ? "s" : ""))" : "")
            }
            Issue.record("""
                \(order.count) texts on \(Set(findings.map(\.page)).count) of \(console.pages) pages did not come from a string catalog \
                (in the pseudo-language every catalog string is marked ⟦…⟧):
                \(lines.joined(separator: "\n"))
                """)
        }
    }

    @Test("The checker finds English outside ⟦…⟧ and English arguments inside, and passes catalog text, seeded data and the allow-list")
    func checkerFindsWhatItShould() {
        let words = UntranslatedWords(seeded: ["Ẓshop", "zq_purchase"])
        #expect(words.words(in: "⟦Şȧvḗ ḓrȧƒŧ⟧").isEmpty)
        #expect(words.words(in: "Save draft") == ["Save", "draft"])
        #expect(words.words(in: "⟦“Ẓshop” ƞǿẇ ẇȧīŧş 45 ş⟧").isEmpty)
        #expect(words.words(in: "⟦Ḓḗŀḗŧḗ “Untitled campaign”?⟧") == ["Untitled", "campaign"])
        #expect(words.words(in: "⟦Ŭşḗḓ⟧ Sep 21, 2026 at 2:13 PM · Asia/Tehran · 2026-09-21T10:00:00Z · 14:05 UTC").isEmpty)
        #expect(words.words(in: "Herald · iOS, Android · JSON · #1A73E8 · en-XA · ada@example.com · https://example.com/a").isEmpty)
        #expect(words.words(in: "zq_purchase 12 purchases") == ["purchases"])
        #expect(words.words(in: "⟦⟦Ƥŭƀŀīşḥḗḓ⟧ ⟦Ḓrȧƒŧ⟧⟧ Draft") == ["Draft"])
        // A catalog string with markup spans text nodes: the checker carries ⟦ from one to the next.
        #expect(words.words(in: "⟦Ŭpḓȧŧḗḓ ƀẏ", depth: 0) == (words: [], depth: 1))
        #expect(words.words(in: "ȧt", depth: 1) == (words: [], depth: 1))
        #expect(words.words(in: "at", depth: 1).words == ["at"])
        #expect(words.words(in: "message.imageUrl · feed:read · app_launch · GET").isEmpty)
        #expect(words.words(in: "once → every_n_days") == ["once"])
        #expect(words.words(in: "⟦Portuguese (Brazil) (pt-BR)⟧ ⟦Chinese, Simplified (zh-Hans)⟧").isEmpty)
        #expect(words.words(in: "⟦Rḗmǿvḗ thḗ LANGNAME vḗrşīǿƞ⟧", depth: 0, inTemplate: true).words.isEmpty)
        #expect(words.words(in: "LANGNAME") == ["LANGNAME"])

        let pieces = VisibleText.pieces(of: """
            <!doctype html><html lang="en-XA"><head><title>⟦Ƈȧḿƥȧīɠƞş⟧ · Herald</title><style>p { color: red }</style>
            <script src="/x.js"></script></head><body><p title="Tip">One &amp; <b>two</b><!-- no --></p>
            <code>app_launch</code><textarea name="d">typed</textarea><input type="submit" value="Go"><input type="text" value="mine">
            <img alt="Logo"><option label="Pick">x</option><br/>tail</body></html>
            """)
        #expect(pieces.map(\.text) == ["⟦Ƈȧḿƥȧīɠƞş⟧ · Herald", "Tip", "One &", "two", "app_launch", "Go", "Logo", "Pick", "x", "tail"])
        #expect(pieces.first { $0.text == "app_launch" }?.isCode == true)
        #expect(pieces.first { $0.text == "Go" }?.attribute == "value")
        #expect(VisibleText.htmlLanguage(of: #"<html lang="fa" dir="rtl">"#) == ("fa", "rtl"))
    }

    @Test("The script checker finds shown English literals, not a catalog string's fallback")
    func scriptCheckerFindsWhatItShould() {
        #expect(ScriptText.shownLiterals(in: #"button.textContent = "Copied";"#) == ["Copied"])
        #expect(ScriptText.shownLiterals(in: #"button.textContent = pageString("copied", "Copied");"#).isEmpty)
        #expect(ScriptText.shownLiterals(in: #"announce(`${noun} ${index + 1} removed.`);"#) == ["${noun} ${index + 1} removed."])
        #expect(ScriptText.shownLiterals(in: #"form.querySelectorAll("[data-rows]").forEach((list) => list.dataset.rows);"#).isEmpty)
        #expect(ScriptText.generatedContent(in: #"  content: attr(alt) " could not be loaded";"#) == [" could not be loaded"])
        #expect(ScriptText.generatedContent(in: #".pagination a::before { content: "← "; }"#).isEmpty)
    }

    @Test("Scripts and style sheets take the words they show from the page, not from English literals")
    func scriptsAndStylesHaveNoEnglishLiterals() throws {
        var findings: [String] = []
        for (folder, suffix) in [("Public/js", ".js"), ("Public/css", ".css")] {
            let url = repositoryRoot.appendingPathComponent(folder)
            for file in try FileManager.default.contentsOfDirectory(atPath: url.path).sorted() where file.hasSuffix(suffix) {
                let source = try String(contentsOf: url.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let literals = suffix == ".js" ? ScriptText.shownLiterals(in: String(line)) : ScriptText.generatedContent(in: String(line))
                    findings += literals.map { "\(folder)/\(file):\(number + 1): '\($0)'" }
                }
            }
        }
        if !findings.isEmpty {
            Issue.record("""
                \(findings.count) English texts in scripts and style sheets (give them to the page from the catalog, \
                and let the script or the style read them there, e.g. from a data- attribute):
                \(findings.joined(separator: "\n"))
                """)
        }
    }
}

/// String literals of a script line that people will read: sentences and labels (two words or more, or a
/// capitalized word ending a sentence), and any literal the line shows (`textContent = "…"`, `announce("…")`).
enum ScriptText {
    static let literal = try! NSRegularExpression(pattern: #""((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`((?:[^`\\]|\\.)*)`"#)
    static let shows = try! NSRegularExpression(
        pattern: #"(textContent|innerText|innerHTML|title|placeholder|ariaLabel|label|alt)\s*[+]?=|announce\(|alert\(|confirm\(|prompt\(|setAttribute\(\s*["'](aria-label|title|placeholder|alt)"#)
    static let sentence = try! NSRegularExpression(pattern: #"^[^<>{}=;]*\p{Lu}?\p{Ll}+(?: [\p{L}’'“”]+)+[.!?…:”]?\s*$|^\p{Lu}\p{Ll}+[.!?…]$"#)

    /// The strings of a style sheet's `content:` (text CSS adds to the page) that hold words.
    static func generatedContent(in line: String) -> [String] {
        guard let content = line.range(of: #"(?<![\w-])content\s*:[^;}]*"#, options: .regularExpression) else { return [] }
        let declaration = String(line[content])
        return literal.matches(in: declaration, range: NSRange(declaration.startIndex..., in: declaration)).compactMap { match in
            (1...3).lazy.compactMap { Range(match.range(at: $0), in: declaration) }.first.map { String(declaration[$0]) }
        }.filter { $0.unicodeScalars.filter(UntranslatedWords.isLatinLetter).count >= 2 }
    }

    static func shownLiterals(in line: String) -> [String] {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.hasPrefix("//"), !trimmed.hasPrefix("*"), !trimmed.hasPrefix("/*") else { return [] }
        let whole = NSRange(line.startIndex..., in: line)
        let shown = shows.firstMatch(in: line, range: whole) != nil
        var found: [String] = []
        for match in literal.matches(in: line, range: whole) {
            // The English fallback of `pageString("key", "Fallback")`, shown only if the page lacks the
            // catalog's string (which LocalizationTests rule out), is not what people read.
            if let start = Range(match.range, in: line)?.lowerBound,
               line[..<start].range(of: #"pageString\(\s*("[^"]*"|'[^']*')\s*,\s*$"#, options: .regularExpression) != nil { continue }
            for group in 1...3 {
                guard let range = Range(match.range(at: group), in: line) else { continue }
                let text = String(line[range])
                let letters = text.unicodeScalars.filter(UntranslatedWords.isLatinLetter).count
                guard letters >= 2, !text.hasPrefix("["), !text.hasPrefix("#"), !text.hasPrefix("."), !text.contains("=") else { continue }
                let looksLikeWords = sentence.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                // Selectors, event names, attribute and class names are single lower-case or camel-case tokens.
                let isToken = !text.contains(" ") && text.first.map { $0.isLowercase } == true
                if looksLikeWords || (shown && !isToken) { found.append(text) }
            }
        }
        return found
    }
}

/// One text a page shows that did not come from a catalog.
struct PseudoFinding: CustomStringConvertible {
    let page: String
    let piece: VisibleText.Piece
    let words: [String]

    var description: String { "\(page): \(piece)" }
}
