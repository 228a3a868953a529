import Foundation
import TestSupport
import Testing
@testable import HeraldPostgres
@testable import HeraldStorage

/// The two readers the PostgreSQL engine adds: the database URL (`--db`, `HERALD_DB`, from operators) and
/// the migration script splitter. Neither traps on any text; the URL reader accepts exactly the URLs built
/// from valid parts and reads them back; the splitter keeps every statement whole, whatever its quotes,
/// comments and dollar-quoted bodies hold.
@Suite("Generated inputs: PostgreSQL URL and SQL scripts")
struct PostgresInputProperty {
    static let unreserved = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    static func word(_ draw: inout Draw, _ range: ClosedRange<Int> = 1...12) -> String {
        String(draw.list(range) { $0.pick(unreserved) })
    }

    /// Any text: URL-ish pieces, every script, controls, percent signs and stray delimiters.
    static func noise(_ draw: inout Draw) -> String {
        draw.list(0...12) { draw -> String in
            switch draw.int(0...5) {
            case 0: draw.pick(["postgres://", "postgresql://", "://", "@", ":", "/", "?", "&", "=", "%", "%zz", "%00", "[", "]", "#"])
            case 1: draw.pick(["sslmode=", "disable", "verify-full", "99999", "-1", "0", "65536", "user:pass"])
            case 2: GeneratedText.valid(&draw, maxPieces: 2, maxCharacters: 20)
            case 3: GeneratedText.withControl(&draw)
            default: word(&draw)
            }
        }.joined()
    }

    @Test func theDatabaseURLNeverTrapsAndReadsBackWhatItAccepts() {
        var run = GeneratedRun("PostgreSQL database URLs", cases: 3000)
        run.run(Generated.cases { draw -> (text: String, expected: PostgresLocation?) in
            guard draw.chance(0.5) else { return (Self.noise(&draw), nil) }
            let host = draw.chance(0.2) ? "127.0.0.1" : Self.word(&draw) + "." + Self.word(&draw, 2...5)
            let port = draw.int(1...65_535)
            let user = Self.word(&draw), password = draw.chance(0.5) ? Self.word(&draw) : nil
            let database = Self.word(&draw)
            let tls = draw.pick(PostgresLocation.TLSMode.allCases)
            let text = "\(draw.pick(["postgres", "postgresql"]))://\(user)\(password.map { ":" + $0 } ?? "")@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
            return (text, PostgresLocation(host: host, port: port, user: user, password: password, database: database, tls: tls))
        }) { input, run in
            let read = try? PostgresLocation(url: input.text)
            if let expected = input.expected {
                run.expect(read == expected, "read \(String(describing: read))", input: input.text)
                // What logs show carries no password and reads back as the same place.
                if let read {
                    run.expect(!read.description.contains(":\(read.password ?? "\u{0}")@"), "the password is shown", input: input.text)
                    var unsecret = read
                    unsecret.password = nil
                    run.expect((try? PostgresLocation(url: read.description)) == unsecret, "the shown URL does not read back", input: input.text)
                }
                run.note("valid")
            } else {
                if let read {
                    run.expect((1...65_535).contains(read.port) && !read.host.isEmpty && !read.user.isEmpty && !read.database.isEmpty,
                               "accepted \(read)", input: input.text)
                }
                run.note(read == nil ? "refused" : "accepted")
            }
        }
        #expect(run.failures == 0)
    }

    @Test func configCheckMasksAPasswordWholeWhateverItHolds() {
        var run = GeneratedRun("database URL passwords masked", cases: 3000)
        run.run(Generated.cases { draw -> (url: String, shown: String) in
            // Passwords as people type them into a URL, percent-encoding forgotten: `@`, `:`, `/`, `?`, `#`, `%`.
            let password = draw.list(1...16) { draw -> String in
                draw.chance(0.3) ? draw.pick(["@", ":", "/", "?", "#", "%", "%40", "@@", " ", "é", "🔑"]) : Self.word(&draw, 1...4)
            }.joined()
            let rest = "@" + Self.word(&draw) + draw.pick([".internal", ":5432", ""]) + "/" + Self.word(&draw) + draw.pick(["", "?sslmode=require"])
            let user = draw.pick(["postgres", "postgresql"]) + "://" + Self.word(&draw) + ":"
            return (user + password + rest, user + "********" + rest)
        }) { input, run in
            let shown = PostgresLocation.maskingPassword(in: input.url)
            run.expect(shown == input.shown, "shown as \(shown)", input: input.url)
            run.note(input.url.filter { $0 == "@" }.count > 1 ? "an @ in the password" : "no @")
        }
        #expect(run.failures == 0)
    }

    /// A statement drawn from pieces whose `;` must not end it: quoted text with doubled quotes, quoted
    /// identifiers, line and block comments, dollar-quoted bodies with or without a tag, `$1` parameters.
    static func statement(_ draw: inout Draw) -> String {
        draw.list(1...6) { draw -> String in
            switch draw.int(0...6) {
            case 0: "'" + draw.pick(["a;b", "it''s; fine", ";", "", "$$", "--"]) + "'"
            case 1: "\"" + draw.pick(["odd;name", "a\"\"b", "$x$"]) + "\""
            case 2: "-- " + draw.pick(["a comment; with", "'", "$$"]) + "\n"
            case 3: "/* " + draw.pick(["block; comment", "'", "\n;\n"]) + " */"
            case 4: Self.dollarQuoted(draw.pick(["", "body", "x_1"]))
            case 5: draw.pick(["$1", "translate($1, 'A', 'a')", "E'\\\\'"])
            default: draw.pick(["SELECT 1", "CREATE TABLE t (a int)", "INSERT INTO t VALUES (1)", "x", "ü", " "])
            }
        }.joined(separator: " ")
    }

    static func dollarQuoted(_ tag: String) -> String {
        "$\(tag)$ BEGIN; PERFORM 1; '; END; $\(tag)$"
    }

    @Test func scriptsSplitIntoTheirStatementsAndAnyTextSplitsWithoutATrap() {
        var run = GeneratedRun("SQL script statements", cases: 2000)
        run.run(Generated.cases { draw -> (script: String, statements: [String]?) in
            guard draw.chance(0.7) else { return (Self.noise(&draw) + draw.pick([";", "'", "$$", "/*", "--", "\""]), nil) }
            let statements = draw.list(1...5) { Self.statement(&$0) }
            return (statements.joined(separator: draw.pick([";", ";\n", " ;\n\n"])) + draw.pick(["", ";", ";\n"]), statements)
        }) { input, run in
            let split = SQLScript.statements(input.script)
            if let expected = input.statements {
                run.expect(split == expected.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty },
                           "split into \(split)", input: input.script)
                run.note("script")
            } else {
                // Nothing is lost or invented: the pieces are the script's text in order, less separators and blanks.
                let kept = split.joined()
                run.expect(kept.unicodeScalars.count <= input.script.unicodeScalars.count, "split made text", input: input.script)
                run.note("noise")
            }
        }
        #expect(run.failures == 0)
    }
}
