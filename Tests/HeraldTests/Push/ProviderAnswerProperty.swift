import Foundation
import HeraldDomain
@testable import HeraldPush
import TestSupport
import Testing

/// What the push senders read from APNs, FCM and Google's token endpoint: any status, `Retry-After`
/// and body (JSON of any shape and depth, wrong types, control characters, bytes that are not JSON)
/// reads into a result without trapping, with a wait of 0 s to a day and a short, printable reason.
@Suite("Generated inputs: what the push senders read from providers")
struct ProviderAnswerProperty {
    static let now = Date(timeIntervalSince1970: 1_767_258_000)  // 2026-01-01T09:00:00Z

    struct Answer: CustomStringConvertible {
        var status: Int
        var retryAfter: String?
        var apnsID: String?
        var body: Data?
        var description: String {
            "status \(status), retry-after \(retryAfter ?? "none"), apns-id \(apnsID ?? "none"), body \(body.map { String(decoding: $0.prefix(300), as: UTF8.self) } ?? "none")"
        }
    }

    static func answer(_ draw: inout Draw) -> Answer {
        let anyStatus = draw.int(100...599)
        let status = draw.chance(0.8)
            ? draw.pick([200, 201, 204, 400, 401, 403, 404, 405, 410, 413, 429, 500, 502, 503])
            : draw.pick([anyStatus, 0, -1, 999, Int.max, Int.min])
        let retryAfter: String? = switch draw.int(0...3) {
        case 0: nil
        case 1: imfDate(&draw, around: now)
        default: DeliveryHeaderProperty.retryAfter(&draw)
        }
        return Answer(status: status, retryAfter: retryAfter,
                      apnsID: draw.chance(0.5) ? GeneratedText.valid(&draw, maxCharacters: 300) : nil, body: body(&draw))
    }

    /// A provider's body: its real shapes with any value in any field, or anything else.
    static func body(_ draw: inout Draw) -> Data? {
        func text(_ draw: inout Draw) -> String {
            switch draw.int(0...4) {
            case 0: draw.pick(["Unregistered", "BadDeviceToken", "UNREGISTERED", "QUOTA_EXCEEDED", "invalid_grant", ""])
            case 1: GeneratedText.withControl(&draw)
            case 2: String(repeating: draw.pick(["x", "ب", "👩‍💻"]), count: draw.int(150...5000))
            default: GeneratedText.valid(&draw, maxCharacters: 100)
            }
        }
        func value(_ draw: inout Draw, depth: Int = 0) -> JSONValue {
            switch draw.int(0...(depth > 3 ? 3 : 6)) {
            case 0: return .null
            case 1: return .number(draw.double(-1e300...1e300))
            case 2: return .literal(draw.pick(["1e400", "-0", "3599", "0", "-1", "1e-400", "18446744073709551616"]))
            case 3: return .string(text(&draw))
            case 4: return .array(draw.list(0...4) { value(&$0, depth: depth + 1) })
            default: return .object(draw.list(0...4) { (key: text(&$0), value: value(&$0, depth: depth + 1)) })
            }
        }
        let document: JSONValue
        switch draw.int(0...8) {
        case 0: return nil
        case 1: return Data((0..<draw.int(0...200)).map { _ in UInt8(draw.int(0...255)) })
        case 2:
            let depth = draw.int(1...20_000)
            return Data((String(repeating: "[", count: depth) + String(repeating: "]", count: draw.int(0...depth))).utf8)
        case 3: document = .object([("reason", value(&draw))])
        case 4: document = .object([("name", value(&draw))])
        case 5:
            let detail = JSONValue.object([
                ("@type", draw.chance(0.7) ? .string("type.googleapis.com/google.firebase.fcm.v1.FcmError") : value(&draw)),
                ("errorCode", draw.chance(0.5) ? .string(draw.pick(["UNREGISTERED", "INVALID_ARGUMENT", "QUOTA_EXCEEDED"])) : value(&draw)),
            ])
            document = .object([("error", .object([
                ("code", value(&draw)), ("message", value(&draw)), ("status", value(&draw)),
                ("details", draw.chance(0.8) ? .array(draw.list(0...3) { _ in detail }) : value(&draw)),
            ]))])
        case 6:
            document = .object([("access_token", draw.chance(0.6) ? .string("ya29." + text(&draw)) : value(&draw)),
                                ("expires_in", value(&draw)), ("error", value(&draw)), ("error_description", value(&draw))])
        default: document = value(&draw)
        }
        return Data(document.text.utf8)
    }

    /// An IMF-fixdate a day or so either side of `now`, or any time from 1970 to 9999.
    static func imfDate(_ draw: inout Draw, around now: Date) -> String {
        let seconds = draw.chance(0.7) ? now.timeIntervalSince1970 + draw.double(-90_000...200_000) : draw.double(0...253_402_300_799)
        return imfFormatter().string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
    }

