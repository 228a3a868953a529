import Foundation
import HeraldDomain
import HeraldHTTP
@testable import HeraldConsole
@testable import HeraldStorage
import TestSupport
import Testing

/// Audit lines keep their arguments as text in the database and the audit page writes them in each
/// reader's language. For any arguments (text from every plane, control characters and NUL included,
/// numbers of every size, catalog keys real or made up), what is stored reads back as it was; and any
/// stored text at all, a line's or noise, gives the page words or its stored English, never a trap.
@Suite("Generated inputs: audit lines")
struct AuditLineProperty {
    static let names = ["app", "name", "count", "email", "installation", "devices", "revision", "", "a b", "émoji😀", "{count}"]
    static let keys = ["roles.editor", "common.state.draft", "common.platform.ios", "audit.lines.values.yes", "no.such.key", "", "..",
                       "roles.editor\u{0}", "ⓡoles", String(repeating: "a.", count: 80)]

    static func argument(_ draw: inout Draw) -> AuditArgument {
        switch draw.int(0...5) {
        case 0: .text(GeneratedText.valid(&draw, maxPieces: 4, maxCharacters: 60))
        case 1: .text(draw.chance(0.5) ? GeneratedText.withControl(&draw) : "nul\u{0}inside")
        case 2: .number(draw.pick([Int.min, Int.max, 0, -1, 1 << 53 + 1, draw.int(-1_000_000...1_000_000)]))
        case 3: .term(draw.pick(keys))
        default: .terms(draw.list(0...4) { draw in draw.pick(keys) })
        }
    }

    static func line(_ draw: inout Draw) -> AuditLine {
        var arguments: [String: AuditArgument] = [:]
        for name in names where draw.chance(0.4) { arguments[name] = argument(&draw) }
        let kinds = ["app", "campaign", "user", "test_device", "installation", "unknown_kind", "", "a\"b"]
        return AuditLine(
            action: draw.pick(["app.create", "campaign.update", "user.role_change", "campaign.test_send", "x"]), subjectKind: draw.pick(kinds),
            subject: GeneratedText.valid(&draw, maxPieces: 2, maxCharacters: 40),
            detailsKind: draw.chance(0.3) ? nil : draw.pick(["app_create", "campaign_revision", "installation_erase", "campaign_test_send", "nope"]),
            details: GeneratedText.valid(&draw, maxPieces: 2, maxCharacters: 40), arguments: arguments)
    }

    @Test func storedArgumentsReadBackAsTheyWere() {
        var run = GeneratedRun("audit line arguments", cases: 3000)
        run.run(Generated.cases { draw in Self.line(&draw) }) { line, run in
            let stored = AuditLine.stored(line.storedArguments)
            run.expect(stored?.subjectKind == line.subjectKind && stored?.detailsKind == line.detailsKind && stored?.arguments == line.arguments,
                       "read back \(String(describing: stored))", input: line)
            run.note(line.arguments.isEmpty ? "no arguments" : "arguments")
        }
    }

    /// Noise, and stored texts with a byte changed, removed or inserted: read as a line or as none.
    @Test func anyStoredTextIsWordsOrTheStoredEnglish() {
        let localizers = ConsoleLanguage.offered.map { LocalizationTests.localization.localizer($0) }
        var run = GeneratedRun("audit line texts", cases: 3000)
        run.run(Generated.cases { draw -> String in
            var bytes = Array(Self.line(&draw).storedArguments.utf8)
            for _ in 0..<draw.int(0...3) where !bytes.isEmpty {
                let at = draw.int(0...(bytes.count - 1))
                switch draw.int(0...2) {
                case 0: bytes[at] = UInt8(draw.int(0...255))
                case 1: bytes.remove(at: at)
                default: bytes.insert(draw.pick(Array("{}[]\":,0-e\\".utf8)), at: at)
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }) { text, run in
            let entry = AuditEntry(id: 1, occurredAt: Date(), actor: "a", action: "x", subject: "stored subject", details: "stored details", arguments: text)
            for localizer in localizers {
                if let words = AuditPages.words(of: entry, localizer) {
                    run.expect(!words.subject.isEmpty, "an empty subject", input: text)
                    run.note("in words")
                } else {
                    run.note("as stored")
                }
            }
        }
    }
}
