import HeraldHTTP

/// The host names the console answers at. A page on any site can make its visitors' browsers reach
/// Herald under the site's own name once that name's DNS answer changes to Herald's address (DNS
/// rebinding): the browser then treats Herald's pages as that site's, so a fresh install's `/setup`
/// could be taken, and the login page guessed at, from anyone's browser on the operator's network.
/// Such a request names the site in `Host`, so the console (setup, login and every signed-in page)
/// answers only hosts that cannot be rebound: `localhost`, IP literals (a page can make a browser send
/// one only from that very address, which is Herald's own), and the names the operator configured
/// (`--console-host`, `HERALD_CONSOLE_HOSTS`). The API, the feed, health probes, static files and the web
/// client answer any host: delivery clients reach Herald under whatever name they were given, and a key,
/// not a cookie, is what they spend.
public struct ConsoleHosts: Sendable {
    /// Lower case, without port.
    private let names: Set<String>
    private let trustedProxies: [AddressRange]

    init(names: [String], trustedProxies: [AddressRange]) {
        self.names = Set(names.map { $0.lowercased() })
        self.trustedProxies = trustedProxies
    }

    /// Whether the console answers `request`: its host (a trusted proxy's `X-Forwarded-Host`, else `Host`)
    /// is allowed, or it names none (no browser sends a request without `Host`).
    func admit(_ request: Request) -> Bool {
        guard let host = request.reachedHost(trustedProxies: trustedProxies) else { return true }
        return Self.cannotBeRebound(host) || names.contains(host)
    }

    /// The host of `authority` (`host`, `host:port`, `[v6]:port`), in lower case; nil when it is not one.
    static func host(ofAuthority authority: String) -> String? {
        let authority = authority.lowercased()
        if authority.hasPrefix("[") {
            guard let closing = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: closing)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return nil }
            return String(authority[authority.index(after: authority.startIndex)..<closing])
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty else { return nil }
        if parts.count == 2, !parts[1].allSatisfy(\.isASCIIDigit) { return nil }
        return String(parts[0])
    }

    /// `localhost` or an IP literal: no other site's page can make a browser send it.
    static func cannotBeRebound(_ host: String) -> Bool {
        host == "localhost" || IPAddress(host) != nil
    }

    /// Whether `text` is a host name an operator may configure: DNS labels of letters, digits and hyphens,
    /// dot-separated, at most 253 characters (no port, scheme, path or wildcard).
    public static func isHostName(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return (1...253).contains(text.utf8.count) && labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0 | 0x20) }
        }
    }
}

extension Request {
    /// The host the client reached, lower case and without port: `Host`, or on a connection from a
    /// trusted proxy the first `X-Forwarded-Host` entry; nil when there is none, or it is no authority.
    func reachedHost(trustedProxies: [AddressRange]) -> String? {
        guard let authority = reachedAuthority(trustedProxies: trustedProxies) else { return nil }
        return ConsoleHosts.host(ofAuthority: authority) ?? authority
    }
}
