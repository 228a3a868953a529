import Foundation
import HeraldHTTP
import HeraldStorage

/// Browsers where an account signed in before. A sign-in leaves the `herald_browser` cookie: the user's id,
/// the time, and a random id, signed with the server's key. Sign-ins from that browser to that account are
/// throttled on their own, so an attacker failing against the account, or an office sharing the attacker's
/// address, never keeps its user out of it (OWASP's "device cookies").
struct KnownBrowsers: Sendable {
    static let cookie = "herald_browser"
    /// How long a browser stays known after its last sign-in there.
    static let lifetime: TimeInterval = 180 * 24 * 3600

    /// One known browser, as its cookie names it.
    struct Browser {
        let userID: Int64
        let id: String
    }

    let signingKey: [UInt8]

    /// The browser the cookie names, if its signature holds and it is not too old.
    func browser(fromCookie value: String?, now: Date) -> Browser? {
        let parts = value?.split(separator: ".", omittingEmptySubsequences: false) ?? []
        guard parts.count == 4, let userID = Int64(parts[0]), let seconds = Int64(parts[1]), Secret.isToken(String(parts[2])),
              Secret.constantTimeEquals(String(parts[3]), signature(userID: userID, seconds: seconds, id: String(parts[2])))
        else { return nil }
        let age = now.timeIntervalSince1970 - Double(seconds)
        guard age >= 0, age < Self.lifetime else { return nil }
        return Browser(userID: userID, id: String(parts[2]))
    }

    /// A fresh cookie for a browser where `userID` just signed in.
    func cookie(for userID: Int64, now: Date, secure: Bool) -> SetCookie {
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let id = Secret.random()
        let value = "\(userID).\(seconds).\(id).\(signature(userID: userID, seconds: seconds, id: id))"
        return SetCookie(name: Self.cookie, value: value, maxAge: Int(Self.lifetime), secure: secure)
    }

    private func signature(userID: Int64, seconds: Int64, id: String) -> String {
        Secret.hmac("known-browser:\(userID).\(seconds).\(id)", key: signingKey)
    }
}
