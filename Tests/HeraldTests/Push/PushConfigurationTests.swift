import Crypto
import Foundation
import HeraldPush
import PushMock
import Testing

/// What an operator gives for APNs and FCM is checked when the configuration is made, and a refusal
/// names the setting, what is wrong, and what to give instead.
@Suite("Push configuration checks")
struct PushConfigurationTests {
    static let credentials = try! MockCredentials.generate(tokenURI: "https://oauth2.googleapis.com/token")

    /// The first (with one mistake, the only) problem of an APNs configuration.
    func apnsError(keyPEM: String = credentials.apnsKeyPEM, keyID: String = "ABCDE12345", teamID: String = "TEAM123456",
                   topic: String = "com.example.app", baseURL: URL = APNsConfiguration.productionURL) -> PushConfigurationError? {
        apnsProblems(keyPEM: keyPEM, keyID: keyID, teamID: teamID, topic: topic, baseURL: baseURL).first
    }

    func apnsProblems(keyPEM: String = credentials.apnsKeyPEM, keyID: String = "ABCDE12345", teamID: String = "TEAM123456",
                      topic: String = "com.example.app", baseURL: URL = APNsConfiguration.productionURL) -> [PushConfigurationError] {
        do {
            _ = try APNsConfiguration(keyPEM: keyPEM, keyID: keyID, teamID: teamID, topic: topic, baseURL: baseURL)
            return []
        } catch let refused as PushConfigurationProblems {
            return refused.problems
        } catch {
            Issue.record("refused with \(error), not the settings' problems")
            return []
        }
    }

    @Test("A good APNs configuration is taken, with http allowed only to this machine")
    func goodAPNs() throws {
        #expect(apnsError() == nil)
        #expect(apnsError(baseURL: URL(string: "http://127.0.0.1:8443")!) == nil)
        #expect(apnsError(baseURL: URL(string: "http://localhost:8443")!) == nil)
        #expect(apnsError(baseURL: URL(string: "http://[::1]:8443")!) == nil)
        let configuration = try APNsConfiguration(keyPEM: Self.credentials.apnsKeyPEM, keyID: "ABCDE12345", teamID: "TEAM123456", topic: " com.example.app ")
        #expect(configuration.topic == "com.example.app")
        #expect(configuration.baseURL == URL(string: "https://api.push.apple.com"))
    }

    @Test("APNs keys that are not a P-256 PKCS#8 key are refused, saying which file to give")
    func apnsKeys() throws {
        let rsaPKCS8 = try #require(try JSONSerialization.jsonObject(with: Self.credentials.fcmServiceAccountJSON) as? [String: String])["private_key"] ?? ""
        let cases: [(String, String)] = [
            ("not a key", "not a PEM file"),
            (P256.Signing.PrivateKey().derRepresentation.base64EncodedString(), "not a PEM file"),
            ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n", "“EC PRIVATE KEY”, not a PKCS#8 private key"),
            (P384.Signing.PrivateKey().pemRepresentation, "not a P-256 (ES256) private key"),
            (rsaPKCS8, "not a P-256 (ES256) private key"),
            (String(repeating: "A", count: 20_000), "far more than a .p8 file"),
        ]
        for (pem, problem) in cases {
            let error = try #require(apnsError(keyPEM: pem), "\(pem.prefix(40)) must be refused")
            #expect(error.field == .apnsKey)
            #expect(error.message.contains(problem), "\(error.message)")
            #expect(error.message.contains(".p8 file downloaded from Keys on Apple's developer site"), "\(error.message)")
        }
    }

