import Foundation
import HeraldConsole
import HeraldHTTP
import Logging
import Testing

@testable import HeraldConsole

@Suite("Structured logs and request ids")
struct RequestLogTests {
    @Test("Every answer names its request in X-Request-Id; a trusted proxy's well-formed id is kept, anyone else's replaced")
    func requestIDs() async throws {
        let proxies = try #require(AddressRange("10.9.0.0/16"))
        let app = try await TestApp { $0.trustedProxies = [proxies] }
        func id(from address: String, sending given: String?) -> String? {
            let headers = HTTPHeaders(given.map { [("X-Request-Id", $0)] } ?? [])
            return app.respond(Request(method: "GET", target: "/healthz", headers: headers, remoteAddress: address)).headers["X-Request-Id"]
        }
        #expect(id(from: "10.9.0.1", sending: "lb-4711.a_b") == "lb-4711.a_b")
        for (address, given) in [("192.0.2.1", "lb-4711"), ("10.9.0.1", "has space"), ("10.9.0.1", String(repeating: "a", count: 65)), ("10.9.0.1", nil)] {
            let answered = try #require(id(from: address, sending: given))
            #expect(answered != given && RequestIDs.isWellFormed(answered), "\(address) \(given ?? "none") → \(answered)")
        }
        let first = try #require(id(from: "192.0.2.1", sending: nil)), second = try #require(id(from: "192.0.2.1", sending: nil))
        #expect(first != second)
    }

    @Test("An API error carries the request id of its header in its body")
    func apiErrorNamesTheRequest() async throws {
        let app = try await TestApp()
        let response = app.respond(Request(method: "GET", target: "/api/v1/feed"))
        #expect(response.status == 401)
        let header = try #require(response.headers["X-Request-Id"])
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect((body["error"] as? [String: Any])?["requestId"] as? String == header)
    }

