import Foundation

/// A push setting an operator gave that cannot work, with what is wrong and what to do.
public struct PushConfigurationError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The setting at fault, so a form can show the message next to it.
    public enum Field: String, Sendable {
        case apnsKey, apnsKeyID, apnsTeamID, apnsTopic, apnsURL
        case fcmServiceAccount, fcmURL
        case trustRoots
    }

    public var field: Field
    /// One or two sentences: what is wrong, then what to do.
    public var message: String
    /// For a key of the wrong kind, what it is instead (`secp256k1 (1.3.132.0.10)`, `RSA (…)`), so a form
    /// can say so in the reader's language.
    public var keyKind: String?

    public init(_ field: Field, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { message }
    public var errorDescription: String? { message }
}

/// Every setting of one provider that cannot work, found at once: a form shows each at its field.
public struct PushConfigurationProblems: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// At least one, in the order of the settings.
    public var problems: [PushConfigurationError]

    public init(_ problems: [PushConfigurationError]) {
        self.problems = problems
    }

    public var description: String { problems.map(\.message).joined(separator: " ") }
    public var errorDescription: String? { description }
}

/// The checks both providers' settings share.
enum PushSettingCheck {
    /// Base URLs and the token endpoint: https, or http to this machine only (the test mocks), with no
    /// credentials, query or fragment that would be sent somewhere by mistake.
    static func providerURL(_ url: URL, field: PushConfigurationError.Field, name: String) throws -> URL {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else {
            throw PushConfigurationError(field, "The \(name) “\(url.absoluteString)” is not an absolute URL: give one like https://host.")
        }
        guard components.user == nil, components.password == nil, components.query == nil, components.fragment == nil else {
            throw PushConfigurationError(field, "The \(name) “\(url.absoluteString)” has a user, query or fragment: give only scheme, host, port and path.")
        }
        switch scheme {
        case "https":
            return url
        case "http" where isLoopback(host):
            return url
        case "http":
            throw PushConfigurationError(field, "The \(name) “\(url.absoluteString)” is plain http: use https (http is accepted only for a server on this machine, such as a test mock).")
        default:
            throw PushConfigurationError(field, "The \(name) “\(url.absoluteString)” is not an https URL: give one like https://host.")
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// The label of the first PEM block (`PRIVATE KEY`, `EC PRIVATE KEY`, `CERTIFICATE`), or nil when
    /// the text has none.
    static func pemLabel(_ text: String) -> String? {
        guard let begin = text.range(of: "-----BEGIN "),
              let end = text.range(of: "-----", range: begin.upperBound..<text.endIndex)
        else { return nil }
        return String(text[begin.upperBound..<end.lowerBound])
    }

    /// The URL joined with a path (the base URL's own path kept, one slash between).
    static func url(_ base: URL, appending path: String) -> String {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text + path
    }
}
