import Foundation
import HeraldHTTP
import TestSupport
import Testing

/// Any `Host` a browser could send reaches the console's pages only when it names `localhost`, an IP
/// literal or a configured name (in any case, with any port); every other name, however close to an
/// allowed one, and any text that is no host, gets the 421. The API answers them all.
@Suite("Generated inputs: the hosts the console answers")
struct ConsoleHostProperty {
    static let configured = ["herald.example.com", "console.shop.example"]

    static func port(_ draw: inout Draw) -> String {
        draw.pick(["", "", ":8080", ":443", ":80", ":1", ":65535"])
    }

    static func randomCase(_ text: String, _ draw: inout Draw) -> String {
        String(text.map { draw.chance(0.3) ? Character($0.uppercased()) : $0 })
    }

    static func label(_ draw: inout Draw) -> String {
        String(draw.list(1...10) { $0.pick(Array("abcdefghijklmnopqrstuvwxyz0123456789-")) })
    }

    /// A `Host` value and whether the console answers it.
    static func host(_ draw: inout Draw) -> (host: String, answered: Bool) {
        switch draw.int(0...7) {
        case 0: return (randomCase(draw.pick(configured), &draw) + port(&draw), true)
        case 1: return (randomCase("localhost", &draw) + port(&draw), true)
        case 2: return ((0..<4).map { _ in String(draw.int(0...255)) }.joined(separator: ".") + port(&draw), true)
        case 3:
            let groups = (0..<8).map { _ in String(draw.int(0...0xFFFF), radix: 16) }
            let written = draw.chance(0.5) ? groups.joined(separator: ":") : groups.prefix(2).joined(separator: ":") + "::" + groups.last!
            return ("[" + randomCase(written, &draw) + "]" + port(&draw), true)
        case 4:
            // Names close to allowed ones: subdomains, suffixes, prefixes, the loopback name under another.
            let base = draw.pick(configured + ["localhost"])
            let near = draw.pick([base + "." + label(&draw), label(&draw) + base, base + ".", label(&draw) + "." + base, base + "x"])
            return (near + port(&draw), false)
        case 5: return ((0..<draw.int(1...4)).map { _ in label(&draw) }.joined(separator: ".") + draw.pick([".example", ".com", ".test"]) + port(&draw), false)
        case 6: return (draw.pick(["", " ", "herald.example.com/", "herald.example.com:80:80", "[::1", "::1]", "user@localhost", "1.2.3", "256.1.1.1", "localhost:http"]), false)
        default: return (GeneratedText.valid(&draw, maxPieces: 3, maxCharacters: 30), false)
        }
    }

    @Test func onlyHostsThatCannotBeReboundOrAreConfiguredReachTheConsole() async throws {
        let app = try await TestApp { $0.consoleHosts = Self.configured }
        var run = GeneratedRun("console hosts", cases: 2000)
        run.run(Generated.cases { draw in Self.host(&draw) }) { input, run in
            var request = Request(method: "GET", target: "/setup", headers: HTTPHeaders([("Host", input.host)]))
            request.remoteAddress = "192.0.2.10"
            let status = app.respond(request).status
            // An empty or blank Host names no host: like no Host at all, answered.
            let answered = input.answered || input.host.trimmingCharacters(in: .whitespaces).isEmpty
            run.expect(status == (answered ? 200 : 421), "answered \(status)", input: input.host)
            var api = Request(method: "GET", target: "/api/v1/feed", headers: HTTPHeaders([("Host", input.host)]))
            api.remoteAddress = "192.0.2.10"
            run.expect(app.respond(api).status == 401, "the API refused the host", input: input.host)
            run.note(status == 200 ? "answered" : "421")
        }
        #expect(run.failures == 0)
    }
}
