#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing
@testable import HeraldConsole

/// Generated web origins, as admins type them and as anything else: the reader never traps, what it
/// accepts is written as browsers write `Origin` (so one lookup matches the header), and each way of
/// getting an origin wrong is refused with its own reason.
@Suite("Generated inputs: web origins")
struct WebOriginProperty {
    /// An origin drawn from its parts, and the text browsers would send for it.
    struct Typed: CustomStringConvertible {
        let text: String
        let expected: String
        var description: String { "\(text) → \(expected)" }
    }

    static func randomCase(_ text: String, _ draw: inout Draw) -> String {
        String(text.map { draw.chance(0.3) ? Character($0.uppercased()) : $0 })
    }

    /// A host and how browsers write it: DNS names (punycode labels included), IPv4, IPv6 in its many
    /// spellings, and the loopback names http is allowed for.
    static func host(_ draw: inout Draw) -> (typed: String, written: String, loopback: Bool) {
        switch draw.int(0...4) {
        case 0:
            let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
            let labels = draw.list(1...4) { draw -> String in
                let middle = String(draw.list(0...20) { draw in draw.chance(0.1) ? "-" : draw.pick(letters) })
                return (draw.chance(0.1) ? "xn--" : "") + String(draw.pick(Array("abcdefghijklmnopqrstuvwxyz"))) + middle
                    + String(draw.pick(letters))
            } + [draw.pick(["com", "example", "shop", "co"])]
            let name = labels.joined(separator: ".")
            return (randomCase(name, &draw), name, false)
        case 1:
            let address = (0..<4).map { _ in String(draw.int(0...255)) }.joined(separator: ".")
            return (address, address, address == "127.0.0.1")
        case 2:
            let bytes = (0..<16).map { _ in draw.chance(0.5) ? UInt8(0) : UInt8(draw.int(0...255)) }
            // glibc compresses as the URL standard does, except that it may end in dotted IPv4, which
            // browsers never write (those are pinned by hand in WebOriginTests).
            let compressed = glibcText(bytes)
            let written = compressed.contains(".") ? WebOrigin.ipv6Text(bytes) : compressed
            return ("[" + ipv6Spelling(bytes, &draw) + "]", "[" + written + "]", bytes == Array(repeating: 0, count: 15) + [1])
        case 3:
            let loopback = draw.pick(["localhost", "127.0.0.1", "[::1]", "[0:0:0:0:0:0:0:1]", "[::0001]"])
            let written = loopback.hasPrefix("[") ? "[::1]" : loopback
            return (randomCase(loopback, &draw), written, true)
        default:
            let name = draw.pick(["shop.example.com", "xn--mnchen-3ya.example", "a.b", "localhost.example"])
            return (randomCase(name, &draw), name, false)
        }
    }

    /// One of the ways to write an IPv6 address: every piece in full with leading zeros, or as glibc
    /// compresses it (which may end in dotted IPv4), in random case.
    static func ipv6Spelling(_ bytes: [UInt8], _ draw: inout Draw) -> String {
        if draw.chance(0.5) {
            let pieces = stride(from: 0, to: 16, by: 2).map { String(format: "%04x", Int(bytes[$0]) << 8 | Int(bytes[$0 + 1])) }
            return randomCase(pieces.joined(separator: ":"), &draw)
        }
        return randomCase(glibcText(bytes), &draw)
    }

