import Crypto
import Foundation
@testable import HeraldPush
import PushMock
import Testing

/// APNsClient against the mock APNs over HTTP/2 and TLS on loopback: what goes on the wire, the
/// provider token, and what each of APNs's answers becomes.
@Suite("APNs client against the mock APNs")
struct APNsClientTests {
    @Test("A send is POST /3/device/{token} over HTTP/2 with each header, the body as given, and a JWT that verifies")
    func requestOnTheWire() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.apns()
            let apnsID = UUID()
            let expiration = Date(timeIntervalSince1970: 1_900_000_000)
            let result = await client.send(PushRequest(
                deviceToken: "a1b2c3d4e5f6", body: PushMockFixture.apnsBody, apnsPushType: "alert", apnsPriority: 10,
                expiration: expiration, collapseID: "campaign-7", apnsID: apnsID))
            #expect(result == .sent(providerID: apnsID.uuidString.lowercased()))

            let sent = try #require(fixture.requests("apns").first)
            #expect(sent.method == "POST")
            #expect(sent.path == "/3/device/a1b2c3d4e5f6")
            #expect(sent.httpVersion == "2")
            #expect(sent.header("apns-topic") == "com.example.herald")
            #expect(sent.header("apns-push-type") == "alert")
            #expect(sent.header("apns-priority") == "10")
            #expect(sent.header("apns-expiration") == "1900000000")
            #expect(sent.header("apns-collapse-id") == "campaign-7")
            #expect(sent.header("apns-id") == apnsID.uuidString.lowercased())
            #expect(sent.body == String(decoding: PushMockFixture.apnsBody, as: UTF8.self))
            #expect(sent.status == 200)

