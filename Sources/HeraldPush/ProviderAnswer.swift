import Foundation
import HeraldDomain

/// A provider's answer to one send, before the client decides whether to refresh its token.
struct ProviderAnswer: Equatable {
    var status: Int
    /// `apns-id`, or FCM's message `name`.
    var providerID: String?
    /// APNs's `reason`, or FCM's `errorCode` (else its `status`).
    var reason: String?
    var retryAfter: Duration?
    /// The provider said the device token is dead.
    var tokenIsDead = false

    /// What the outbox should do with it.
    var result: PushResult {
        let reason = reason ?? "HTTP \(status)"
        if tokenIsDead { return .unregistered(reason: reason) }
        switch status {
        case 200..<300: return .sent(providerID: providerID)
        case 429, 500..<600: return .retry(after: retryAfter, reason: reason)
        default: return .rejected(reason: reason)
        }
    }

    /// Reads an APNs answer: `apns-id`, the `{"reason": …}` body, and 410 as a dead token.
    static func apns(status: Int, apnsID: String?, retryAfter: String?, body: Data?, now: Date) -> ProviderAnswer {
        let reason = body.flatMap { jsonObject($0)?["reason"] }.flatMap(providerText)
        return ProviderAnswer(status: status, providerID: apnsID.flatMap(providerText), reason: reason,
                              retryAfter: wait(retryAfter, now: now), tokenIsDead: status == 410)
    }

    /// Reads an FCM answer: `{"name": …}` on success; on failure Google's error body
    /// `{"error": {"code", "message", "status", "details": [{"@type": "…FcmError", "errorCode": …}]}}`,
    /// where `UNREGISTERED` is a dead token.
    static func fcm(status: Int, retryAfter: String?, body: Data?, now: Date) -> ProviderAnswer {
        let object = body.flatMap(jsonObject)
        let name = object?["name"].flatMap(providerText)
        let error = object?["error"] as? [String: Any]
        let details = (error?["details"] as? [Any])?.prefix(16).compactMap { $0 as? [String: Any] } ?? []
        let fcmError = details.first { ($0["@type"] as? String)?.hasSuffix("google.firebase.fcm.v1.FcmError") == true }
        let errorCode = fcmError?["errorCode"].flatMap(providerText)
        let reason = errorCode ?? error?["status"].flatMap(providerText)
        return ProviderAnswer(status: status, providerID: (200..<300).contains(status) ? name : nil, reason: reason,
                              retryAfter: wait(retryAfter, now: now),
                              tokenIsDead: errorCode == "UNREGISTERED" && (status == 404 || status == 400))
    }

    /// How long the provider asks us to wait (`Retry-After`), 0 s to a day.
    static func wait(_ header: String?, now: Date) -> Duration? {
        RetryAfter.delay(header, now: now).map { .milliseconds(Int64(($0 * 1000).rounded(.down))) }
    }

    static func jsonObject(_ data: Data) -> [String: Any]? {
        guard !data.isEmpty else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// A provider's word as we keep it: text only, at most 200 characters, no control characters, so a
    /// hostile or broken answer cannot fill a report or break a log line.
    static func providerText(_ value: Any) -> String? {
        guard let text = value as? String else { return nil }
        let kept = String(String.UnicodeScalarView(text.unicodeScalars.lazy.filter { !$0.properties.generalCategory.isControl }.prefix(200)))
        return kept.isEmpty ? nil : kept
    }
}

private extension Unicode.GeneralCategory {
    var isControl: Bool { self == .control || self == .format || self == .lineSeparator || self == .paragraphSeparator }
}
