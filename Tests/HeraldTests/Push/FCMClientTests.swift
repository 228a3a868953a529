import Foundation
import HeraldDomain
@testable import HeraldPush
import PushMock
import Testing

/// FCMClient against the mock token endpoint and FCM HTTP v1 on loopback: the OAuth exchange, the
/// access token's reuse and refresh, and what each of FCM's answers becomes.
@Suite("FCM client against the mock FCM")
struct FCMClientTests {
    @Test("Many sends, some at once, make one token request whose assertion verifies; each send carries its Bearer token")
    func oneTokenForManySends() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.fcm()
            let results = await withTaskGroup(of: PushResult.self) { group in
                for index in 0..<20 {
                    group.addTask { await client.send(PushRequest(deviceToken: "", body: PushMockFixture.fcmBody(token: "device\(index)"))) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            for index in 20..<25 {
                #expect(await client.send(PushRequest(deviceToken: "", body: PushMockFixture.fcmBody(token: "device\(index)"))).isSent)
            }
            #expect(results.count == 20 && results.allSatisfy(\.isSent), "\(results)")
            guard case .sent(let name) = results[0] else { return }
            #expect(name?.hasPrefix("projects/\(fixture.mock.credentials.fcmProjectID)/messages/") == true)

            let tokenRequests = fixture.requests("oauth")
            #expect(tokenRequests.count == 1, "one token fetch for 25 sends")
            let tokenRequest = try #require(tokenRequests.first)
            #expect(tokenRequest.header("content-type") == "application/x-www-form-urlencoded")
            let form = Dictionary(uniqueKeysWithValues: tokenRequest.body.split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), String(parts.count > 1 ? parts[1] : "").removingPercentEncoding ?? "")
            })
            #expect(form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
            let assertion = try #require(CompactJWT(form["assertion"] ?? ""))
            #expect(assertion.header["alg"] as? String == "RS256")
            #expect(assertion.header["typ"] as? String == "JWT")
            #expect(assertion.claims["iss"] as? String == fixture.mock.credentials.fcmClientEmail)
            #expect(assertion.claims["aud"] as? String == fixture.mock.credentials.fcmTokenURI)
            #expect(assertion.claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
            let issuedAt = try #require(assertion.seconds("iat"))
            #expect(assertion.seconds("exp") == issuedAt + 3600)
            #expect(assertion.verifiesRS256(fixture.mock.credentials.fcmPublicKey))