    @Test("Keys on another curve than P-256, spelling out their curve, or of another algorithm are refused, naming what they are")
    func apnsKeyCurves() throws {
        // swift-crypto alone takes the scalar of a secp256k1 or brainpoolP256r1 key as a P-256 one: a different key.
        #expect((try? P256.Signing.PrivateKey(pemRepresentation: OpenSSLKeys.secp256k1)) != nil, "the library does not check the curve itself")
        let refused: [(pem: String, kind: String?, words: String)] = [
            (OpenSSLKeys.secp256k1, "secp256k1 (1.3.132.0.10)", "is on the secp256k1 (1.3.132.0.10) curve, not a P-256 (ES256) private key"),
            (OpenSSLKeys.brainpoolP256r1, "brainpoolP256r1 (1.3.36.3.3.2.8.1.1.7)", "is on the brainpoolP256r1 (1.3.36.3.3.2.8.1.1.7) curve"),
            (P384.Signing.PrivateKey().pemRepresentation, "P-384 (1.3.132.0.34)", "is on the P-384 (1.3.132.0.34) curve"),
            (OpenSSLKeys.ed25519, "Ed25519 (1.3.101.112)", "algorithm is Ed25519 (1.3.101.112), so it is not a P-256"),
            (OpenSSLKeys.explicitP256, nil, "spells out its curve's parameters instead of naming P-256"),
            (OpenSSLKeys.conflictingCurves, nil, "is not a P-256 (ES256) private key"),
        ]
        for (pem, kind, words) in refused {
            let error = try #require(apnsError(keyPEM: pem), "\(pem) must be refused")
            #expect(error.field == .apnsKey)
            #expect(error.keyKind == kind)
            #expect(error.message.contains(words), "\(error.message)")
        }
        #expect(apnsError(keyPEM: OpenSSLKeys.p256FromOpenSSL) == nil, "OpenSSL's P-256 key, with its public key inside, is taken")
        #expect(PrivateKeyInfo.read(pem: OpenSSLKeys.p256FromOpenSSL) == .namedCurve(.p256))
        #expect(PrivateKeyInfo.read(pem: Self.credentials.apnsKeyPEM) == .namedCurve(.p256))
    }

    @Test("Every setting that cannot work is reported at once, in the settings' order")
    func apnsProblemsAtOnce() {
        let problems = apnsProblems(keyPEM: OpenSSLKeys.secp256k1, keyID: "short", teamID: "team", topic: " ", baseURL: URL(string: "http://apns.example.com")!)
        #expect(problems.map(\.field) == [.apnsKey, .apnsKeyID, .apnsTeamID, .apnsTopic, .apnsURL])
        #expect(apnsProblems().isEmpty)
    }

    @Test("Key and team ids must be 10 of A–Z and 0–9; the topic a bundle id; the URL https or loopback http")
    func apnsFields() {
        for keyID in ["", "ABCDE1234", "ABCDE123456", "abcde12345", "ABCDE-1234", "ABCDÉ12345"] {
            #expect(apnsError(keyID: keyID)?.field == .apnsKeyID, "\(keyID)")
        }
        #expect(apnsError(keyID: "abc")?.message.contains("copy the Key ID shown beside the key") == true)
        for teamID in ["", "TEAM12345", "team123456"] {
            #expect(apnsError(teamID: teamID)?.field == .apnsTeamID, "\(teamID)")
        }
        #expect(apnsError(topic: "  ")?.message == "The APNs topic is empty: give the app's bundle id, such as com.example.app.")
        #expect(apnsError(topic: "com.example\r\nx-evil: 1")?.field == .apnsTopic)
        let urls = [
            ("http://api.push.apple.com", "is plain http: use https"),
            ("http://10.0.0.1:8080", "is plain http: use https"),
            ("ftp://api.push.apple.com", "is not an https URL"),
            ("https://user:secret@api.push.apple.com", "has a user, query or fragment"),
            ("https://api.push.apple.com?x=1", "has a user, query or fragment"),
            ("/3/device", "is not an absolute URL"),
        ]
        for (url, problem) in urls {
            let error = apnsError(baseURL: URL(string: url)!)
            #expect(error?.field == .apnsURL, "\(url)")
            #expect(error?.message.contains(problem) == true, "\(url): \(error?.message ?? "taken")")
        }
    }