            let authorization = try #require(sent.header("authorization"))
            #expect(authorization.hasPrefix("bearer "))
            let token = try #require(CompactJWT(String(authorization.dropFirst("bearer ".count))))
            #expect(token.header["alg"] as? String == "ES256")
            #expect(token.header["kid"] as? String == fixture.mock.credentials.apnsKeyID)
            #expect(token.claims["iss"] as? String == fixture.mock.credentials.apnsTeamID)
            let issuedAt = try #require(token.seconds("iat"))
            #expect(abs(Date().timeIntervalSince1970 - Double(issuedAt)) < 60)
            #expect(token.verifiesES256(fixture.mock.credentials.apnsPublicKey))
            #expect(!token.verifiesES256(P256.Signing.PrivateKey().publicKey), "a different key must not verify it")
        }
    }

    @Test("Headers not set are not sent, and every send reuses the one provider token")
    func optionalHeadersAndTokenReuse() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.apns()
            for index in 0..<5 {
                let result = await client.send(PushRequest(deviceToken: "device\(index)", body: PushMockFixture.apnsBody,
                                                           apnsPushType: "background", apnsPriority: 5))
                guard case .sent(let providerID) = result else {
                    Issue.record("send \(index): \(result)")
                    return
                }
                #expect(providerID.flatMap(UUID.init(uuidString:)) != nil, "APNs's own apns-id when none was given")
            }
            let sent = fixture.requests("apns")
            #expect(sent.count == 5)
            for request in sent {
                #expect(request.header("apns-push-type") == "background")
                #expect(request.header("apns-priority") == "5")
                #expect(request.header("apns-expiration") == nil)
                #expect(request.header("apns-collapse-id") == nil)
                #expect(request.header("apns-id") == nil)
            }
            #expect(Set(sent.compactMap { $0.header("authorization") }).count == 1)
        }
    }

    @Test("410 is a dead token, 429 a retry after its Retry-After, 503 a retry, 400 a rejection with APNs's reason")
    func answers() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.apns()
            func send(_ token: String) async -> PushResult {
                await client.send(PushRequest(deviceToken: token, body: PushMockFixture.apnsBody))
            }
            #expect(await send("gone1") == .unregistered(reason: "Unregistered"))
            #expect(await send("busy1") == .retry(after: .seconds(1), reason: "TooManyRequests"))
            #expect(await send("busy1").isSent, "the mock's busy token fails once")
            #expect(await send("flaky1") == .retry(after: nil, reason: "ServiceUnavailable"))
            #expect(await send("flaky1").isSent, "the mock's flaky token fails once")
            #expect(await send("bad1") == .rejected(reason: "BadDeviceToken"))
            #expect(fixture.mock.stats().byStatus == ["410": 1, "429": 1, "200": 2, "503": 1, "400": 1])
        }
    }

    @Test("A payload of 4096 bytes is sent; 4097 is refused by APNs as PayloadTooLarge")
    func payloadLimit() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.apns()
            func payload(_ size: Int) -> Data {
                let prefix = #"{"aps":{"alert":""#, suffix = #""}}"#
                return Data((prefix + String(repeating: "x", count: size - prefix.utf8.count - suffix.utf8.count) + suffix).utf8)
            }
            #expect(await client.send(PushRequest(deviceToken: "fits", body: payload(4096))).isSent)
            #expect(await client.send(PushRequest(deviceToken: "over", body: payload(4097))) == .rejected(reason: "PayloadTooLarge"))
        }
    }

    @Test("A key APNs refuses: one fresh token and one retry, then rejected; the next send within the minute makes no new token")
    func refusedKey() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.apns(keyPEM: P256.Signing.PrivateKey().pemRepresentation)
            #expect(await client.send(PushRequest(deviceToken: "device1", body: PushMockFixture.apnsBody)) == .rejected(reason: "InvalidProviderToken"))
            let tried = fixture.requests("apns").compactMap { $0.header("authorization") }
            #expect(tried.count == 2, "the refused request and its one retry")
            #expect(Set(tried).count == 2, "the retry carries a fresh token")
            #expect(fixture.mock.stats().byStatus == ["403": 2])

            #expect(await client.send(PushRequest(deviceToken: "device2", body: PushMockFixture.apnsBody)) == .rejected(reason: "InvalidProviderToken"))
            #expect(fixture.requests("apns").count == 3)
        }
    }

    @Test("The provider token is made again at 50 minutes, and after a refusal only when the refused one is still in use")
    func providerTokenLifetime() throws {
        let configuration = try APNsConfiguration(
            keyPEM: P256.Signing.PrivateKey().pemRepresentation, keyID: "ABCDE12345", teamID: "TEAM123456", topic: "com.example.app")
        let tokens = APNsProviderTokens(configuration: configuration)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try tokens.current(now: start)
        #expect(try tokens.current(now: start.addingTimeInterval(49 * 60)) == first)
        let second = try tokens.current(now: start.addingTimeInterval(50 * 60))
        #expect(second != first)
        #expect(try tokens.current(now: start.addingTimeInterval(-10)) != second, "a clock that went back makes a new token")

        let refusedAt = start.addingTimeInterval(2 * 3600)
        let inUse = try tokens.current(now: refusedAt)
        let replacement = try #require(try tokens.replacement(for: inUse, now: refusedAt))
        #expect(replacement != inUse)
        #expect(try tokens.replacement(for: inUse, now: refusedAt) == replacement, "a send refused with the old token takes the new one")
        #expect(try tokens.replacement(for: replacement, now: refusedAt.addingTimeInterval(30)) == nil, "at most one refused-token refresh a minute")
        #expect(try tokens.replacement(for: replacement, now: refusedAt.addingTimeInterval(61)) != nil)
    }

    @Test("A token or header APNs would refuse is refused before sending; a dead port is a retry")
    func localRefusalsAndConnectionFailure() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.apns()
            #expect(await client.send(PushRequest(deviceToken: "../admin", body: PushMockFixture.apnsBody)) == .rejected(reason: "BadDeviceToken"))
            #expect(await client.send(PushRequest(deviceToken: "", body: PushMockFixture.apnsBody)) == .rejected(reason: "BadDeviceToken"))
            #expect(await client.send(PushRequest(deviceToken: "device", body: PushMockFixture.apnsBody, apnsPushType: "alert\r\nx: y")) == .rejected(reason: "InvalidPushType"))
            #expect(await client.send(PushRequest(deviceToken: "device", body: PushMockFixture.apnsBody, apnsPriority: 7)) == .rejected(reason: "BadPriority"))
            #expect(await client.send(PushRequest(deviceToken: "device", body: PushMockFixture.apnsBody, collapseID: String(repeating: "é", count: 33))) == .rejected(reason: "BadCollapseId"))
            #expect(fixture.mock.requests().isEmpty)

            let closedPort = try await Self.closedPort()
            let unreachable = APNsClient(
                configuration: try APNsConfiguration(
                    keyPEM: fixture.mock.credentials.apnsKeyPEM, keyID: fixture.mock.credentials.apnsKeyID,
                    teamID: fixture.mock.credentials.apnsTeamID, topic: "com.example.herald",
                    baseURL: URL(string: "https://127.0.0.1:\(closedPort)")!),
                httpClient: fixture.httpClient)
            guard case .retry(nil, let reason) = await unreachable.send(PushRequest(deviceToken: "device", body: PushMockFixture.apnsBody)) else {
                Issue.record("a refused connection is a retry")
                return
            }
            #expect(reason.hasPrefix("no answer"))
        }
    }

    /// A loopback port nothing listens on: one the mock had, after it stopped.
    static func closedPort() async throws -> Int {
        let mock = try await MockProviders.start()
        let port = mock.port
        try await mock.shutdown()
        return port
    }
}
