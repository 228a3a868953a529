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

    init(port: UInt16, readTimeoutSeconds: Int = 10) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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
        let length = expectBody ? Int(headers["content-length"] ?? "0") ?? 0 : 0
        while buffer.count < length {
            guard try fill() else { throw TestFailure("connection closed inside a body") }
        }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return Reply(status: status, headers: headers, setCookies: setCookies, body: body)
    }

    /// Whether the server closed the connection (a read returns end of file) within the read timeout.
    func isClosedByServer() -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) == 0
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        if count < 0 { throw TestFailure("read timed out") }
        if count == 0 { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }
}
