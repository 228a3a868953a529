import Foundation

/// Google's OAuth 2.0 token endpoint (`POST /token`, the JWT-bearer grant) and FCM HTTP v1's
/// `POST /v1/projects/{project}/messages:send`, with Google's error shapes.
extension ProviderBehaviour {
    static let fcmScope = "https://www.googleapis.com/auth/firebase.messaging"
    static let fcmMessageLimit = 4000

    func oauth(_ request: MockRequest, _ credentials: MockCredentials) -> MockResponse {
        func refuse(_ error: String, _ description: String) -> MockResponse {
            .json(400, ["error": error, "error_description": description])
        }
        guard request.method == "POST" else { return .json(405, ["error": "invalid_request", "error_description": "POST only"]) }
        let form = Self.formFields(request.body)
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return refuse("unsupported_grant_type", "Invalid grant_type: \(form["grant_type"] ?? "")")
        }
        guard let assertion = form["assertion"], let token = CompactJWT(assertion) else {
            return refuse("invalid_request", "Missing or malformed assertion")
        }
        guard token.verifiesRS256(credentials.fcmPublicKey) else { return refuse("invalid_grant", "Invalid JWT Signature.") }
        guard token.claims["iss"] as? String == credentials.fcmClientEmail else { return refuse("invalid_grant", "Invalid issuer.") }
        guard token.claims["aud"] as? String == credentials.fcmTokenURI else {
            return refuse("invalid_grant", "Invalid JWT: Failed audience check.")
        }
        let scopes = (token.claims["scope"] as? String)?.split(separator: " ").map(String.init) ?? []
        guard scopes.contains(Self.fcmScope) else { return refuse("invalid_scope", "Invalid OAuth scope or ID token audience provided.") }
        let now = Int64(request.receivedAt.timeIntervalSince1970)
        guard let iat = token.seconds("iat"), let exp = token.seconds("exp"), iat <= now + 60, exp > now, exp - iat <= 3600 else {
            return refuse("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
        }
        let accessToken = "ya29.mock." + UUID().uuidString.lowercased()
        let lifetime = accessTokenLifetime
        withMemory { memory in
            if memory.accessTokens.count >= Memory.accessTokenLimit {
                memory.accessTokens = memory.accessTokens.filter { $0.value > request.receivedAt }
                if memory.accessTokens.count >= Memory.accessTokenLimit { memory.accessTokens = [:] }
            }
            memory.accessTokens[accessToken] = request.receivedAt.addingTimeInterval(TimeInterval(lifetime))
        }
        return .json(200, ["access_token": accessToken, "expires_in": lifetime, "token_type": "Bearer"])
    }

    func fcm(_ request: MockRequest, _ credentials: MockCredentials) -> MockResponse {
        guard request.method == "POST" else { return Self.googleError(405, "METHOD_NOT_ALLOWED", "POST only", errorCode: nil) }
        let project = request.path.dropFirst("/v1/projects/".count)
        guard project.hasSuffix("/messages:send") else { return Self.googleError(404, "NOT_FOUND", "Not found", errorCode: nil) }
        guard project.dropLast("/messages:send".count) == credentials.fcmProjectID[...] else {
            return Self.googleError(403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied on resource (or it may not exist).", errorCode: nil)
        }
        guard let authorization = request.header("authorization"), authorization.hasPrefix("Bearer "),
              let expiry = withMemory({ $0.accessTokens[String(authorization.dropFirst("Bearer ".count))] }),
              expiry > request.receivedAt
        else {
            return Self.googleError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", errorCode: nil)
        }
        guard let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
              var message = body["message"] as? [String: Any], let token = message["token"] as? String, !token.isEmpty
        else {
            return Self.googleError(400, "INVALID_ARGUMENT", "Recipient of the message is not set.", errorCode: "INVALID_ARGUMENT")
        }
        message["token"] = nil
        let messageBytes = (try? JSONSerialization.data(withJSONObject: message, options: [.withoutEscapingSlashes]).count) ?? 0
        guard messageBytes <= Self.fcmMessageLimit else {
            return Self.googleError(400, "INVALID_ARGUMENT", "Message is too big: \(messageBytes) bytes without the token, over \(Self.fcmMessageLimit).", errorCode: "INVALID_ARGUMENT")
        }
        switch TokenScript(token) {
        case .gone:
            return Self.googleError(404, "NOT_FOUND", "Requested entity was not found.", errorCode: "UNREGISTERED")
        case .busy where isFirstRequest("fcm", token):
            return Self.googleError(429, "RESOURCE_EXHAUSTED", "Quota exceeded for sending messages.", errorCode: "QUOTA_EXCEEDED",
                                    headers: [("retry-after", "1")])
        case .flaky where isFirstRequest("fcm", token):
            return Self.googleError(503, "UNAVAILABLE", "The service is currently unavailable.", errorCode: "UNAVAILABLE")
        case .bad:
            return Self.googleError(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", errorCode: "INVALID_ARGUMENT")
        case .busy, .flaky, .deliver:
            let number = withMemory { memory in
                memory.messageCount += 1
                return memory.messageCount
            }
            return .json(200, ["name": "projects/\(credentials.fcmProjectID)/messages/0:\(number)%mock"])
        }
    }

    /// `{"error": {"code", "message", "status", "details": [FcmError]}}`, as Google's APIs answer.
    static func googleError(_ code: Int, _ status: String, _ message: String, errorCode: String?,
                            headers: [(name: String, value: String)] = []) -> MockResponse {
        var error: [String: Any] = ["code": code, "message": message, "status": status]
        if let errorCode {
            error["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode]]
        }
        return .json(code, ["error": error], headers: headers)
    }

    /// `application/x-www-form-urlencoded` fields; a repeated name keeps its first value.
    static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            guard let name = parts.first else { continue }
            let key = decode(name)
            if fields[key] == nil { fields[key] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return fields
    }
}
