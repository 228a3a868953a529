import Foundation
import HeraldDomain

/// Text from every Unicode plane: scripts written right to left, combining marks, astral emoji and
/// joiners, bidirectional controls, noncharacters; control characters only where asked for.
package enum GeneratedText {
    package static let words = ["Spring sale", "سلام دنیا", "تخفیف ویژه", "مرحبا بكم", "שלום עולם", "Grüße aus Köln", "日本語のテキスト",
                        "Ünïcödé", "x", "50% off", "a_b-c.d", "\"quoted\" \\ slash /", "<b>&amp;</b>", "{\"json\": [1]}", "'; DROP TABLE campaigns;--"]
    package static let emoji = ["👩‍💻", "🇮🇷", "🇩🇪", "👍🏽", "🏳️‍🌈", "🧑🏿‍🤝‍🧑🏻", "😀", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𓀀", "🀄", "#️⃣"]
    /// Marks that change direction or join, and noncharacters: valid text that many systems mangle.
    package static let invisible: [Unicode.Scalar] = ["\u{200E}", "\u{200F}", "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}",
                                              "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}", "\u{200D}", "\u{200B}", "\u{FEFF}",
                                              "\u{2028}", "\u{2029}", "\u{FFFE}", "\u{FFFF}", "\u{10FFFF}", "\u{E000}", "\u{F8FF}"]

    /// Text a campaign may hold: no control characters; line breaks and tabs when `multiline`.
    /// At most `maxPieces` pieces, each at most a handful of characters, and fewer than `maxCharacters`
    /// characters as length limits count them: Unicode scalars.
    package static func valid(_ draw: inout Draw, maxPieces: Int = 6, multiline: Bool = false, maxCharacters: Int = 200) -> String {
        var text = ""
        for _ in 0..<draw.int(1...maxPieces) {
            switch draw.int(0...9) {
            case 0, 1, 2: text += draw.pick(words)
            case 3: text += draw.pick(emoji)
            case 4: text.unicodeScalars.append(draw.pick(invisible))
            case 5:
                // A base letter with up to eight combining marks; HTML's special characters too, which
                // then read as other characters than themselves.
                text += draw.pick(["a", "e", "ا", "ש", "字", "\"", "'", "<", ">", "&"])
                for _ in 0..<draw.int(1...8) { text.unicodeScalars.append(draw.scalar(0x0300...0x036F)) }
            case 6:
                // Any scalar of any plane, controls aside.
                let plane = UInt32(draw.int(0...16))
                let scalar = draw.scalar(plane << 16 ... (plane << 16 | 0xFFFF))
                text.unicodeScalars.append(isControl(scalar) ? "\u{FFFD}" : scalar)
            case 7: text += multiline ? draw.pick(["\n", "\r\n", "\t", " "]) : " "
            default: text += draw.pick([" ", "-", "·", "،", "。", "0", "9"])
            }
        }
        // A name must not be blank; any text here carries at least one visible letter.
        let limited = text.prefix(scalars: maxCharacters - 1)
        return limited.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? limited + "x" : limited
    }

    /// Text with a control character between two letters, which every field refuses (where text may
    /// span lines, tabs and line breaks aside).
    package static func withControl(_ draw: inout Draw) -> String {
        let control = draw.pick(["\u{0}", "\u{1}", "\u{1B}", "\u{7F}", "\u{85}", "\u{9F}", "\u{8}", "\u{0B}"] as [Unicode.Scalar])
        return "a" + String(control) + "b" + valid(&draw, maxPieces: 3, maxCharacters: 40)
    }

    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `count` characters of the same letter.
    package static func characters(_ count: Int) -> String {
        String(repeating: "ب", count: count)
    }
}

/// RFC 3339 times as Campaign JSON documents them, and the UTC text Herald must write back, computed
/// with Foundation's calendar rather than Herald's own arithmetic.
package enum GeneratedTime {
    /// 2000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z in milliseconds since 1970.
    package static let first: Int64 = 946_684_800_000
    package static let last: Int64 = 253_402_300_799_999

    package static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// A supported instant, often at or near an edge.
    package static func instant(_ draw: inout Draw) -> Int64 {
        switch draw.int(0...5) {
        case 0: first + draw.int64(0...86_400_000 * 2)
        case 1: last - draw.int64(0...86_400_000 * 2)
        case 2: 1_790_000_000_000 + draw.int64(-86_400_000 * 400...86_400_000 * 400)  // around the test clock
        default: draw.int64(first...last)
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS` of whole seconds since 1970, in UTC.
    package static func civil(_ seconds: Int64) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(seconds)))
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!)
    }

    /// What Herald writes for an instant: UTC, milliseconds only when there are some.
    package static func written(_ milliseconds: Int64) -> String {
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        return civil(seconds) + (fraction == 0 ? "" : String(format: ".%03d", fraction)) + "Z"
    }

    /// A documented text for `milliseconds`: a `Z` or an offset up to ±18:00 that keeps the local year
    /// four digits, and 0 to 9 fractional digits that round to the instant.
    package static func text(_ draw: inout Draw, for milliseconds: Int64) -> String {
        var offsetMinutes = draw.chance(0.3) ? 0 : draw.int(-18 * 60...18 * 60)
        let localSeconds = milliseconds / 1000 + Int64(offsetMinutes * 60)
        if localSeconds < first / 1000 - 86_400 || localSeconds > last / 1000 { offsetMinutes = 0 }
        let local = milliseconds + Int64(offsetMinutes) * 60_000
        let (seconds, fraction) = local.quotientAndRemainder(dividingBy: 1000)
        var text = civil(seconds)
        if fraction != 0 || draw.chance(0.3) {
            // Three digits, or a digit string that rounds (half up) to them.
            switch draw.int(0...2) {
            case 0: text += String(format: ".%03d", fraction)
            case 1: text += String(format: ".%03d", fraction) + String(repeating: "0", count: draw.int(0...6))
            default:
                if fraction % 100 == 0 && draw.chance(0.5) {
                    text += ".\(fraction / 100)"
                } else {
                    text += String(format: ".%03d", fraction) + "\(draw.int(0...4))" + String(repeating: "9", count: draw.int(0...5))
                }
            }
        }
        if offsetMinutes == 0 && draw.chance(0.7) { return text + "Z" }
        let sign = offsetMinutes < 0 ? "-" : "+"
        return text + sign + String(format: "%02d:%02d", abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
    }

    /// Well-written times outside 2000-01-01T00:00:00Z…9999-12-31T23:59:59.999Z: a rule (422), not a format.
    package static func outOfRange(_ draw: inout Draw) -> String {
        draw.pick([
            "1999-12-31T23:59:59.999Z", "0000-01-01T00:00:00+18:00", "2000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01",
            "9999-12-31T23:59:59.9995Z", "0000-01-01T00:00:00Z",
        ])
    }

    /// Texts that are not times in the documented format (400): impossible days and times, other formats.
    package static func invalid(_ draw: inout Draw) -> String {
        draw.pick([
            "10000-01-01T00:00:00Z", "2026-02-29T10:00:00Z", "2100-02-29T00:00:00Z",
            "2026-04-31T10:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T10:60:00Z", "2026-11-21T10:00:60Z", "2026-11-21T10:00:00+24:00",
            "2026-11-21T10:00:00", "2026-11-21", "2026-11-21 10:00:00Z", "2026-11-21T10:00Z", "2026-11-21T10:00:00.Z",
            "+2026-11-21T10:00:00Z", "2026-1-21T10:00:00Z", "", " 2026-11-21T10:00:00Z", "2026-11-21T10:00:00Z ", "now",
            "2026-11-21T10:00:00+0100", "2026-11-21T10:00:00+01", "٢٠٢٦-١١-٢١T10:00:00Z", "2026-11-21T10:00:00\u{0}Z",
            // RFC 3339 allows these; the documented format does not.
            "2026-11-21t10:00:00Z", "2026-11-21T10:00:00z", "2026-11-21T10:00:00+18:01", "2026-11-21T10:00:00-23:59",
            "2026-11-21T10:00:00.1234567890Z",
        ])
    }
}