    /// Foundation's IMF-fixdate, the oracle for the push senders' own reader (one per use: a formatter
    /// is not to be shared between the tests running at once).
    static func imfFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    /// The properties every result holds, whatever the provider sent.
    static func check(_ result: PushResult, status: Int, input: Answer, _ run: inout GeneratedRun) {
        func checkReason(_ reason: String) {
            run.expect(!reason.isEmpty && reason.count <= 230, "reason of \(reason.count) characters", input: input)
            run.expect(!reason.unicodeScalars.contains { $0.properties.generalCategory == .control }, "a control character in \(reason.debugDescription)", input: input)
        }
        switch result {
        case .sent(let providerID):
            run.expect((200..<300).contains(status), "sent on \(status)", input: input)
            if let providerID { checkReason(providerID) }
            run.note("sent")
        case .retry(let after, let reason):
            checkReason(reason)
            if let after { run.expect(after >= .zero && after <= .seconds(86_400), "wait \(after)", input: input) }
            run.note(after == nil ? "retry" : "retry after")
        case .unregistered(let reason):
            checkReason(reason)
            run.note("unregistered")
        case .rejected(let reason):
            checkReason(reason)
            run.expect(!(200..<300).contains(status) && status != 429 && !(500..<600).contains(status), "rejected on \(status)", input: input)
            run.note("rejected")
        }
    }

    @Test("Any APNs answer reads into a result; 410 is always a dead token")
    func apnsAnswers() {
        var run = GeneratedRun("APNs answers", cases: 3_000)
        run.run(Generated.cases { draw in Self.answer(&draw) }) { input, run in
            let result = ProviderAnswer.apns(status: input.status, apnsID: input.apnsID, retryAfter: input.retryAfter, body: input.body, now: Self.now).result
            Self.check(result, status: input.status, input: input, &run)
            if input.status == 410 {
                if case .unregistered = result {} else { run.fail("410 read as \(result)", input: input) }
            }
        }
    }

    @Test("Any FCM answer reads into a result; only UNREGISTERED on 404 or 400 is a dead token")
    func fcmAnswers() {
        var run = GeneratedRun("FCM answers", cases: 3_000)
        run.run(Generated.cases { draw in Self.answer(&draw) }) { input, run in
            let result = ProviderAnswer.fcm(status: input.status, retryAfter: input.retryAfter, body: input.body, now: Self.now).result
            Self.check(result, status: input.status, input: input, &run)
            if case .unregistered(let reason) = result {
                run.expect(reason == "UNREGISTERED" && [400, 404].contains(input.status), "dead on \(input.status) \(reason)", input: input)
            }
        }
    }

    @Test("Any token endpoint answer is a header-safe token with a lifetime of 1 s to a day, or a send result")
    func tokenEndpointAnswers() {
        var run = GeneratedRun("token endpoint answers", cases: 3_000)
        run.run(Generated.cases { draw in Self.answer(&draw) }) { input, run in
            switch TokenEndpointAnswer(status: input.status, retryAfter: input.retryAfter, body: input.body, now: Self.now) {
            case .token(let token, let lifetime):
                run.expect(token.utf8.allSatisfy { (0x21...0x7E).contains($0) } && !token.isEmpty, "token \(token.debugDescription)", input: input)
                run.expect(lifetime >= 1 && lifetime <= 86_400, "lifetime \(lifetime)", input: input)
                run.note("token")
            case .failed(let result):
                run.expect(!result.isSent, "a failure that is sent", input: input)
                Self.check(result, status: input.status, input: input, &run)
            }
        }
    }

    @Test("Retry-After as seconds or any IMF-fixdate is a wait of 0 s to a day; dates read as Foundation writes them")
    func retryAfterReads() {
        var run = GeneratedRun("push Retry-After", cases: 3_000)
        run.run(Generated.cases { draw -> String in
            draw.chance(0.5) ? Self.imfDate(&draw, around: Self.now) : DeliveryHeaderProperty.retryAfter(&draw)
        }) { header, run in
            let delay = ProviderAnswer.wait(header, now: Self.now)
            if let delay { run.expect(delay >= .zero && delay <= .seconds(RetryAfter.longest), "read as \(delay)", input: header) }
            let formatter = Self.imfFormatter()
            // Compared where Foundation writes the header back as it was and in IMF-fixdate's 29
            // characters: a date it reads leniently (day 00, year 0 or 10000) is no IMF-fixdate. Only
            // ASCII is shown to DateFormatter, which traps on some other text (an IMF-fixdate is ASCII).
            if header.utf8.count == 29, header.utf8.allSatisfy({ $0 < 0x80 }),
               let written = formatter.date(from: header), formatter.string(from: written) == header,
               written.timeIntervalSince1970 >= 0 {
                let read = RetryAfter.httpDate(header, now: Self.now)
                run.expect(read == written, "\(header) read as \(String(describing: read)), Foundation reads \(written)", input: header)
                run.note("date")
            } else {
                run.note(delay == nil ? "unreadable" : "seconds")
            }
        }
    }
}
