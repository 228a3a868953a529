import Crypto
import CryptoExtras
import Foundation

/// Test credentials for both providers, made fresh: an APNs `.p8` key with its key and team ids, and a
/// Google service account whose `token_uri` is the mock's token endpoint.
public struct MockCredentials: Sendable {
    /// The ids `keys` writes and `serve` expects unless told others.
    public static let defaultAPNsKeyID = "MOCKKEY001"
    public static let defaultAPNsTeamID = "MOCKTEAM01"
    public static let defaultFCMProjectID = "herald-mock"
    public static let defaultFCMClientEmail = "herald-push@herald-mock.iam.gserviceaccount.com"

    /// The `.p8` file's text: a P-256 key in PKCS#8 PEM, as Apple issues.
    public let apnsKeyPEM: String
    public let apnsKeyID: String
    public let apnsTeamID: String
    /// The service-account file in Google's format.
    public let fcmServiceAccountJSON: Data

    public let fcmProjectID: String
    public let fcmClientEmail: String
    public let fcmTokenURI: String
    public let apnsPublicKey: P256.Signing.PublicKey
    public let fcmPublicKey: _RSA.Signing.PublicKey

    /// Fresh keys: P-256 for APNs, RSA-2048 for the service account.
    public static func generate(tokenURI: String, apnsKeyID: String = defaultAPNsKeyID, apnsTeamID: String = defaultAPNsTeamID) throws -> MockCredentials {
        let apnsKey = P256.Signing.PrivateKey()
        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let account: [String: String] = [
            "type": "service_account",
            "project_id": defaultFCMProjectID,
            "private_key_id": UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
            "private_key": rsaKey.pkcs8PEMRepresentation + "\n",
            "client_email": defaultFCMClientEmail,
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
            "universe_domain": "googleapis.com",
        ]
        let json = try JSONSerialization.data(withJSONObject: account, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return try MockCredentials(apnsKeyPEM: apnsKey.pemRepresentation, apnsKeyID: apnsKeyID, apnsTeamID: apnsTeamID,
                                   fcmServiceAccountJSON: json)
    }

    /// Credentials read back from a `.p8` key and a service-account file: the mock needs only their
    /// public keys, ids and token endpoint.
    public init(apnsKeyPEM: String, apnsKeyID: String, apnsTeamID: String, fcmServiceAccountJSON: Data) throws {
        guard let account = try JSONSerialization.jsonObject(with: fcmServiceAccountJSON) as? [String: Any],
              let projectID = account["project_id"] as? String, let clientEmail = account["client_email"] as? String,
              let privateKey = account["private_key"] as? String, let tokenURI = account["token_uri"] as? String
        else { throw MockError("the service-account file lacks project_id, client_email, private_key or token_uri") }
        self.apnsKeyPEM = apnsKeyPEM
        self.apnsKeyID = apnsKeyID
        self.apnsTeamID = apnsTeamID
        self.fcmServiceAccountJSON = fcmServiceAccountJSON
        fcmProjectID = projectID
        fcmClientEmail = clientEmail
        fcmTokenURI = tokenURI
        apnsPublicKey = try P256.Signing.PrivateKey(pemRepresentation: apnsKeyPEM).publicKey
        fcmPublicKey = try _RSA.Signing.PrivateKey(pemRepresentation: privateKey).publicKey
    }

    /// Writes `apns.p8` and `fcm-service-account.json` into `directory`, which is made if missing.
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(apnsKeyPEM.utf8).write(to: directory.appendingPathComponent("apns.p8"))
        try fcmServiceAccountJSON.write(to: directory.appendingPathComponent("fcm-service-account.json"))
    }

    /// What a client needs besides the files, as one JSON object.
    public var summary: [String: String] {
        ["apnsKeyID": apnsKeyID, "apnsTeamID": apnsTeamID, "fcmProjectID": fcmProjectID, "fcmClientEmail": fcmClientEmail,
         "tokenURI": fcmTokenURI]
    }
}

/// A mock that cannot start or read its inputs, with what is wrong.
public struct MockError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
