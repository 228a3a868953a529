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
        if let apns = message["apns"], let problem = Self.apnsOverrideProblem(apns, in: message) {
            return Self.googleError(400, "INVALID_ARGUMENT", problem, errorCode: "INVALID_ARGUMENT")
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

    /// Why FCM (or APNs, which FCM relays) refuses a message's `apns` override, or nil when it takes it: an
    /// object of `headers` (strings), `payload` (an object whose `aps` is an object) and `fcm_options`; a
    /// priority and push type APNs knows; a background push silent at priority 5, an alert push with an
    /// alert; and what an iPhone would be sent within APNs's 4096 bytes.
    static func apnsOverrideProblem(_ apns: Any, in message: [String: Any]) -> String? {
        guard let apns = apns as? [String: Any] else { return "Invalid value at 'message.apns': not an object." }
        if let unknown = Set(apns.keys).subtracting(["headers", "payload", "fcm_options", "live_activity_token"]).sorted().first {
            return "Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message.apns'."
        }
        let headerValues = apns["headers"] as? [String: Any] ?? [:]
        guard apns["headers"] == nil || apns["headers"] is [String: Any], headerValues.values.allSatisfy({ $0 is String }) else {
            return "Invalid value at 'message.apns.headers': header values are strings."
        }
        let headers = headerValues.compactMapValues { $0 as? String }
        if let priority = headers["apns-priority"], !["10", "5", "1"].contains(priority) { return "Invalid APNs priority \(priority)." }
        if let type = headers["apns-push-type"], !pushTypes.contains(type) { return "Invalid APNs push type \(type)." }
        guard apns["payload"] == nil || apns["payload"] is [String: Any] else { return "Invalid value at 'message.apns.payload': not an object." }
        guard let forwarded = FCMForwarding.apnsPayload(message: message),
              let aps = forwarded["aps"] as? [String: Any] else { return "Invalid value at 'message.apns.payload.aps': not an object." }
        // Without a push type FCM chooses one from the payload, as it does for a message with no override.
        switch headers["apns-push-type"] {
        case "background":
            guard aps["content-available"] as? Int == 1, aps["alert"] == nil, aps["badge"] == nil, aps["sound"] == nil else {
                return "APNs: a background push holds content-available 1 and no alert, badge or sound."
            }
            guard headers["apns-priority"] == "5" else { return "APNs: a background push is sent at priority 5 (BadPriority)." }
        case "alert":
            guard aps["alert"] != nil else { return "APNs: an alert push without an alert." }
        default:
            break
        }
        let bytes = (try? JSONSerialization.data(withJSONObject: forwarded, options: [.withoutEscapingSlashes]).count) ?? 0
        guard bytes <= apnsPayloadLimit else { return "APNs: PayloadTooLarge (\(bytes) bytes for the device, over \(apnsPayloadLimit))." }
        return nil
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

/// What FCM sends an Apple device for a message, as its documentation describes it: the `apns` override's
/// payload, its `aps` given the notification's title and body as the alert when it has none, and the data
/// as custom keys beside it. A test reads from it what an iPhone registered with an FCM token receives.
public enum FCMForwarding {
    /// The APNs payload for the HTTP v1 `message`, or nil when `apns.payload` or its `aps` is not an object.
    public static func apnsPayload(message: [String: Any]) -> [String: Any]? {
        let apns = message["apns"] as? [String: Any] ?? [:]
        guard var payload = apns["payload"].map({ $0 as? [String: Any] }) ?? [:] else { return nil }
        guard var aps = payload["aps"].map({ $0 as? [String: Any] }) ?? [:] else { return nil }
        if aps["alert"] == nil, let notification = message["notification"] as? [String: Any] {
            let alert = notification.filter { ["title", "body"].contains($0.key) }
            if !alert.isEmpty { aps["alert"] = alert }
        }
        payload["aps"] = aps
        for (key, value) in message["data"] as? [String: Any] ?? [:] where payload[key] == nil { payload[key] = value }
        if let image = (apns["fcm_options"] as? [String: Any])?["image"] { payload["fcm_options"] = ["image": image] }
        return payload
    }

    /// The same for a recorded request's body (`{"message": …}`).
    public static func apnsPayload(body: String) -> [String: Any]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
              let message = object["message"] as? [String: Any] else { return nil }
        return apnsPayload(message: message)
    }
}
