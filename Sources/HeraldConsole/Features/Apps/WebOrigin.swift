#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HeraldDomain

/// A web origin as browsers send it in `Origin`: `scheme://host[:port]`, lower case, without the scheme's
/// default port. Read from what an admin types (`HTTPS://Shop.Example.com:443/` is
/// `https://shop.example.com`), so that the stored text equals the header byte for byte and the check on
/// every request is one lookup.
public struct WebOrigin: Sendable, Equatable, CustomStringConvertible {
    /// The normalized origin.
    public let text: String

    public var description: String { text }

    /// The longest origin accepted, as typed (before normalizing).
    public static let maxLength = 200
    /// Hosts a page may be served from over plain http: a developer's own machine.
    static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    /// What is wrong with a typed origin.
    public enum Problem: Error, Sendable, Equatable {
        case empty, tooLong, wildcard, scheme, insecureHTTP, path, userInfo, notASCII, host, port

        public var phrase: Phrase {
            switch self {
            case .empty:
                Phrase("apps.errors.origin_required")
            case .tooLong:
                Phrase("apps.errors.origin_too_long", ["limit": .number(WebOrigin.maxLength)])
            case .wildcard:
                Phrase("apps.errors.origin_wildcard")
            case .scheme:
                Phrase("apps.errors.origin_scheme")
            case .insecureHTTP:
                Phrase("apps.errors.origin_insecure")
            case .path:
                Phrase("apps.errors.origin_path")
            case .userInfo:
                Phrase("apps.errors.origin_user_info")
            case .notASCII:
                Phrase("apps.errors.origin_not_ascii")
            case .host:
                Phrase("apps.errors.origin_host")
            case .port:
                Phrase("apps.errors.origin_port")
            }
        }
    }

    /// Reads a typed origin; surrounding spaces and a single trailing `/` are forgiven.
    public static func parse(_ typed: String) -> Result<WebOrigin, Problem> {
        let trimmed = typed.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return .failure(.empty) }
        if trimmed.scalarCount > maxLength { return .failure(.tooLong) }
        if trimmed.contains("*") { return .failure(.wildcard) }
        guard let separator = trimmed.range(of: "://") else { return .failure(.scheme) }
        let scheme = trimmed[..<separator.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { return .failure(.scheme) }
        let rest = trimmed[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" || $0 == "\\" } ?? rest.endIndex
        let after = rest[authorityEnd...]
        if !after.isEmpty && after != "/" { return .failure(.path) }
        let authority = rest[..<authorityEnd]
        if authority.contains("@") { return .failure(.userInfo) }
        guard authority.unicodeScalars.allSatisfy(\.isASCII) else { return .failure(.notASCII) }

        let hostText: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return .failure(.host) }
            hostText = authority[...close]
            let tail = authority[authority.index(after: close)...]
            if !tail.isEmpty {
                guard tail.hasPrefix(":") else { return .failure(.host) }
                portText = tail.dropFirst()
            }
        } else {
            let pieces = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard pieces.count <= 2 else { return .failure(.host) }
            hostText = pieces[0]
            portText = pieces.count == 2 ? pieces[1] : nil
        }
        guard let host = normalizedHost(hostText) else { return .failure(.host) }
        var port: Int?
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy(\.isASCIIDigit),
                  let number = Int(portText), (1...65_535).contains(number) else { return .failure(.port) }
            port = number
        }
        if scheme == "http" && !loopbackHosts.contains(host) { return .failure(.insecureHTTP) }
        if port == (scheme == "https" ? 443 : 80) { port = nil }
        return .success(WebOrigin(text: scheme + "://" + host + (port.map { ":\($0)" } ?? "")))
    }

    private init(text: String) {
        self.text = text
    }

    /// A host as the URL standard serializes it: a DNS name in lower case, an IPv4 address in dotted
    /// decimal, an IPv6 address compressed in brackets; nil for anything else. A host whose last label is
    /// a number is an IPv4 address to browsers (`127.1`, `0x7f.0.0.1`), so only the dotted form they would
    /// send back is accepted.
    static func normalizedHost(_ text: Substring) -> String? {
        if text.hasPrefix("[") {
            guard text.hasSuffix("]") else { return nil }
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(text.dropFirst().dropLast()), &address) == 1 else { return nil }
            return "[" + ipv6Text(withUnsafeBytes(of: &address) { Array($0) }) + "]"
        }
        let host = text.lowercased()
        guard !host.isEmpty, host.utf8.count <= 253 else { return nil }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if let last = labels.last, last.first?.isASCIIDigit == true {
            guard labels.count == 4, labels.allSatisfy(isIPv4Part) else { return nil }
            return host
        }
        return labels.allSatisfy(isDNSLabel) ? host : nil
    }

    private static func isIPv4Part(_ part: Substring) -> Bool {
        guard (1...3).contains(part.count), part.allSatisfy(\.isASCIIDigit), let value = Int(part), value <= 255 else { return false }
        return part == "0" || !part.hasPrefix("0")
    }

    private static func isDNSLabel(_ label: Substring) -> Bool {
        (1...63).contains(label.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
            && label.allSatisfy { $0.isASCIIDigit || ("a"..."z").contains($0) || $0 == "-" }
    }

    /// The URL standard's IPv6 serialization: pieces in lower-case hex without leading zeros, the first
    /// longest run of two or more zero pieces written `::`.
    static func ipv6Text(_ bytes: [UInt8]) -> String {
        let pieces = stride(from: 0, to: 16, by: 2).map { Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]) }
        var best: (start: Int, length: Int)?
        var index = 0
        while index < pieces.count {
            guard pieces[index] == 0 else { index += 1; continue }
            let start = index
            while index < pieces.count && pieces[index] == 0 { index += 1 }
            if index - start >= 2 && index - start > (best?.length ?? 0) { best = (start, index - start) }
        }
        let hex = pieces.map { String($0, radix: 16) }
        guard let best else { return hex.joined(separator: ":") }
        return hex[..<best.start].joined(separator: ":") + "::" + hex[(best.start + best.length)...].joined(separator: ":")
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