    static func glibcText(_ bytes: [UInt8]) -> String {
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func typed(_ draw: inout Draw) -> Typed {
        let host = host(&draw)
        let secure = !host.loopback || draw.chance(0.5)
        let scheme = secure ? "https" : "http"
        var port = ""
        var writtenPort = ""
        switch draw.int(0...3) {
        case 0: break
        case 1: port = ":" + (secure ? "443" : "80")
        case 2:
            let number = draw.int(1...65_535)
            port = ":" + String(repeating: "0", count: draw.int(0...(5 - String(number).count))) + String(number)
            writtenPort = number == (secure ? 443 : 80) ? "" : ":\(number)"
        default:
            let number = draw.int(1...65_535)
            port = ":\(number)"
            writtenPort = number == (secure ? 443 : 80) ? "" : ":\(number)"
        }
        let space = draw.pick(["", " ", "\t", "\n"])
        let text = space + randomCase(scheme, &draw) + "://" + host.typed + port + (draw.chance(0.3) ? "/" : "") + space
        return Typed(text: text, expected: scheme + "://" + host.written + writtenPort)
    }

    @Test("Origins typed in any case, spacing and spelling read as browsers write them, and read back unchanged")
    func normalization() {
        var run = GeneratedRun("web origins", cases: 3_000)
        run.run(Generated.cases { draw in Self.typed(&draw) }) { typed, run in
            switch WebOrigin.parse(typed.text) {
            case .success(let origin):
                run.expect(origin.text == typed.expected, "read as \(origin.text)", input: typed)
                run.expect((try? WebOrigin.parse(origin.text).get())?.text == origin.text, "does not read back as itself", input: typed)
                run.note(origin.text.hasPrefix("https") ? "https" : "http loopback")
            case .failure(let problem):
                run.fail("refused: \(problem)", input: typed)
            }
        }
    }

    /// A good origin broken one way, and the reason that way must be refused with.
    static func broken(_ draw: inout Draw) -> (text: String, problem: WebOrigin.Problem) {
        let good = typed(&draw).expected
        let tail = good.dropFirst(good.hasPrefix("https") ? 8 : 7)
        switch draw.int(0...9) {
        case 0: return (good + draw.pick(["/shop", "?q=1", "#top", "//", "/a/b"]), .path)
        case 1: return (good.prefix(good.hasPrefix("https") ? 8 : 7) + draw.pick(["user@", "u:p@", "@"]) + tail, .userInfo)
        case 2: return (draw.pick(["ftp://", "ws://", "", "//", "https:/", "javascript:"]) + tail, .scheme)
        case 3: return ("http://" + draw.pick(["shop.example.com", "10.0.0.1", "[2001:db8::1]", "localhost.example"]), .insecureHTTP)
        case 4: return ("https://shop.example.com:" + draw.pick(["0", "65536", "99999", "-1", "1e3", "", "080a", "000000"]), .port)
        case 5: return ("https://" + draw.pick(["münchen.example", "shop.例え.jp", "ѕhop.example", "shop.example\u{301}"]), .notASCII)
        case 6:
            return ("https://" + draw.pick(["-shop.example", "shop-.example", "sh op.example", "shop..example", ".example", "a_b.example",
                                           "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "0x7f.0.0.1", "[::1", "[zz::1]",
                                           "[fe80::1%25eth0]", String(repeating: "a", count: 64) + ".example", "shop.example:1:2"]), .host)
        case 7: return (draw.pick(["*", "https://*.example.com", "https://shop.*"]), .wildcard)
        case 8: return (draw.pick(["", " ", "\n\t"]), .empty)
        default: return ("https://" + String(repeating: "a.", count: 100) + "example", .tooLong)
        }
    }

    @Test("Each way of getting an origin wrong is refused with its own reason")
    func refusals() {
        var run = GeneratedRun("broken web origins", cases: 2_000)
        run.run(Generated.cases { draw in Self.broken(&draw) }) { broken, run in
            switch WebOrigin.parse(broken.text) {
            case .success(let origin): run.fail("accepted as \(origin.text)", input: broken)
            case .failure(let problem):
                run.expect(problem == broken.problem, "refused as \(problem)", input: broken)
                run.note("\(problem)")
            }
        }
    }

    @Test("Any text is read without trapping; whatever is accepted has the shape of an Origin header")
    func anyText() {
        var run = GeneratedRun("any origin text", cases: 3_000)
        let shape = #/^(https://([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:]+\])(:[1-9][0-9]{0,4})?|http://(localhost|127\.0\.0\.1|\[::1\])(:[1-9][0-9]{0,4})?)$/#
        let pieces = ["https://", "http://", "HTTPS://", "localhost", "[", "]", ":", "::", "/", "?", "#", "@", ".", "-", "%2e", "443", "80",
                      "0", "65535", "shop", "example", "com", "xn--", "*", " ", "\\", "\u{0}", "é", "\u{202E}", "1.2.3.4", "ffff"]
        run.run(Generated.cases { draw -> String in
            switch draw.int(0...4) {
            case 0: return String(String.UnicodeScalarView(draw.list(0...300) { draw in draw.scalar(0...0x10FFFF) }))
            case 1: return draw.list(0...12) { draw in draw.pick(pieces) }.joined()
            default:
                // A good origin with a few characters inserted, removed or replaced
                var characters = Array(Self.typed(&draw).text)
                for _ in 0..<draw.int(1...3) where !characters.isEmpty {
                    let index = draw.int(0...(characters.count - 1))
                    switch draw.int(0...2) {
                    case 0: characters.insert(contentsOf: draw.pick(pieces), at: index)
                    case 1: characters.remove(at: index)
                    default: characters[index] = draw.pick(Array("abcxyz019:/.[]-@%"))
                    }
                }
                return String(characters)
            }
        }) { text, run in
            guard case .success(let origin) = WebOrigin.parse(text) else { run.note("refused"); return }
            run.expect(origin.text.wholeMatch(of: shape) != nil, "accepted \(origin.text), not an origin's shape", input: text)
            run.expect(!origin.text.hasSuffix(":443") || origin.text.hasPrefix("http:"), "kept https' default port", input: text)
            run.expect(!origin.text.hasSuffix(":80") || origin.text.hasPrefix("https:"), "kept http's default port", input: text)
            run.expect((try? WebOrigin.parse(origin.text).get())?.text == origin.text, "does not read back as itself", input: text)
            run.note("accepted")
        }
    }
}
