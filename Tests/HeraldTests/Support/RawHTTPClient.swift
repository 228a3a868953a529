import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 client over a plain socket, so adapter tests control every byte and the connection.
final class RawHTTPConnection {
    struct Reply {
        let status: Int
        /// By lower-cased name; the last of a repeated header.
        let headers: [String: String]
        /// Every `Set-Cookie` value, in order.
        let setCookies: [String]
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    let descriptor: Int32
    private var buffer: [UInt8] = []

    /// Connects from `source`, any address of 127/8 (all loopback on Linux), so a test can be several clients.
    init(port: UInt16, readTimeoutSeconds: Int = 10, from source: String = "127.0.0.1") throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestFailure("cannot bind to \(source)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestFailure("cannot connect to port \(port)") }
        var timeout = timeval(tv_sec: readTimeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
    }

    /// Sends bytes; returns false once the server has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    func send(_ text: String) {
        send(Array(text.utf8))
    }

    /// Reads one response; `expectBody: false` for HEAD, whose Content-Length describes no body.
    func readReply(expectBody: Bool = true) throws -> Reply {
        let head = try readHead()
        let length = expectBody ? Int(head.headers["content-length"] ?? "0") ?? 0 : 0
        guard try fill(toAtLeast: length) else { throw TestFailure("connection closed inside a body") }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return Reply(status: head.status, headers: head.headers, setCookies: head.setCookies, body: body)
    }

    /// Reads a response with a chunked body, handing the body to `receive` piece by piece as it arrives,
    /// so a large one is never held whole; `complete` is false when the connection closed before the
    /// last chunk.
    func readChunkedReply(_ receive: ([UInt8]) -> Void) throws -> (head: Reply, complete: Bool) {
        let head = try readHead()
        let lineEnd: [UInt8] = Array("\r\n".utf8)
        while true {
            while buffer.firstRange(of: lineEnd) == nil {
                guard try fill() else { return (head, false) }
            }
            let sizeEnd = buffer.firstRange(of: lineEnd)!.lowerBound
            guard let size = Int(String(decoding: buffer[..<sizeEnd], as: UTF8.self), radix: 16) else {
                throw TestFailure("a chunk size that is not hexadecimal")
            }
            buffer.removeFirst(sizeEnd + 2)
            var remaining = size
            while remaining > 0 {
                if buffer.isEmpty, try !fill() { return (head, false) }
                let count = min(remaining, buffer.count)
                receive(Array(buffer[..<count]))
                buffer.removeFirst(count)
                remaining -= count
            }
            guard try fill(toAtLeast: 2) else { return (head, false) }
            buffer.removeFirst(2)  // the CRLF after the chunk, or the end of an empty trailer
            if size == 0 { return (head, true) }
        }
    }

    private func readHead() throws -> Reply {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while buffer.firstRange(of: separator) == nil {
            guard try fill() else { throw TestFailure("connection closed before a response") }
        }
        let headerEnd = buffer.firstRange(of: separator)!.lowerBound
        let lines = String(decoding: buffer[..<headerEnd], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(headerEnd + 4)
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        var setCookies: [String] = []
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].lowercased(), value = parts[1].trimmingCharacters(in: .whitespaces)
            headers[name] = value
            if name == "set-cookie" { setCookies.append(value) }
        }
        return Reply(status: status, headers: headers, setCookies: setCookies, body: [])
    }

    /// Whether the server closed the connection (a read returns end of file, or a reset when it closed
    /// with bytes of ours unread) within the read timeout, with nothing more sent.
    func isClosedByServer() -> Bool {
        guard buffer.isEmpty else { return false }
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, 0)
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    /// Every byte left until the server closes the connection (throws if it stays open past the read timeout).
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Reads until `count` bytes are buffered; false when the connection closes first.
    private func fill(toAtLeast count: Int) throws -> Bool {
        while buffer.count < count {
            guard try fill() else { return false }
        }
        return true
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        if count < 0 && errno == ECONNRESET { return false }
        if count < 0 { throw TestFailure("read timed out") }
        if count == 0 { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }
}
