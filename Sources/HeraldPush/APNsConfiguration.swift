import Crypto
import Foundation

/// An app's APNs token-based connection: the `.p8` signing key from Apple, its key id, the team id and
/// the app's bundle id (the topic). Checked when made, so a setting that cannot work is refused at once.
public struct APNsConfiguration: Sendable {
    /// Apple's production endpoint.
    public static let productionURL = URL(string: "https://api.push.apple.com")!

    /// The `.p8` file's text: a P-256 private key in PKCS#8 PEM.
    public let keyPEM: String
    /// The key's 10-character id from Apple's developer site (the JWT's `kid`).
    public let keyID: String
    /// The 10-character team id (the JWT's `iss`).
    public let teamID: String
    /// The app's bundle id, sent as `apns-topic`.
    public let topic: String
    /// Where requests go: Apple's production or sandbox endpoint, or a test mock.
    public let baseURL: URL
    /// The key read from `keyPEM`, so a send never parses it again.
    let signingKey: P256.Signing.PrivateKey

    /// Checks every setting; a refusal lists each one that cannot work (`PushConfigurationProblems`), so
    /// a form can show them all at once.
    public init(keyPEM: String, keyID: String, teamID: String, topic: String, baseURL: URL = productionURL) throws {
        var problems: [PushConfigurationError] = []
        func check<Value>(_ read: () throws -> Value) -> Value? {
            do {
                return try read()
            } catch let problem as PushConfigurationError {
                problems.append(problem)
            } catch {
                problems.append(PushConfigurationError(.apnsKey, "\(error)"))
            }
            return nil
        }
        let signingKey = check { try Self.readKey(keyPEM) }
        if !Self.isAppleID(keyID) {
            problems.append(PushConfigurationError(.apnsKeyID, "The APNs key id “\(keyID.prefix(40))” is not 10 letters A–Z and digits: copy the Key ID shown beside the key on Apple's developer site (Keys)."))
        }
        if !Self.isAppleID(teamID) {
            problems.append(PushConfigurationError(.apnsTeamID, "The APNs team id “\(teamID.prefix(40))” is not 10 letters A–Z and digits: copy the Team ID from Membership details on Apple's developer site."))
        }
        let trimmedTopic = topic.trimmingCharacters(in: .whitespaces)
        if trimmedTopic.isEmpty {
            problems.append(PushConfigurationError(.apnsTopic, "The APNs topic is empty: give the app's bundle id, such as com.example.app."))
        } else if trimmedTopic.utf8.count > 255 || !trimmedTopic.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) {
            problems.append(PushConfigurationError(.apnsTopic, "The APNs topic “\(trimmedTopic.prefix(80))” is not a bundle id: give the app's bundle id, such as com.example.app (letters, digits, dots and hyphens)."))
        }
        let checkedURL = check { try PushSettingCheck.providerURL(baseURL, field: .apnsURL, name: "APNs URL") }
        guard let signingKey, let checkedURL, problems.isEmpty else { throw PushConfigurationProblems(problems) }
        self.signingKey = signingKey
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topic = trimmedTopic
        self.baseURL = checkedURL
    }

    /// Key and team ids as Apple issues them: exactly 10 of A–Z and 0–9.
    static func isAppleID(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }

    static func readKey(_ pem: String) throws -> P256.Signing.PrivateKey {
        let remedy = "give the .p8 file downloaded from Keys on Apple's developer site (it starts with -----BEGIN PRIVATE KEY-----)"
        guard pem.utf8.count <= 16_384 else {
            throw PushConfigurationError(.apnsKey, "The APNs key is \(pem.utf8.count) bytes, far more than a .p8 file: \(remedy).")
        }
        guard let label = PushSettingCheck.pemLabel(pem) else {
            throw PushConfigurationError(.apnsKey, "The APNs key is not a PEM file: \(remedy).")
        }
        guard label == "PRIVATE KEY" else {
            throw PushConfigurationError(.apnsKey, "The APNs key is a “\(label.prefix(40))”, not a PKCS#8 private key: \(remedy).")
        }
        let notP256 = "not a P-256 (ES256) private key: \(remedy); APNs token keys are always P-256."
        // swift-crypto reads the scalar of any curve's PKCS#8 key as a P-256 one: the curve is checked here.
        switch PrivateKeyInfo.read(pem: pem) {
        case .namedCurve(PrivateKeyInfo.ObjectIdentifier.p256):
            break
        case .namedCurve(let curve):
            var error = PushConfigurationError(.apnsKey, "The APNs key is on the \(curve.named) curve, \(notP256)")
            error.keyKind = curve.named
            throw error
        case .otherAlgorithm(let algorithm):
            var error = PushConfigurationError(.apnsKey, "The APNs key's algorithm is \(algorithm.named), so it is \(notP256)")
            error.keyKind = algorithm.named
            throw error
        case .explicitCurve:
            throw PushConfigurationError(.apnsKey, "The APNs key spells out its curve's parameters instead of naming P-256, so it is \(notP256)")
        case .conflictingCurves, nil:
            throw PushConfigurationError(.apnsKey, "The APNs key is \(notP256)")
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw PushConfigurationError(.apnsKey, "The APNs key is \(notP256)")
        }
    }
}
