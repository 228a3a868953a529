import Foundation
import HeraldHTTP
@testable import HeraldMicroHTTPD
import Logging
import Synchronization
import TestSupport
import Testing

/// Request heads sent over a real loopback socket to the adapter: generated header lines (CR LF or LF
/// endings, blanks or none after the colon, empty values, any printable ASCII with tabs) reach the
/// handler with every value whole, and the same heads with a NUL put anywhere in the target or a value
/// are a 400 with the connection closed, the handler never asked. (A NUL as the very last byte of a
/// line that ends in a bare LF hides nothing and cannot be told from the line end, so none is put there.)
@Suite("Generated inputs: request heads over a socket")
struct RequestHeadProperty {
    struct Head: CustomStringConvertible {
        var target: String
        var fields: [(name: String, value: String, blanks: String, lineEnd: String)]
        /// Where a NUL goes, if any: the target (-1) or a field's value, and how far into it.
        var nul: (field: Int, offset: Int)?

        var bytes: [UInt8] {
            var target = Array(self.target.utf8)
            if let nul, nul.field == -1 { target.insert(0, at: min(nul.offset, target.count)) }
            var head = Array("GET ".utf8) + target + Array(" HTTP/1.1\r\n".utf8)
            for (index, field) in fields.enumerated() {
                var value = Array(field.value.utf8)
                if let nul, nul.field == index { value.insert(0, at: min(nul.offset, value.count)) }
                head += Array("\(field.name):\(field.blanks)".utf8) + value + Array(field.lineEnd.utf8)
            }
            return head + Array("\r\n".utf8)
        }

        var description: String { String(decoding: bytes, as: UTF8.self).debugDescription }
    }

    static let names = ["Host", "Origin", "X-Forwarded-For", "Content-Length", "Accept", "If-None-Match", "X-Installation-Id", "Authorization", "X-Empty"]

    static func head(_ draw: inout Draw) -> Head {
        let target = "/" + String(draw.list(0...12) { $0.pick(Array("abcxyz019-._~/%?=&")) })
        let fields = (0..<draw.int(1...6)).map { index -> (name: String, value: String, blanks: String, lineEnd: String) in
            let name = index == 0 ? "Host" : draw.pick(names.filter { $0 != "Content-Length" })
            // Printable ASCII with blanks inside, not at the start (MHD drops the leading ones).
            var value = String(draw.list(0...24) { Character($0.scalar(0x21...0x7E)) })
            if !value.isEmpty && draw.chance(0.3) { value += draw.pick([" ", "\t", " \t "]) + String(draw.list(1...6) { Character($0.scalar(0x21...0x7E)) }) }
            return (name, value, draw.pick(["", " ", "  ", "\t", " \t"]), draw.pick(["\r\n", "\n"]))
        }
        var head = Head(target: target, fields: fields)
        if draw.chance(0.5) {
            let field = draw.int(-1...(fields.count - 1))
            let length = field == -1 ? target.utf8.count : fields[field].value.utf8.count
            // Not at the target's first byte: `GET \0…` leaves MHD without a target, its own 400.
            let offset = draw.int((field == -1 ? 1 : 0)...length)
            // A NUL after a value's last byte on a line ending in a bare LF hides nothing: that line ends in CR LF.
            if field >= 0 && offset == length { head.fields[field].lineEnd = "\r\n" }
            head.nul = (field, offset)
        }
        return head
    }

    @Test func headsReadWholeAndANulAnywhereIsRefused() throws {
        let seen = Mutex<[String: [String]]?>(nil)
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        let server = HTTPServer(configuration: configuration, logger: Logger(label: "test")) { request in
            seen.withLock { $0 = Dictionary(grouping: Array(request.headers), by: { $0.name.lowercased() }).mapValues { $0.map(\.value) } }
            return .text(request.target)
        }
        try server.start()
        defer { server.shutdown() }

        var run = GeneratedRun("request heads over a socket", cases: 400)
        run.run(Generated.cases { draw in Self.head(&draw) }) { head, run in
            seen.withLock { $0 = nil }
            let connection = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 5)
            connection.send(head.bytes)
            let reply = try connection.readReply()
            if head.nul != nil {
                run.expect(reply.status == 400 && reply.text.contains("NUL"), "answered \(reply.status) \(reply.text)", input: head)
                run.expect(connection.isClosedByServer(), "the connection stayed open", input: head)
                run.expect(seen.withLock { $0 } == nil, "the handler saw it", input: head)
                run.note("a NUL, refused")
            } else {
                run.expect(reply.status == 200 && reply.text == head.target, "answered \(reply.status) \(reply.text)", input: head)
                let expected = Dictionary(grouping: head.fields, by: { $0.name.lowercased() }).mapValues { $0.map(\.value) }
                let received = seen.withLock { $0 } ?? [:]
                run.expect(received == expected, "the handler saw \(received)", input: head)
                run.note("whole")
            }
        }
        #expect(run.failures == 0)
    }
}
