import Foundation

/// How long a provider asks us to wait: `Retry-After` as delta-seconds or an IMF-fixdate.
enum RetryAfter {
    /// Longer waits are taken as this: a provider asking for more than a day is more likely wrong than
    /// right, and a campaign that waits longer has missed its moment anyway.
    static let longest = Duration.seconds(86_400)

    /// The wait from `now`, 0 s to a day, or nil when the header is absent or unreadable.
    static func delay(_ header: String?, now: Date) -> Duration? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // Compared as a double: up to 64 digits never become an Int.
            guard let seconds = Double(text) else { return nil }
            return seconds >= 86_400 ? longest : .seconds(Int64(seconds))
        }
        guard let date = imfFixdate(text) else { return nil }
        let wait = date.timeIntervalSince(now)
        guard wait > 0 else { return .zero }
        return wait >= 86_400 ? longest : .milliseconds(Int64(wait * 1000))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, the only date form HTTP senders may send (RFC 9110 §5.6.7),
    /// read field by field with each range checked.
    static func imfFixdate(_ text: String) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 6, fields[0].hasSuffix(","), weekdays.contains(String(fields[0].dropLast())), fields[5] == "GMT",
              fields[1].utf8.count == 2, let day = Int(fields[1]), (1...31).contains(day),
              let monthIndex = months.firstIndex(of: fields[2]),
              fields[3].utf8.count == 4, let year = Int(fields[3]), (1970...9999).contains(year)
        else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.utf8.count == 2 }),
              let hour = Int(clock[0]), (0...23).contains(hour),
              let minute = Int(clock[1]), (0...59).contains(minute),
              let second = Int(clock[2]), (0...60).contains(second)
        else { return nil }
        let days = daysSince1970(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(((days * 24 + hour) * 60 + minute) * 60 + second))
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

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
                              retryAfter: RetryAfter.delay(retryAfter, now: now), tokenIsDead: status == 410)
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
                              retryAfter: RetryAfter.delay(retryAfter, now: now),
                              tokenIsDead: errorCode == "UNREGISTERED" && (status == 404 || status == 400))
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
