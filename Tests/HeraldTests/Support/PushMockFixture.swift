import AsyncHTTPClient
import Foundation
@testable import HeraldPush
import PushMock
import Testing

/// The mock providers on loopback and an HTTP client that trusts their certificate, for one test.
struct PushMockFixture {
    let mock: MockProviders
    let httpClient: HTTPClient
    let directory: URL

    /// Runs `body` with a fresh mock, then shuts the client and the mock down.
    static func run(accessTokenLifetime: Int = 3599, _ body: (PushMockFixture) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("mock-certificate.pem")
        var options = MockProviders.Options()
        options.certificateFile = certificate
        options.accessTokenLifetime = accessTokenLifetime
        let mock = try await MockProviders.start(options)
        let httpClient = try PushHTTPClient.make(extraTrustRootsPEMFile: certificate.path)
        let fixture = PushMockFixture(mock: mock, httpClient: httpClient, directory: directory)
        do {
            try await body(fixture)
        } catch {
            try? await fixture.close()
            throw error
        }
        try await fixture.close()
    }

    private func close() async throws {
        try await httpClient.shutdown()
        try await mock.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    func apns(keyPEM: String? = nil) throws -> APNsClient {
        let configuration = try APNsConfiguration(
            keyPEM: keyPEM ?? mock.credentials.apnsKeyPEM, keyID: mock.credentials.apnsKeyID,
            teamID: mock.credentials.apnsTeamID, topic: "com.example.herald", baseURL: mock.baseURL)
        return APNsClient(configuration: configuration, httpClient: httpClient)
    }

    func fcm(serviceAccountJSON: Data? = nil) throws -> FCMClient {
        let account = try FCMServiceAccount(json: serviceAccountJSON ?? mock.credentials.fcmServiceAccountJSON)
        return FCMClient(configuration: try FCMConfiguration(serviceAccount: account, baseURL: mock.baseURL), httpClient: httpClient)
    }

    /// The recorded requests for one provider ("apns", "fcm", "oauth").
    func requests(_ provider: String) -> [RecordedRequest] {
        mock.requests().filter { $0.provider == provider }
    }

    /// An FCM send's body for `token`.
    static func fcmBody(token: String, title: String = "Hello") -> Data {
        Data(#"{"message":{"token":"\#(token)","notification":{"title":"\#(title)","body":"From Herald"}}}"#.utf8)
    }

    static let apnsBody = Data(#"{"aps":{"alert":{"title":"Hello","body":"From Herald"},"badge":1},"herald_campaign_id":7}"#.utf8)
}

extension PushResult {
    var isSent: Bool {
        if case .sent = self { true } else { false }
    }
}
