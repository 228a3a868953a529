#if canImport(Glibc)
import Glibc
#endif
import HeraldHTTP

/// An IPv4 or IPv6 address read from text; an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is read as IPv4.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    let bytes: [UInt8]

    public init?(_ text: some StringProtocol) {
        let text = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let all = withUnsafeBytes(of: &v6) { Array($0) }
        bytes = all.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) ? Array(all.suffix(4)) : all
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What login throttling counts an address's failures under: an IPv4 address, or an IPv6 address's /64
    /// network, which one subscriber usually holds whole (counting single IPv6 addresses would let one
    /// client try from billions of them).
    var throttleSubject: String {
        guard bytes.count == 16 else { return description }
        return IPAddress(bytes: Array(bytes.prefix(8)) + Array(repeating: 0, count: 8)).description + "/64"
    }
}

/// An address or a CIDR range, as trusted proxies are named: `10.0.0.0/8`, `fd00::/8`, `192.0.2.7`.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    let network: IPAddress
    let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.trimmingSpaces.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let network = IPAddress(parts[0]) else { return nil }
        let bits = network.bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = bits
        }
        self.network = network
    }

    public var description: String { "\(network)/\(prefixLength)" }

    func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(network.bytes, address.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            if mine & mask != theirs & mask { return false }
            remaining -= 8
        }
        return true
    }
}

extension Request {
    /// Who sent the request: the socket's address, or, when the socket is a trusted proxy, the right-most
    /// address in `X-Forwarded-For` that is not a trusted proxy itself. That one was written by the nearest
    /// trusted proxy; everything to its left is whatever the client chose to send. Nil when unreadable.
    func clientAddress(trustedProxies: [AddressRange]) -> IPAddress? {
        guard let socket = IPAddress(remoteAddress) else { return nil }
        guard trustedProxies.contains(where: { $0.contains(socket) }) else { return socket }
        var nearest = socket
        let hops = headers.values("X-Forwarded-For").flatMap { $0.split(separator: ",") }
        for hop in hops.reversed() {
            // A hop that is no address: the proxy that passed it on is the last one known.
            guard let address = Self.forwardedAddress(hop) else { return nearest }
            if !trustedProxies.contains(where: { $0.contains(address) }) { return address }
            nearest = address
        }
        return nearest
    }

    /// One `X-Forwarded-For` entry, which some proxies write with a port: `192.0.2.1:4711`, `[2001:db8::1]:443`.
    private static func forwardedAddress(_ hop: Substring) -> IPAddress? {
        let text = hop.trimmingSpaces
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            return IPAddress(text[text.index(after: text.startIndex)..<close])
        }
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            return IPAddress(text[..<colon])
        }
        return IPAddress(text)
    }
}