    func fcmError(_ json: String) -> PushConfigurationError? {
        do {
            _ = try FCMServiceAccount(json: Data(json.utf8))
            return nil
        } catch {
            return error as? PushConfigurationError
        }
    }

    func serviceAccount(replacing field: String, with value: Any?) throws -> String {
        var account = try #require(try JSONSerialization.jsonObject(with: Self.credentials.fcmServiceAccountJSON) as? [String: Any])
        account[field] = value
        return String(decoding: try JSONSerialization.data(withJSONObject: account), as: UTF8.self)
    }

    @Test("Google's service-account file is read; one that is not JSON, lacks a field or holds a bad key is refused")
    func serviceAccountFile() throws {
        let account = try FCMServiceAccount(json: Self.credentials.fcmServiceAccountJSON)
        #expect(account.projectID == MockCredentials.defaultFCMProjectID)
        #expect(account.clientEmail == MockCredentials.defaultFCMClientEmail)
        #expect(account.tokenURI == URL(string: "https://oauth2.googleapis.com/token"))

        #expect(fcmError("not json")?.message.contains("is not a JSON object") == true)
        #expect(fcmError("[1, 2]")?.message.contains("is not a JSON object") == true)
        for field in ["project_id", "client_email", "private_key", "token_uri"] {
            let error = fcmError(try serviceAccount(replacing: field, with: nil))
            #expect(error?.field == .fcmServiceAccount)
            #expect(error?.message.hasPrefix("The service-account file has no “\(field)”") == true, "\(error?.message ?? "taken")")
            #expect(error?.message.contains("Generate new private key") == true)
            #expect(fcmError(try serviceAccount(replacing: field, with: 42))?.message.contains("has no “\(field)”") == true)
        }
        #expect(fcmError(try serviceAccount(replacing: "type", with: "authorized_user"))?.message.contains("“authorized_user” credential, not a service account") == true)
        let brokenKey = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
        #expect(fcmError(try serviceAccount(replacing: "private_key", with: brokenKey))?.message.contains("is not an RSA private key") == true)
        #expect(fcmError(try serviceAccount(replacing: "private_key", with: Self.credentials.apnsKeyPEM))?.message.contains("is not an RSA private key") == true)
        #expect(fcmError(try serviceAccount(replacing: "project_id", with: "my project/../x"))?.message.contains("is not a Firebase project id") == true)
        #expect(fcmError(try serviceAccount(replacing: "client_email", with: "nobody"))?.message.contains("is not an email address") == true)
        #expect(fcmError(try serviceAccount(replacing: "token_uri", with: "http://oauth2.googleapis.com/token"))?.message.contains("is plain http") == true)
        #expect(fcmError(String(repeating: " ", count: 70_000))?.message.contains("far more than Google's") == true)
    }

    @Test("The FCM URL is https, or http to this machine")
    func fcmURL() throws {
        let account = try FCMServiceAccount(json: Self.credentials.fcmServiceAccountJSON)
        #expect(try FCMConfiguration(serviceAccount: account).baseURL == URL(string: "https://fcm.googleapis.com"))
        #expect(try FCMConfiguration(serviceAccount: account, baseURL: URL(string: "http://127.0.0.1:9000")!).baseURL.port == 9000)
        #expect(throws: PushConfigurationError.self) { try FCMConfiguration(serviceAccount: account, baseURL: URL(string: "http://fcm.example.com")!) }
    }

    @Test("A trust roots file that holds no certificate is refused, naming the file")
    func trustRoots() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-certificate-\(UUID().uuidString).pem")
        try Data("hello".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            let client = try PushHTTPClient.make(extraTrustRootsPEMFile: file.path)
            try client.syncShutdown()
            Issue.record("a file with no certificate was taken")
        } catch let error as PushConfigurationError {
            #expect(error.field == .trustRoots)
            #expect(error.message.contains(file.path))
        }
    }
}
