import CryptoExtras
import Foundation

/// A Google service account, read from the JSON file the Firebase console downloads
/// (Project settings → Service accounts → Generate new private key).
public struct FCMServiceAccount: Sendable {
    public let projectID: String
    public let clientEmail: String
    /// The RSA private key, PEM, as in the file's `private_key`.
    public let privateKeyPEM: String
    /// The OAuth 2.0 token endpoint, the file's `token_uri`: the JWT's audience and where it is exchanged.
    public let tokenURI: URL
    /// The key read from `privateKeyPEM`, so a token request never parses it again.
    let signingKey: _RSA.Signing.PrivateKey

    /// Reads Google's service-account JSON.
    public init(json: Data) throws {
        let remedy = "give the JSON file from the Firebase console (Project settings → Service accounts → Generate new private key)"
        guard json.count <= 65_536 else {
            throw PushConfigurationError(.fcmServiceAccount, "The service-account file is \(json.count) bytes, far more than Google's: \(remedy).")
        }
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw PushConfigurationError(.fcmServiceAccount, "The service-account file is not a JSON object: \(remedy).")
        }
        if let type = object["type"] as? String, type != "service_account" {
            throw PushConfigurationError(.fcmServiceAccount, "The file is a “\(type.prefix(40))” credential, not a service account: \(remedy).")
        }
        func field(_ name: String) throws -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw PushConfigurationError(.fcmServiceAccount, "The service-account file has no “\(name)”: \(remedy).")
            }
            return value
        }
        let tokenURIText = try field("token_uri")
        guard let tokenURI = URL(string: tokenURIText) else {
            throw PushConfigurationError(.fcmServiceAccount, "The service-account file's token_uri “\(tokenURIText.prefix(80))” is not a URL: \(remedy).")
        }
        try self.init(projectID: try field("project_id"), clientEmail: try field("client_email"),
                      privateKeyPEM: try field("private_key"), tokenURI: tokenURI)
    }

    /// A service account from its parts, checked as the JSON file's are.
    public init(projectID: String, clientEmail: String, privateKeyPEM: String, tokenURI: URL) throws {
        // The project id goes into the send URL's path: Google's are lowercase letters, digits and
        // hyphens, older ones with a `domain:` prefix.
        guard (1...100).contains(projectID.utf8.count),
              projectID.utf8.allSatisfy({ byte in
                  (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || "-.:".utf8.contains(byte)
              })
        else {
            throw PushConfigurationError(.fcmServiceAccount, "The service account's project_id “\(projectID.prefix(40))” is not a Firebase project id: give the file downloaded for your Firebase project.")
        }
        guard (3...320).contains(clientEmail.utf8.count), clientEmail.contains("@"),
              clientEmail.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else {
            throw PushConfigurationError(.fcmServiceAccount, "The service account's client_email “\(clientEmail.prefix(80))” is not an email address: give the file downloaded for your Firebase project.")
        }
        do {
            signingKey = try _RSA.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw PushConfigurationError(.fcmServiceAccount, "The service account's private_key is not an RSA private key of 2048 bits or more in PEM: download a new key for the service account, the file holds it as Google wrote it.")
        }
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyPEM = privateKeyPEM
        self.tokenURI = try PushSettingCheck.providerURL(tokenURI, field: .fcmServiceAccount, name: "service account's token_uri")
    }
}

/// An app's FCM HTTP v1 connection: the service account and where messages go.
public struct FCMConfiguration: Sendable {
    /// Google's endpoint.
    public static let productionURL = URL(string: "https://fcm.googleapis.com")!

    public let serviceAccount: FCMServiceAccount
    /// Where messages go: Google's endpoint, or a test mock.
    public let baseURL: URL

    public init(serviceAccount: FCMServiceAccount, baseURL: URL = productionURL) throws {
        self.serviceAccount = serviceAccount
        self.baseURL = try PushSettingCheck.providerURL(baseURL, field: .fcmURL, name: "FCM URL")
    }
}