    @Test("Log lines in both formats: fixed keys first, metadata sorted, anything in a value escaped so that a line stays one line and parses")
    func lineFormats() throws {
        let time = Date(timeIntervalSince1970: 1_790_000_000.5)
        let metadata: Logger.Metadata = ["path": "/campaigns/1", "status": .stringConvertible(404), "odd key=": "a \"quoted\" value\nwith a newline"]
        #expect(LineFormatter.logfmtLine(time: time, level: .info, label: "herald", message: "request", metadata: metadata)
            == #"time=2026-09-21T14:13:20.500Z level=info logger=herald msg=request odd_key_="a \"quoted\" value\nwith a newline" path=/campaigns/1 status=404"#)
        let json = LineFormatter.jsonLine(time: time, level: .error, label: "herald", message: "GET / failed: \u{1}", metadata: metadata)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(object == ["time": "2026-09-21T14:13:20.500Z", "level": "error", "logger": "herald", "msg": "GET / failed: \u{1}",
                           "path": "/campaigns/1", "status": "404", "odd key=": "a \"quoted\" value\nwith a newline"])

        #expect(LineFormatter.timestamp(Date(timeIntervalSince1970: -5)) == "1970-01-01T00:00:00.000Z")
        #expect(LineFormatter.timestamp(.distantFuture) == "4001-01-01T00:00:00.000Z")
        #expect(LineFormatter.timestamp(Date(timeIntervalSince1970: 1e12)) == "9999-12-31T23:59:59.999Z")
        #expect(LineFormatter.timestamp(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")

        // Generated text: every scalar class a value could hold, in both formats.
        var generator = SystemRandomNumberGenerator()
        let pool: [Unicode.Scalar] = ["a", " ", "=", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{7F}", "\u{1B}", "ش", "日", "😀", "\u{2028}"]
        for _ in 0..<500 {
            let text = String(String.UnicodeScalarView((0..<Int.random(in: 0...12, using: &generator)).map { _ in pool.randomElement(using: &generator)! }))
            let json = LineFormatter.jsonLine(time: time, level: .info, label: "t", message: text, metadata: ["v": .string(text)])
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String], "\(text.debugDescription)")
            #expect(parsed["msg"] == text && parsed["v"] == text, "\(text.debugDescription)")
            let logfmt = LineFormatter.logfmtLine(time: time, level: .info, label: "t", message: text, metadata: [:])
            #expect(!logfmt.contains("\n") && !logfmt.contains("\r") && !logfmt.unicodeScalars.contains { $0.value < 0x20 }, "\(text.debugDescription)")
            #expect(Self.logfmtMessage(logfmt) == text, "\(text.debugDescription) → \(logfmt)")
        }
    }

    /// `msg` read back from a logfmt line as a logfmt reader would (bare word, or quoted with JSON escapes).
    static func logfmtMessage(_ line: String) -> String? {
        guard let start = line.range(of: " msg=") else { return nil }
        let rest = line[start.upperBound...]
        guard rest.hasPrefix("\"") else { return String(rest.prefix { $0 != " " }) }
        var closing = rest.index(after: rest.startIndex)
        while closing < rest.endIndex, rest[closing] != "\"" {
            closing = rest.index(after: rest[closing] == "\\" ? rest.index(after: closing) : closing)
        }
        return try? JSONSerialization.jsonObject(with: Data(rest[...closing].utf8), options: .fragmentsAllowed) as? String
    }

    @Test("The log writer writes lines in order off the caller's thread, and when the reader falls behind drops lines (counting them) instead of growing")
    func writerIsBounded() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let writer = LogWriter(descriptor: ends[1])
        // Nobody reads yet: the pipe fills, then the writer's buffer, then lines are dropped.
        let line = String(repeating: "x", count: 1000)
        let total = 3 * LogWriter.capacity / 1000
        for index in 0..<total { writer.write("\(index) \(line)") }
        final class Received: @unchecked Sendable { var data = Data() }  // written by the reader until it finishes
        let received = Received(), readEnd = ends[0]
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { break }
                received.data.append(contentsOf: buffer[0..<count])
            }
        }
        reader.start()
        writer.flush()
        close(ends[1])
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        let lines = String(decoding: received.data, as: UTF8.self).split(separator: "\n")
        let numbers = lines.compactMap { Int($0.prefix { $0 != " " }) }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "in order, each once")
        // Drops are reported with the batch after them: a count line per batch that had any.
        let droppedLines = lines.filter { $0.contains("msg=\"dropped ") }
        #expect(!droppedLines.isEmpty)
        let dropped = droppedLines.compactMap { Int($0.split(separator: "dropped ")[1].prefix { $0.isNumber }) }.reduce(0, +)
        #expect(dropped > 0 && numbers.count + dropped == total)
        #expect(received.data.count < 2 * LogWriter.capacity + 2 * 65536)
    }

    @Test("The request line written straight to the server's log writer has the same keys, order and escaping as through swift-log, in both formats, and none below info")
    func requestLineDirect() throws {
        func written(_ format: LogFormat, level: Logger.Level, path: String) -> String {
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            defer { close(ends[0]) }
            let writer = LogWriter(descriptor: ends[1])
            var logger = Logger(label: "herald")
            logger.logLevel = level
            RequestLog(logger: logger, writer: writer, format: format)
                .record(method: "GET", path: path, status: 404, elapsed: .microseconds(1500), id: "abc-1")
            writer.flush()
            close(ends[1])
            var buffer = [UInt8](repeating: 0, count: 4096), data = [UInt8]()
            while case let count = read(ends[0], &buffer, buffer.count), count > 0 { data += buffer[0..<count] }
            return String(decoding: data, as: UTF8.self)
        }
        let plain = written(.logfmt, level: .info, path: "/campaigns/1")
        let expected = LineFormatter.logfmtLine(time: Date(), level: .info, label: "herald", message: "request", metadata: [
            "method": "GET", "ms": "1.500", "path": "/campaigns/1", "request_id": "abc-1", "status": .stringConvertible(404)])
        #expect(plain.hasSuffix("\n") && plain.dropFirst(29) == expected.dropFirst(29) + "\n", "\(plain) against \(expected)")
        #expect(written(.logfmt, level: .info, path: "/a b\"c").contains(#" path="/a b\"c" "#))
        let json = written(.json, level: .info, path: "/a b\"c\n")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(object["msg"] == "request" && object["path"] == "/a b\"c\n" && object["status"] == "404" && object["ms"] == "1.500"
            && object["request_id"] == "abc-1" && object["method"] == "GET")
        #expect(written(.logfmt, level: .warning, path: "/").isEmpty)
        // Line and paragraph separators and C1 controls from a request path are escaped, not written raw.
        let separated = "/a\u{2028}b\u{2029}c\u{85}d"
        let separatedLogfmt = written(.logfmt, level: .info, path: separated)
        #expect(separatedLogfmt.contains(#" path="/a\u2028b\u2029c\u0085d" "#), "\(separatedLogfmt.debugDescription)")
        let separatedJSON = written(.json, level: .info, path: separated)
        #expect(separatedJSON.contains(#""path":"/a\u2028b\u2029c\u0085d""#), "\(separatedJSON.debugDescription)")
        for line in [separatedLogfmt, separatedJSON] {
            #expect(!line.dropLast().unicodeScalars.contains { $0 == "\n" || $0 == "\u{85}" || $0 == "\u{2028}" || $0 == "\u{2029}" })
        }
    }
}
