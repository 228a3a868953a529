import Foundation

/// APNs's `POST /3/device/{token}`, answered as Apple documents it ("Handling notification responses
/// from APNs"): a reason in `{"reason": …}` for every refusal, `apns-id` on every answer.
extension ProviderBehaviour {
    static let apnsPayloadLimit = 4096
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
        "pushtotalk", "widgets", "controls",
    ]

    func apns(_ request: MockRequest, _ credentials: MockCredentials) -> MockResponse {
        let apnsID = request.header("apns-id") ?? UUID().uuidString.lowercased()
        func refuse(_ status: Int, _ reason: String) -> MockResponse {
            var body: [String: Any] = ["reason": reason]
            if status == 410 { body["timestamp"] = Int64(request.receivedAt.timeIntervalSince1970 * 1000) }
            var headers = [(name: "apns-id", value: apnsID)]
            if status == 429 { headers.append(("retry-after", "1")) }
            return .json(status, body, headers: headers)
        }
        guard request.method == "POST" else { return refuse(405, "MethodNotAllowed") }
        let token = String(request.path.dropFirst("/3/device/".count))
        guard !token.isEmpty else { return refuse(400, "MissingDeviceToken") }
        if let refusal = providerTokenRefusal(request.header("authorization"), credentials, now: request.receivedAt) {
            return refuse(403, refusal)
        }
        guard let topic = request.header("apns-topic"), !topic.isEmpty else { return refuse(400, "MissingTopic") }
        guard let pushType = request.header("apns-push-type"), Self.pushTypes.contains(pushType) else {
            return refuse(400, "InvalidPushType")
        }
        if let priority = request.header("apns-priority"), !["10", "5", "1"].contains(priority) { return refuse(400, "BadPriority") }
        if let expiration = request.header("apns-expiration"), Int64(expiration) == nil { return refuse(400, "BadExpirationDate") }
        if let collapseID = request.header("apns-collapse-id"), collapseID.utf8.count > 64 { return refuse(400, "BadCollapseId") }
        if let given = request.header("apns-id"), UUID(uuidString: given) == nil { return refuse(400, "BadMessageId") }
        guard !request.body.isEmpty else { return refuse(400, "PayloadEmpty") }
        guard request.body.count <= Self.apnsPayloadLimit else { return refuse(413, "PayloadTooLarge") }
        switch TokenScript(token) {
        case .gone: return refuse(410, "Unregistered")
        case .busy where isFirstRequest("apns", token): return refuse(429, "TooManyRequests")
        case .flaky where isFirstRequest("apns", token): return refuse(503, "ServiceUnavailable")
        case .bad: return refuse(400, "BadDeviceToken")
        case .busy, .flaky, .deliver: return MockResponse(status: 200, headers: [("apns-id", apnsID)])
        }
    }

    /// Why APNs would refuse this `authorization` header, or nil when it takes it: a `bearer` JWT signed
    /// ES256 with the `.p8` key, naming the key (`kid`) and team (`iss`), issued (`iat`) within the hour.
    func providerTokenRefusal(_ authorization: String?, _ credentials: MockCredentials, now: Date) -> String? {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return "MissingProviderToken" }
        let text = String(authorization.dropFirst("bearer ".count))
        let nowSeconds = Int64(now.timeIntervalSince1970)
        let verifiedIssuedAt = withMemory { $0.verifiedProviderTokens[text] }
        let issuedAt: Int64
        if let verifiedIssuedAt {
            issuedAt = verifiedIssuedAt
        } else {
            guard let token = CompactJWT(text), token.header["kid"] as? String == credentials.apnsKeyID,
                  token.claims["iss"] as? String == credentials.apnsTeamID, let iat = token.seconds("iat"),
                  token.verifiesES256(credentials.apnsPublicKey)
            else { return "InvalidProviderToken" }
            issuedAt = iat
            withMemory { memory in
                if memory.verifiedProviderTokens.count >= Memory.verifiedTokenLimit { memory.verifiedProviderTokens = [:] }
                memory.verifiedProviderTokens[text] = iat
            }
        }
        if issuedAt > nowSeconds + 60 { return "InvalidProviderToken" }
        if nowSeconds - issuedAt > 3600 { return "ExpiredProviderToken" }
        return nil
    }
}