            let sends = fixture.requests("fcm")
            #expect(sends.count == 25)
            #expect(Set(sends.compactMap { $0.header("authorization") }).count == 1)
            let send = try #require(sends.first)
            #expect(send.method == "POST")
            #expect(send.path == "/v1/projects/\(fixture.mock.credentials.fcmProjectID)/messages:send")
            #expect(send.httpVersion == "2")
            #expect(send.header("authorization")?.hasPrefix("Bearer ya29.mock.") == true)
            #expect(send.header("content-type") == "application/json; charset=UTF-8")
            #expect(sends.map(\.body).contains(String(decoding: PushMockFixture.fcmBody(token: "device0"), as: UTF8.self)))
        }
    }

    @Test("The mock takes an apns override as FCM and APNs do: Herald's for iOS, alert and silent, pass; a background push at priority 10, headers that are not strings or an aps that is not an object are refused")
    func apnsOverride() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.fcm()
            func send(_ body: String) async -> PushResult {
                await client.send(PushRequest(deviceToken: "", body: Data(body.utf8)))
            }
            let alert = PushNotification(title: "Sale", subtitle: "Shoes", body: "Half price", badge: 2, sound: "default", category: "OFFER", threadId: "sales")
            for notification in [alert, PushNotification(silent: true)] {
                let body = PushPayload.fcm(notification, campaignID: 42, data: CustomData(), token: "iphone", platform: .ios)
                #expect(await client.send(PushRequest(deviceToken: "", body: Data(body))).isSent, "\(String(decoding: body, as: UTF8.self))")
            }
            #expect(await client.send(PushRequest(deviceToken: "", body: Data(PushPayload.feedRefresh(provider: .fcm, token: "iphone", platform: .ios)))).isSent)
            let refused = [
                #"{"message":{"token":"t","apns":{"headers":{"apns-push-type":"background","apns-priority":"10"},"payload":{"aps":{"content-available":1}}}}}"#,
                #"{"message":{"token":"t","apns":{"headers":{"apns-push-type":"background","apns-priority":"5"},"payload":{"aps":{"content-available":1,"alert":"x"}}}}}"#,
                #"{"message":{"token":"t","apns":{"headers":{"apns-priority":5}}}}"#,
                #"{"message":{"token":"t","apns":{"payload":{"aps":"x"}}}}"#,
                #"{"message":{"token":"t","apns":{"headers":{"apns-push-type":"alert"},"payload":{"aps":{}}}}}"#,
                #"{"message":{"token":"t","apns":{"header":{}}}}"#,
                #"{"message":{"token":"t","apns":[]}}"#,
            ]
            for body in refused {
                #expect(await send(body) == .rejected(reason: "INVALID_ARGUMENT"), "\(body)")
            }
        }
    }

    @Test("FCM's reason is the errorCode of its FcmError detail wherever that is among the details, the status only without one")
    func errorCodeIsTheReason() {
        let body = #"""
            {"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[
              {"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token"}]},
              {"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}
            """#
        let answer = ProviderAnswer.fcm(status: 404, retryAfter: nil, body: Data(body.utf8), now: Date())
        #expect(answer.result == .unregistered(reason: "UNREGISTERED"))
        let bare = ProviderAnswer.fcm(status: 403, retryAfter: nil, body: Data(#"{"error":{"code":403,"status":"PERMISSION_DENIED"}}"#.utf8), now: Date())
        #expect(bare.result == .rejected(reason: "PERMISSION_DENIED"))
    }

    @Test("UNREGISTERED is a dead token, 429 a retry after its Retry-After, 503 a retry, INVALID_ARGUMENT a rejection")
    func answers() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.fcm()
            func send(_ token: String, title: String = "Hello") async -> PushResult {
                await client.send(PushRequest(deviceToken: token, body: PushMockFixture.fcmBody(token: token, title: title)))
            }
            #expect(await send("gone-fcm") == .unregistered(reason: "UNREGISTERED"))
            #expect(await send("busy-fcm") == .retry(after: .seconds(1), reason: "QUOTA_EXCEEDED"))
            #expect(await send("busy-fcm").isSent)
            #expect(await send("flaky-fcm") == .retry(after: nil, reason: "UNAVAILABLE"))
            #expect(await send("flaky-fcm").isSent)
            #expect(await send("bad-fcm") == .rejected(reason: "INVALID_ARGUMENT"))
            #expect(await send("large", title: String(repeating: "x", count: 4000)) == .rejected(reason: "INVALID_ARGUMENT"))
        }
    }

    @Test("A revoked access token (401) is fetched again and the send retried once")
    func revokedToken() async throws {
        try await PushMockFixture.run { fixture in
            let client = try fixture.fcm()
            #expect(await client.send(PushRequest(deviceToken: "", body: PushMockFixture.fcmBody(token: "one"))).isSent)
            fixture.mock.revokeAccessTokens()
            #expect(await client.send(PushRequest(deviceToken: "", body: PushMockFixture.fcmBody(token: "two"))).isSent)
            #expect(fixture.requests("oauth").count == 2)
            #expect(fixture.requests("fcm").map(\.status) == [200, 401, 200])
        }
    }

    @Test("An access token is fetched again a minute before it expires")
    func expiringToken() async throws {
        try await PushMockFixture.run(accessTokenLifetime: 61) { fixture in
            let client = try fixture.fcm()
            #expect(await client.send(PushRequest(deviceToken: "", body: PushMockFixture.fcmBody(token: "one"))).isSent)
            try await Task.sleep(for: .milliseconds(1100))
            #expect(await client.send(PushRequest(deviceToken: "", body: PushMockFixture.fcmBody(token: "two"))).isSent)
            #expect(fixture.requests("oauth").count == 2)
            #expect(fixture.requests("fcm").map(\.status) == [200, 200], "no send went out with a token about to expire")
        }
    }

    @Test("A token endpoint that does not answer is a retry; one that refuses the service account is a rejection")
    func tokenEndpointFailures() async throws {
        try await PushMockFixture.run { fixture in
            var account = try #require(try JSONSerialization.jsonObject(with: fixture.mock.credentials.fcmServiceAccountJSON) as? [String: String])
            let closedPort = try await APNsClientTests.closedPort()
            account["token_uri"] = "https://127.0.0.1:\(closedPort)/token"
            let unreachable = try fixture.fcm(serviceAccountJSON: try JSONSerialization.data(withJSONObject: account))
            guard case .retry(nil, let reason) = await unreachable.send(PushRequest(deviceToken: "", body: PushMockFixture.fcmBody(token: "one"))) else {
                Issue.record("an unreachable token endpoint is a retry")
                return
            }
            #expect(reason.hasPrefix("token endpoint: no answer"))

            let other = try MockCredentials.generate(tokenURI: fixture.mock.credentials.fcmTokenURI)
            var wrongKey = account
            wrongKey["token_uri"] = fixture.mock.credentials.fcmTokenURI
            wrongKey["private_key"] = try #require(try JSONSerialization.jsonObject(with: other.fcmServiceAccountJSON) as? [String: String])["private_key"]
            let refused = try fixture.fcm(serviceAccountJSON: try JSONSerialization.data(withJSONObject: wrongKey))
            #expect(await refused.send(PushRequest(deviceToken: "", body: PushMockFixture.fcmBody(token: "one")))
                == .rejected(reason: "token endpoint: invalid_grant: Invalid JWT Signature."))
            #expect(fixture.requests("fcm").isEmpty, "nothing is sent without a token")
        }
    }

    @Test("The token endpoint's answers: a token and its lifetime, a retry when busy or down, a rejection when it refuses")
    func tokenEndpointAnswers() {
        let now = Date()
        func read(_ status: Int, _ body: String, retryAfter: String? = nil) -> TokenEndpointAnswer {
            TokenEndpointAnswer(status: status, retryAfter: retryAfter, body: Data(body.utf8), now: now)
        }
        #expect(read(200, #"{"access_token":"ya29.abc","expires_in":3599,"token_type":"Bearer"}"#) == .token("ya29.abc", lifetime: 3599))
        #expect(read(200, #"{"access_token":"ya29.abc"}"#) == .token("ya29.abc", lifetime: 3600))
        #expect(read(200, #"{"access_token":"ya29.abc","expires_in":1e300}"#) == .token("ya29.abc", lifetime: 86_400))
        #expect(read(200, #"{"access_token":"bad token\r\n"}"#) == .failed(.retry(after: nil, reason: "token endpoint: the answer has no usable access_token")))
        #expect(read(200, #"{"access_token":"ya29.abc","expires_in":0}"#) == .failed(.retry(after: nil, reason: "token endpoint: the access token expires at once")))
        #expect(read(503, "", retryAfter: "30") == .failed(.retry(after: .seconds(30), reason: "token endpoint: HTTP 503")))
        #expect(read(400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)
            == .failed(.rejected(reason: "token endpoint: invalid_grant: Invalid JWT Signature.")))
    }
}
