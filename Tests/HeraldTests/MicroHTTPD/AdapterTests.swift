import Foundation
import HeraldHTTP
import HeraldMicroHTTPD
import Logging
import Synchronization
import Testing

/// The libmicrohttpd adapter, over real loopback sockets.
@Suite("HTTP adapter over loopback")
struct AdapterTests {
    /// Starts a server on a free port with `handler`.
    private func startServer(
        handler: @escaping @Sendable (Request) -> Response = { request in
            .text("\(request.method) \(request.path ?? "?") \(request.query.pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")) \(request.body.count)")
        },
        configure: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 2
        configure(&configuration)
        let server = HTTPServer(configuration: configuration, logger: Logger(label: "test"), handler: handler)
        try server.start()
        return server
    }

    /// The paths of the requests a handler saw.
    private final class HandledPaths: Sendable {
        private let seen = Mutex<[String]>([])

        func note(_ request: Request) -> Response {
            seen.withLock { $0.append(request.path ?? "?") }
            return .text("handled")
        }

        var paths: [String] { seen.withLock { $0 } }
    }

    /// The adapter's own answers carry the same security headers as the console's.
    private func expectSecurityHeaders(_ reply: RawHTTPConnection.Reply, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.headers["content-security-policy"] == SecurityHeaders.contentSecurityPolicy, sourceLocation: sourceLocation)
        #expect(reply.headers["x-frame-options"] == "DENY", sourceLocation: sourceLocation)
        #expect(reply.headers["x-content-type-options"] == "nosniff", sourceLocation: sourceLocation)
        #expect(reply.headers["referrer-policy"] == "same-origin", sourceLocation: sourceLocation)
    }

    @Test("Port 0 binds a free port that can be read back")
    func freePort() throws {
        let server = try startServer()
        defer { server.shutdown() }
        #expect(server.port > 0)
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("GET /hello?name=ada&x=%C3%A9 HTTP/1.1\r\nHost: t\r\n\r\n")
        let reply = try connection.readReply()
        #expect(reply.status == 200)
        #expect(reply.text == "GET /hello name=ada&x=é 0")
    }

    @Test("The handler sees method, path, query, headers, cookies, body and the client address")
    func requestValues() throws {
        let seen = Mutex<Request?>(nil)
        let server = try startServer { request in
            seen.withLock { $0 = request }
            return .text("ok")
        }
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        let body = "name=%D9%85%D8%B1%DB%8C%D9%85&platforms=ios&platforms=web"
        connection.send("POST /apps/7?x=1 HTTP/1.1\r\nHost: t\r\nCookie: a=1; herald_session=abc\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(try connection.readReply().status == 200)
        let request = try #require(seen.withLock { $0 })
        #expect(request.method == "POST")
        #expect(request.path == "/apps/7")
        #expect(request.query["x"] == "1")
        #expect(request.cookies["herald_session"] == "abc")
        #expect(request.remoteAddress == "127.0.0.1")
        let form = try request.formFields()
        #expect(form["name"] == "مریم")
        #expect(form.values("platforms") == ["ios", "web"])
    }

    @Test("Raw bytes past ASCII in the target reach the handler percent-encoded, so only UTF-8 decodes")
    func rawTargetBytes() throws {
        // Given a server that echoes the decoded path, or says it could not decode it
        let server = try startServer { request in .text(request.path ?? "not UTF-8") }
        defer { server.shutdown() }

        // When targets carry raw UTF-8, and raw bytes that are not UTF-8, then UTF-8 reads as itself and the rest never as U+FFFD
        for (target, expected) in [(Array("/café".utf8), "/café"), ([UInt8]("/caf".utf8) + [0xE9], "not UTF-8"), ([UInt8]("/".utf8) + [0xFF, 0xFE], "not UTF-8")] {
            let connection = try RawHTTPConnection(port: server.port)
            connection.send(Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
            let reply = try connection.readReply()
            #expect(reply.status == 200)
            #expect(reply.text == expected)
        }
    }

    @Test("Keep-alive: several requests on one connection")
    func keepAlive() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        for index in 1...3 {
            connection.send("GET /n/\(index) HTTP/1.1\r\nHost: t\r\n\r\n")
            let reply = try connection.readReply()
            #expect(reply.status == 200)
            #expect(reply.text.hasPrefix("GET /n/\(index)"))
        }
    }

    @Test("HEAD gets the headers of GET and no body")
    func head() throws {
        let server = try startServer { _ in .text("twelve bytes") }
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("HEAD / HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try connection.readReply(expectBody: false)
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "12")
        // The next response on the same connection starts right away: no body bytes were sent.
        connection.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readReply().text == "twelve bytes")
    }

    @Test("A 304 carries no Content-Length and no body, as nginx's, and says the connection closes after it")
    func notModifiedDeclaresNoLength() throws {
        let server = try startServer { request in
            request.path == "/feed" ? .notModified(headers: HTTPHeaders([("ETag", "\"abc\"")])) : .text("twelve bytes")
        }
        defer { server.shutdown() }
        for version in ["HTTP/1.1", "HTTP/1.0"] {
            let connection = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 3)
            connection.send("GET /feed \(version)\r\nHost: t\r\nIf-None-Match: \"abc\"\r\n\r\n")
            // Everything the server sends, to its close: one head, nothing after it.
            let answer = String(decoding: try connection.readToEnd(), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 304 Not Modified\r\n"), "\(version): \(answer)")
            #expect(answer.hasSuffix("\r\n\r\n") && answer.components(separatedBy: "\r\n\r\n").count == 2, "\(version): \(answer)")
            let lower = answer.lowercased()
            #expect(!lower.contains("content-length") && !lower.contains("transfer-encoding"), "\(version): \(answer)")
            #expect(lower.contains("\r\nconnection: close\r\n") && lower.contains("\r\netag: \"abc\"\r\n"), "\(version): \(answer)")
        }
    }

    @Test("A shared body (sent from its in-memory file) arrives byte for byte, again and again, also after HEAD and from many connections")
    func sharedBody() throws {
        // Given a 200 KB body that is not valid UTF-8 everywhere, shared by every response
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
        let shared = SharedBody(bytes)
        let server = try startServer { _ in Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/octet-stream")]), body: shared) }
        defer { server.shutdown() }

        // When it is fetched three times on one connection with a HEAD in between, and from eight more connections
        let connection = try RawHTTPConnection(port: server.port)
        for _ in 0..<3 {
            connection.send("GET /feed HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try connection.readReply().body == bytes)
        }
        connection.send("HEAD /feed HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readReply(expectBody: false).headers["content-length"] == "200000")
        connection.send("GET /feed HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readReply().body == bytes)
        let others = try (0..<8).map { _ in try RawHTTPConnection(port: server.port) }
        for other in others { other.send("GET /feed HTTP/1.1\r\nHost: t\r\n\r\n") }

        // Then every answer is the whole body
        for other in others { #expect(try other.readReply().body == bytes) }
    }

    @Test("A declared body over the cap gets 413 before it is sent")
    func declaredBodyTooLarge() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: \(2 * 1024 * 1024)\r\n\r\n")
        let reply = try connection.readReply()
        #expect(reply.status == 413)
        #expect(reply.text.contains("larger than the limit of 1024 KiB"))
        expectSecurityHeaders(reply)
        #expect(reply.headers["connection"] == "close")
    }

    @Test("A chunked body that passes the cap gets 413, and the server keeps serving")
    func chunkedBodyTooLarge() throws {
        let handled = Atomic<Int>(0)
        let server = try startServer { _ in
            handled.add(1, ordering: .relaxed)
            return .text("handled")
        }
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024)
        for _ in 0..<32 {
            connection.send(Array("10000\r\n".utf8) + chunk + Array("\r\n".utf8))
        }
        connection.send("0\r\n\r\n")
        let reply = try connection.readReply()
        #expect(reply.status == 413)
        expectSecurityHeaders(reply)
        #expect(handled.load(ordering: .relaxed) == 0, "the handler never sees an oversized body")

        let next = try RawHTTPConnection(port: server.port)
        next.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try next.readReply().status == 200)
    }

    @Test("A body just under the cap arrives whole")
    func bodyUnderCap() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        let size = 1024 * 1024
        connection.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: \(size)\r\n\r\n")
        connection.send([UInt8](repeating: 120, count: size))
        let reply = try connection.readReply()
        #expect(reply.status == 200)
        #expect(reply.text == "POST /upload  \(size)")
    }

    @Test("A silent connection is closed after the connection timeout")
    func idleTimeout() throws {
        let server = try startServer(configure: { $0.connectionTimeoutSeconds = 1 })
        defer { server.shutdown() }
        let silent = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 5)
        silent.send("GET / HTTP/1.1\r\nHo")
        #expect(silent.isClosedByServer())
        let other = try RawHTTPConnection(port: server.port)
        other.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try other.readReply().status == 200)
    }

    @Test("A burst of closing connections does not stall the server: MHD 0.9.75's own epoll loop slept with 128 closes in hand")
    func closingBurstDoesNotStall() throws {
        // Given one event loop at its connection limit: 128 idle keep-alive connections and one busy in a slow handler
        let server = try startServer(handler: { request in
            if request.path == "/slow" { Thread.sleep(forTimeInterval: 1) }
            return .text("ok")
        }, configure: { $0.threads = 1; $0.connectionLimit = 129 })
        defer { server.shutdown(gracePeriod: .zero) }
        var idle = try (0..<128).map { _ in try RawHTTPConnection(port: server.port) }
        for connection in idle {
            connection.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            _ = try connection.readReply()
        }
        let slow = try RawHTTPConnection(port: server.port)
        slow.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.3)

        // When the 128 idle ones close while the loop is busy, so that its next wait returns exactly 128 events
        idle.removeAll()
        #expect(try slow.readReply().status == 200)

        // Then a new client is answered at once, not when the idle timeout next wakes the loop
        let started = ContinuousClock.now
        let next = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 5)
        next.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try next.readReply().status == 200)
        #expect(ContinuousClock.now - started < .seconds(1))
    }

    @Test("A client that trickles its request head is cut off at the head deadline while others are served")
    func trickledHeadIsCutOff() throws {
        // Given a server that wants whole heads within a second
        let server = try startServer(configure: { $0.requestHeadTimeout = .seconds(1) })
        defer { server.shutdown() }

        // When a client sends a header line every 0.2 s, which keeps it from ever being idle
        let trickler = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 1)
        let opened = ContinuousClock.now
        trickler.send("GET / HTTP/1.1\r\n")
        var lines = 0
        while trickler.send(Array("X-Line-\(lines): x\r\n".utf8)), ContinuousClock.now - opened < .seconds(5) {
            lines += 1
            let other = try RawHTTPConnection(port: server.port)
            other.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try other.readReply().status == 200)
            Thread.sleep(forTimeInterval: 0.2)
        }

        // Then the server closes it soon after the deadline, without an answer
        #expect(trickler.isClosedByServer())
        let elapsed = ContinuousClock.now - opened
        #expect(elapsed > .milliseconds(900) && elapsed < .seconds(3), "closed after \(elapsed)")
    }

    @Test("A body slower than the minimum rate is cut off; one at a fair rate arrives whole")
    func slowBodyIsCutOff() throws {
        // Given one second of grace, then 1,000 bytes a second
        let server = try startServer(configure: {
            $0.requestBodyGrace = .seconds(1)
            $0.minimumBodyRate = 1000
        })
        defer { server.shutdown() }

        // When one client sends a byte every 0.1 s and another 20 KB every 0.1 s
        let slow = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 1)
        slow.send("POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
        let fair = try RawHTTPConnection(port: server.port)
        let size = 200_000
        fair.send("POST /fair HTTP/1.1\r\nHost: t\r\nContent-Length: \(size)\r\n\r\n")
        let started = ContinuousClock.now
        var sent = 0
        while sent < size {
            #expect(slow.send([UInt8(ascii: "x")]) || sent > 0)
            fair.send([UInt8](repeating: UInt8(ascii: "y"), count: 20_000))
            sent += 20_000
            Thread.sleep(forTimeInterval: 0.1)
        }

        // Then the fair body arrives whole after more than its grace, and the slow one is closed unanswered
        #expect(try fair.readReply().text == "POST /fair  \(size)")
        #expect(ContinuousClock.now - started > .seconds(1))
        #expect(slow.isClosedByServer())
    }

    @Test("A slow handler is not cut off; the next head is due a head deadline after the answer")
    func deadlinesPauseWhileAnswering() throws {
        let server = try startServer(handler: { request in
            if request.path == "/slow" { Thread.sleep(forTimeInterval: 1.5) }
            return .text("done")
        }, configure: { $0.requestHeadTimeout = .seconds(1) })
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 3)

        connection.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readReply().text == "done")
        Thread.sleep(forTimeInterval: 0.5)
        connection.send("GET /again HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readReply().text == "done")

        let answered = ContinuousClock.now
        #expect(connection.isClosedByServer())
        let idle = ContinuousClock.now - answered
        #expect(idle > .milliseconds(900) && idle < .seconds(2), "closed after \(idle) idle")
    }

    @Test("One address may hold only its share of connections; others still get in")
    func perAddressLimit() throws {
        // Given at most three connections per address
        let server = try startServer(configure: { $0.connectionsPerAddress = 3 })
        defer { server.shutdown() }
        var held = try (0..<3).map { _ in try RawHTTPConnection(port: server.port) }
        for connection in held {
            connection.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try connection.readReply().status == 200)
        }

        // When the same address opens a fourth, then another address opens one
        let fourth = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 2)
        let neighbour = try RawHTTPConnection(port: server.port, from: "127.0.0.2")

        // Then the fourth is closed unanswered, the other address is served, and a freed slot can be reused
        #expect(fourth.isClosedByServer())
        neighbour.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try neighbour.readReply().status == 200)
        held.removeLast()
        Thread.sleep(forTimeInterval: 0.2)
        let again = try RawHTTPConnection(port: server.port)
        again.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try again.readReply().status == 200)
    }

    @Test("Where idle connections give way (the metrics listener), 24 idle connections from three addresses keep no one out, and a request being sent is never cut off for room")
    func idleConnectionsGiveWay() throws {
        // Given the metrics listener's limits: one thread, 16 connections, 8 per address, idle ones giving way
        let server = try startServer(handler: { _ in .text("scraped") }, configure: {
            $0.threads = 1
            $0.connectionLimit = 16
            $0.connectionsPerAddress = 8
            $0.idleConnectionsGiveWay = true
        })
        defer { server.shutdown() }

        // When a request is half sent, and 24 connections from three addresses open and send nothing
        let sending = try RawHTTPConnection(port: server.port, from: "127.0.0.9")
        sending.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nhello")
        Thread.sleep(forTimeInterval: 0.2)
        let idle = try (0..<24).map { try RawHTTPConnection(port: server.port, readTimeoutSeconds: 2, from: "127.0.0.\(1 + $0 % 3)") }

        // Then a scraper from one of those addresses, and one from another, are answered at once
        for source in ["127.0.0.1", "127.0.0.4"] {
            let scraper = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 3, from: source)
            scraper.send("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try scraper.readReply().text == "scraped", "\(source)")
        }
        // the request being sent is answered once whole, and only idle connections made room
        sending.send("world")
        #expect(try sending.readReply().text == "scraped")
        Thread.sleep(forTimeInterval: 0.2)
        let closed = idle.filter { connection in
            var byte: UInt8 = 0
            let count = recv(connection.descriptor, &byte, 1, Int32(MSG_DONTWAIT))
            return count == 0 || (count < 0 && errno == ECONNRESET)
        }
        #expect((10...12).contains(closed.count), "9 past the total while they opened, then one or two for each scraper: \(closed.count)")
    }

    @Test("With no per-address limit (behind a proxy), the total limit still holds")
    func totalLimitWithoutPerAddressLimit() throws {
        let server = try startServer(configure: {
            $0.connectionsPerAddress = 0
            $0.connectionLimit = 4
        })
        defer { server.shutdown() }
        let held = try (0..<4).map { _ in try RawHTTPConnection(port: server.port) }
        for connection in held {
            connection.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try connection.readReply().status == 200)
        }
        let fifth = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 2, from: "127.0.0.2")
        #expect(fifth.isClosedByServer())
    }

    @Test("The server raises the soft limit on open files to the hard one and sizes its connection limit from it")
    func descriptorBudget() throws {
        // Given a soft limit of 1,024, the common default
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let hard = limit.rlim_max
        limit.rlim_cur = min(1024, hard)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)

        // When servers are made, one asking for more connections than any limit allows and one for few
        var huge = HTTPServerConfiguration()
        huge.threads = 2
        huge.connectionLimit = 10_000_000
        let large = HTTPServer(configuration: huge, logger: Logger(label: "test"), handler: { _ in .text("") })
        var modest = huge
        modest.connectionLimit = 100
        let small = HTTPServer(configuration: modest, logger: Logger(label: "test"), handler: { _ in .text("") })

        // Then the soft limit is the hard one, the first gets what it leaves room for, the second what it asked
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #expect(limit.rlim_cur == hard)
        #expect(large.connectionLimit == DescriptorBudget.connectionCapacity(descriptors: Int(hard), threads: 2))
        #expect(small.connectionLimit == 100)
        #expect(DescriptorBudget.connectionCapacity(descriptors: 20_000, threads: 4) == 9_862)
        #expect(DescriptorBudget.connectionCapacity(descriptors: 100, threads: 4) == 0)
    }

    /// Requests whose end could be read two ways (by a proxy in front and by us), each followed by a
    /// request that would be smuggled if the first were read the other way.
    static let ambiguousFraming: [(name: String, head: String)] = [
        ("Content-Length and Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("Transfer-Encoding and Content-Length", "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n"),
        ("two different Content-Lengths", "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nContent-Length: 38\r\n\r\n"),
        ("two equal Content-Lengths", "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n"),
        ("Transfer-Encoding other than chunked", "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity\r\n\r\n"),
        ("chunked after another coding", "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
        ("chunked before another coding", "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n"),
        ("Transfer-Encoding twice", "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("a space before the colon of Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"),
        ("a tab before the colon of Content-Length", "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length\t: 5\r\n\r\nhello"),
        ("a folded Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity\r\n chunked\r\n\r\n0\r\n\r\n"),
        ("a folded line hiding Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: t\r\nX-Padding: a\r\n\tTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("a bare CR inside a header", "POST /a HTTP/1.1\r\nHost: t\r\nX-Padding: a\rTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("chunked in HTTP/1.0", "POST /a HTTP/1.0\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        // A NUL ends a value for libmicrohttpd and hides what follows it: each of these reads as something else than was sent.
        ("a Content-Length cut short by a NUL", "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 13\0 99\r\n\r\n1234567890123"),
        ("an allowed origin followed by a NUL and another host", "GET /a HTTP/1.1\r\nHost: t\r\nOrigin: https://shop.example.com\0.evil.example\r\n\r\n"),
        ("a NUL hiding a header on the same line", "POST /a HTTP/1.1\r\nHost: t\r\nX-Padding: a\0Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("a NUL before a value", "GET /a HTTP/1.1\r\nHost: t\r\nX-Forwarded-For:\0 10.0.0.1\r\n\r\n"),
        ("a NUL in the last header", "GET /a HTTP/1.1\r\nHost: t\0.evil.example\r\n\r\n"),
        ("a NUL in the last header, lines ending in LF", "GET /a HTTP/1.1\nHost: t\0x\n\n"),
        ("NULs and CR LF after a value", "GET /a HTTP/1.1\r\nHost: t\0\0\r\n\r\n"),
        ("a NUL in the target", "GET /a\0/../admin HTTP/1.1\r\nHost: t\r\n\r\n"),
        ("a NUL and a second version in the target", "GET /a\0HTTP/1.1 HTTP/1.1\r\nHost: t\r\n\r\n"),
    ]

    @Test("Ambiguous framing gets a 400 and a closed connection before any body is read; the smuggled request is never answered",
          arguments: ambiguousFraming)
    func ambiguousFramingIsRefused(name: String, head: String) throws {
        // Given a server that notes every request its handler sees
        let handled = HandledPaths()
        let server = try startServer { handled.note($0) }
        defer { server.shutdown() }

        // When the request and a smuggled one follow each other on one connection
        let connection = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 3)
        connection.send(head + "GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n")

        // Then one answer, a 400 that says why, and the connection is closed; the handler saw neither
        let reply = try connection.readReply()
        #expect(reply.status == 400, "\(name): \(reply.status) \(reply.text)")
        #expect(reply.headers["connection"] == "close", "\(name)")
        #expect(reply.text.contains("Send"), "\(name): \(reply.text)")
        expectSecurityHeaders(reply)
        #expect(connection.isClosedByServer(), "\(name): a second answer or an open connection")
        #expect(handled.paths == [], "\(name)")
    }

    @Test("A Content-Length that is not plain digits is refused by libmicrohttpd itself; nothing is smuggled",
          arguments: ["+5", "5, 5", "0x5", "5 ", "-1", "18446744073709551616"])
    func malformedContentLength(value: String) throws {
        let handled = HandledPaths()
        let server = try startServer { handled.note($0) }
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 3)
        connection.send("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: \(value)\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n")
        // MHD answers before our handler is asked (its answer repeats its status line and headers: a bug
        // of 0.9.75), then closes; nothing after it is a second answer.
        let answer = String(decoding: try connection.readToEnd(), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 400 ") || answer.hasPrefix("HTTP/1.1 413 "), "\(value): \(answer)")
        #expect(!answer.contains("handled"), "\(value): \(answer)")
        #expect(handled.paths == [])
    }

    @Test("Plain framings still work: one Content-Length, chunked on HTTP/1.1, no body, a header with a tab in its value")
    func soundFramingIsServed() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
        #expect(try connection.readReply().text == "POST /a  5")
        connection.send("POST /b HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(try connection.readReply().text == "POST /b  5")
        connection.send("GET /c HTTP/1.1\r\nHost: t\r\nX-Tabbed: a\tb\r\n\r\n")
        #expect(try connection.readReply().text == "GET /c  0")
        connection.send("GET /d HTTP/1.0\r\nHost: t\r\n\r\n")
        #expect(try connection.readReply().text == "GET /d  0")
        // Lines ending in LF alone, an empty value, blanks around a value, no header at all.
        let more = try RawHTTPConnection(port: server.port)
        more.send("POST /e HTTP/1.1\nHost: t\nX-Empty:\nX-Blank:   \t\nContent-Length: 2\n\nhi")
        #expect(try more.readReply().text == "POST /e  2")
        more.send("GET /f HTTP/1.1\r\nHost:t\r\nX-Empty:\r\nX-Spaced: \t a b \r\n\r\n")
        #expect(try more.readReply().text == "GET /f  0")
        more.send("GET /g HTTP/1.1\r\n\r\n")
        #expect(try more.readReply().text == "GET /g  0")
    }

    /// The resident memory of this process, in bytes.
    fileprivate static func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// How far a streamed body's producer ran ahead of its reader, and how much memory it cost.
    private final class StreamMeter: Sendable {
        let produced = Atomic<Int>(0)
        let received = Atomic<Int>(0)
        let largestLead = Atomic<Int>(0)
        let largestGrowth = Atomic<Int>(0)
        let baseline = AdapterTests.residentBytes()

        func producing(_ bytes: Int, sample: Bool) {
            let lead = produced.add(bytes, ordering: .relaxed).newValue - received.load(ordering: .relaxed)
            largestLead.max(lead, ordering: .relaxed)
            if sample { largestGrowth.max(AdapterTests.residentBytes() - baseline, ordering: .relaxed) }
        }
    }

    @Test("A 50 MB streamed body arrives intact while the server holds little of it; the connection goes on")
    func largeStreamedBody() throws {
        // Given a body of 800 pieces of 64 KiB, each filled with its number, made only when asked for
        let pieceSize = 64 * 1024, pieces = 800
        let meter = StreamMeter()
        let server = try startServer { request in
            guard request.path == "/export" else { return .text("next") }
            var index = 0
            return Response(headers: HTTPHeaders([("Content-Type", "application/octet-stream")]), stream: StreamedBody {
                guard index < pieces else { return nil }
                defer { index += 1 }
                meter.producing(pieceSize, sample: index % 50 == 0)
                return [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: pieceSize)
            })
        }
        defer { server.shutdown() }

        // When a client reads it, checking every byte as it comes
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("GET /export HTTP/1.1\r\nHost: t\r\n\r\n")
        var wrong = 0
        var piece: [UInt8] = []
        let (head, complete) = try connection.readChunkedReply { bytes in
            meter.received.add(bytes.count, ordering: .relaxed)
            piece += bytes
            while piece.count >= pieceSize {
                let expected = [UInt8](repeating: UInt8(truncatingIfNeeded: (meter.received.load(ordering: .relaxed) - piece.count) / pieceSize), count: pieceSize)
                if memcmp(piece, expected, pieceSize) != 0 { wrong += 1 }
                piece.removeFirst(pieceSize)
            }
        }

        // Then it is whole and right, at most a few socket buffers ran ahead of the reader, and the
        // connection serves the next request
        #expect(head.status == 200 && head.headers["transfer-encoding"] == "chunked")
        #expect(complete)
        let total = meter.received.load(ordering: .relaxed)
        #expect(total == pieceSize * pieces)
        #expect(wrong == 0 && piece.isEmpty)
        let lead = meter.largestLead.load(ordering: .relaxed), growth = meter.largestGrowth.load(ordering: .relaxed)
        #expect(lead < 16 * 1024 * 1024, "made \(lead) bytes ahead of the reader")
        #expect(growth < 24 * 1024 * 1024, "resident memory grew by \(growth) bytes")
        print("50 MB stream: made at most \(lead / 1024) KiB ahead of the reader; resident memory grew by at most \(growth / 1024) KiB")
        connection.send("GET /next HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readReply().text == "next")
    }

    /// Set when the state a producer captured goes away.
    private final class ReleaseFlag: Sendable {
        let released = Atomic<Bool>(false)
    }

    private final class ProducerState: Sendable {
        let flag: ReleaseFlag
        init(_ flag: ReleaseFlag) { self.flag = flag }
        deinit { flag.released.store(true, ordering: .relaxed) }
    }

    @Test("A producer that throws cuts the body off: no last chunk, the connection closed, the producer released")
    func throwingProducerTruncates() throws {
        // Given a producer that makes three pieces, then fails
        struct ExportFailed: Error {}
        let flag = ReleaseFlag()
        let server = try startServer { _ in
            let state = ProducerState(flag)
            var count = 0
            return Response(stream: StreamedBody {
                withExtendedLifetime(state) {}
                count += 1
                if count > 3 { throw ExportFailed() }
                return [UInt8](repeating: 65, count: 1000)
            })
        }
        defer { server.shutdown() }

        // When a client reads the answer
        let connection = try RawHTTPConnection(port: server.port, readTimeoutSeconds: 3)
        connection.send("GET /export HTTP/1.1\r\nHost: t\r\n\r\n")
        var bytes = 0
        let (head, complete) = try connection.readChunkedReply { bytes += $0.count }

        // Then it ends without the last chunk, the connection closes, and the producer is let go
        #expect(head.status == 200)
        #expect(!complete, "the body must not look whole")
        #expect(bytes <= 3000)
        #expect(connection.isClosedByServer())
        let deadline = ContinuousClock.now + .seconds(2)
        while !flag.released.load(ordering: .relaxed) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let released = flag.released.load(ordering: .relaxed)
        #expect(released)
    }

    @Test("Concurrent requests are all answered")
    func concurrentRequests() async throws {
        let server = try startServer { request in
            Thread.sleep(forTimeInterval: 0.01)
            return .text(request.path ?? "")
        }
        defer { server.shutdown() }
        let port = server.port
        let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let connection = try RawHTTPConnection(port: port)
                    connection.send("GET /r/\(index) HTTP/1.1\r\nHost: t\r\n\r\n")
                    let reply = try connection.readReply()
                    return reply.status == 200 && reply.text == "/r/\(index)"
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers.count == 64)
        #expect(answers.allSatisfy { $0 })
    }

    @Test("Shutdown stops accepting but finishes the request in flight")
    func gracefulShutdown() async throws {
        let started = Atomic<Bool>(false)
        let server = try startServer { _ in
            started.store(true, ordering: .relaxed)
            Thread.sleep(forTimeInterval: 0.5)
            return .text("finished")
        }
        let port = server.port
        let connection = try RawHTTPConnection(port: port)
        connection.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        while !started.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        let stopper = Task.detached { server.shutdown(gracePeriod: .seconds(5)) }
        let reply = try connection.readReply()
        #expect(reply.status == 200)
        #expect(reply.text == "finished")
        await stopper.value
        #expect(throws: TestFailure.self) { try RawHTTPConnection(port: port) }
    }
}
