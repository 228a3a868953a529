import Foundation
import NIOConcurrencyHelpers

/// How the mock answers, as APNs and FCM do: tokens checked, limits enforced, and scripted answers by
/// device token so a test can provoke each path:
/// `gone…` a dead token, `busy…` 429 with `Retry-After: 1` on its first request, `flaky…` 503 on its
/// first request, `bad…` a malformed token; any other token is delivered.
final class ProviderBehaviour: Sendable {
    /// Seconds an OAuth access token lasts, as Google's do.
    let accessTokenLifetime: Int
    private let credentialsBox = NIOLockedValueBox<MockCredentials?>(nil)
    private let memory = NIOLockedValueBox(Memory())

    /// What the mock remembers between requests, each part bounded.
    struct Memory {
        static let scriptedTokenLimit = 1_000_000
        static let verifiedTokenLimit = 1024
        static let accessTokenLimit = 10_000

        /// `busy` and `flaky` tokens that had their first request (with the provider's name).
        var scriptedTokensSeen = Set<String>()
        /// APNs provider tokens whose signature checked, with their `iat`: a signature is checked once.
        var verifiedProviderTokens: [String: Int64] = [:]
        /// Access tokens issued, with when they expire.
        var accessTokens: [String: Date] = [:]
        var messageCount = 0
    }

    init(accessTokenLifetime: Int) {
        self.accessTokenLifetime = accessTokenLifetime
    }

    var credentials: MockCredentials? {
        get { credentialsBox.withLockedValue { $0 } }
        set { credentialsBox.withLockedValue { $0 = newValue } }
    }

    func answer(_ request: MockRequest) -> MockResponse {
        guard let credentials else { return .json(503, ["reason": "ServiceUnavailable"]) }
        switch request.provider {
        case "apns": return apns(request, credentials)
        case "oauth": return oauth(request, credentials)
        case "fcm": return fcm(request, credentials)
        default: return .json(404, ["reason": "BadPath"])
        }
    }

    /// Forgets which scripted tokens were seen, so `busy` and `flaky` fail once more.
    func reset() {
        memory.withLockedValue { $0.scriptedTokensSeen = [] }
    }

    /// Makes every access token issued so far invalid, as Google does when it revokes them.
    func revokeAccessTokens() {
        memory.withLockedValue { $0.accessTokens = [:] }
    }

    /// True the first time a scripted token is seen (after start or reset).
    func isFirstRequest(_ provider: String, _ token: String) -> Bool {
        memory.withLockedValue { memory in
            guard memory.scriptedTokensSeen.count < Memory.scriptedTokenLimit else { return false }
            return memory.scriptedTokensSeen.insert(provider + " " + token).inserted
        }
    }

    func withMemory<Result>(_ body: (inout Memory) -> Result) -> Result {
        memory.withLockedValue(body)
    }
}

/// The scripted behaviour a device token asks for, by its prefix.
enum TokenScript {
    case gone, busy, flaky, bad, deliver

    init(_ token: String) {
        self = if token.hasPrefix("gone") { .gone }
            else if token.hasPrefix("busy") { .busy }
            else if token.hasPrefix("flaky") { .flaky }
            else if token.hasPrefix("bad") { .bad }
            else { .deliver }
    }
}
