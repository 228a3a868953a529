import Foundation
import Logging
import TestSupport
import Testing
@testable import HeraldConsole

/// A log line is one line whatever a request sends: any text in the message or a value (a request path,
/// an error) is written, in logfmt and in JSON, without a scalar that any reader of logs takes for a line
/// end (CR, LF, VT, FF, the C1 controls with U+0085, U+2028, U+2029) or a terminal for an escape, and reads
/// back as the same text.
@Suite("Generated inputs: log lines")
struct LogLineProperty {
    /// Every scalar some reader ends a line at, or starts an escape sequence with.
    static func breaksLines(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// Text from every plane with line ends and controls of every kind mixed in, as a path could hold them.
    static func text(_ draw: inout Draw) -> String {
        var text = ""
        for _ in 0..<draw.int(0...6) {
            switch draw.int(0...3) {
            case 0: text += GeneratedText.valid(&draw, maxPieces: 3, multiline: true, maxCharacters: 40)
            case 1: text.unicodeScalars.append(draw.pick(["\u{85}", "\u{2028}", "\u{2029}", "\u{9B}", "\u{0B}", "\u{0C}", "\r", "\n", "\u{0}", "\u{1B}"]))
            case 2: text.unicodeScalars.append(draw.scalar(0x80...0x9F))
            default: text += draw.pick(["/campaigns/1", " ", "=", "\"", "\\", "msg=forged level=error", "é", "\u{301}"])
            }
        }
        return text
    }

    /// Scalar for scalar: `String`'s `==` would call canonically equivalent texts the same.
    static func same(_ read: String?, _ text: String) -> Bool {
        read.map { Array($0.unicodeScalars) == Array(text.unicodeScalars) } ?? false
    }

    @Test func anyTextStaysOnOneLineAndReadsBack() throws {
        let time = Date(timeIntervalSince1970: 1_790_000_000)
        var run = GeneratedRun("log lines", cases: 3000)
        run.run(Generated.cases { draw in Self.text(&draw) }) { text, run in
            let logfmt = LineFormatter.logfmtLine(time: time, level: .info, label: "herald", message: text, metadata: ["path": .string(text)])
            let json = LineFormatter.jsonLine(time: time, level: .info, label: "herald", message: text, metadata: ["path": .string(text)])
            for (format, line) in [("logfmt", logfmt), ("json", json)] {
                run.expect(!line.unicodeScalars.contains(where: Self.breaksLines), "\(format) line holds a line end: \(line.debugDescription)", input: text)
            }
            let logfmtFields = LogLineReader.logfmt(logfmt)
            run.expect(Self.same(logfmtFields?["msg"], text) && Self.same(logfmtFields?["path"], text), "logfmt reads back as \(String(describing: logfmtFields))", input: text)
            let jsonFields = LogLineReader.json(json)
            run.expect(Self.same(jsonFields?["msg"], text) && Self.same(jsonFields?["path"], text), "JSON reads back as \(String(describing: jsonFields))", input: text)
            run.note(text.unicodeScalars.contains(where: Self.breaksLines) ? "escaped a line end" : "plain")
        }
    }
}

/// Reads log lines back by scalars, as a logfmt or JSON reader would. (Not Foundation's JSON parser, which
/// drops a U+FEFF right after an escape; nor `Character`s, which join a leading combining mark to a quote.)
enum LogLineReader {
    /// `key=value` pairs, each value a bare word or a quoted string with JSON's escapes.
    static func logfmt(_ line: String) -> [String: String]? {
        var reader = Reader(line)
        var fields: [String: String] = [:]
        while !reader.atEnd {
            let key = reader.take { $0 != "=" }
            guard reader.skip("=") else { return nil }
            let value = reader.peek == "\"" ? reader.quoted() : reader.take { $0 != " " }
            guard let value else { return nil }
            fields[key] = value
            _ = reader.skip(" ")
        }
        return fields
    }

    /// A flat JSON object of strings, as `LineFormatter.jsonLine` writes it.
    static func json(_ line: String) -> [String: String]? {
        var reader = Reader(line)
        var fields: [String: String] = [:]
        guard reader.skip("{") else { return nil }
        while true {
            guard let key = reader.quoted(), reader.skip(":"), let value = reader.quoted() else { return nil }
            fields[key] = value
            if reader.skip("}") { return reader.atEnd ? fields : nil }
            guard reader.skip(",") else { return nil }
        }
    }

    private struct Reader {
        let scalars: [Unicode.Scalar]
        var position = 0

        init(_ text: String) { scalars = Array(text.unicodeScalars) }

        var atEnd: Bool { position == scalars.count }
        var peek: Unicode.Scalar? { atEnd ? nil : scalars[position] }

        mutating func skip(_ scalar: Unicode.Scalar) -> Bool {
            guard peek == scalar else { return false }
            position += 1
            return true
        }

        mutating func take(while keep: (Unicode.Scalar) -> Bool) -> String {
            var taken = String.UnicodeScalarView()
            while let next = peek, keep(next) {
                taken.append(next)
                position += 1
            }
            return String(taken)
        }

        /// A JSON string literal: `"`, then text with `\\`, `\"`, `\n`, `\r`, `\t`, `\b`, `\f`, `\/` and `\uXXXX` (surrogate pairs too).
        mutating func quoted() -> String? {
            guard skip("\"") else { return nil }
            var text = String.UnicodeScalarView()
            var pendingHigh: UInt32?
            while let next = peek {
                position += 1
                if next == "\"" { return pendingHigh == nil ? String(text) : nil }
                guard next == "\\" else {
                    guard pendingHigh == nil else { return nil }
                    text.append(next)
                    continue
                }
                guard let escaped = peek else { return nil }
                position += 1
                switch escaped {
                case "\"", "\\", "/": text.append(escaped)
                case "n": text.append("\n")
                case "r": text.append("\r")
                case "t": text.append("\t")
                case "b": text.append("\u{8}")
                case "f": text.append("\u{C}")
                case "u":
                    guard position + 4 <= scalars.count, let value = UInt32(String(String.UnicodeScalarView(scalars[position..<position + 4])), radix: 16) else { return nil }
                    position += 4
                    if let high = pendingHigh {
                        guard (0xDC00...0xDFFF).contains(value), let scalar = Unicode.Scalar(0x10000 + (high - 0xD800) << 10 + (value - 0xDC00)) else { return nil }
                        text.append(scalar)
                        pendingHigh = nil
                    } else if (0xD800...0xDBFF).contains(value) {
                        pendingHigh = value
                    } else {
                        guard let scalar = Unicode.Scalar(value) else { return nil }
                        text.append(scalar)
                    }
                default: return nil
                }
            }
            return nil
        }
    }
}
