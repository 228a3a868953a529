import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import PropertyBased
import TestSupport
import Testing

/// Generated registrations through `PUT /api/v1/installations/{id}` on the real application: valid ones (any
/// key order, nulls, any case, tokens that move between installations) are stored as documented and answered
/// with what was stored; each broken one (an APNs token on a device that is not an iPhone among them) is
/// refused with its status, names its field, and changes nothing.
@Suite("Generated inputs: installation registrations")
struct InstallationProperty {
    /// What a stored installation must say.
    struct Stored: Equatable, CustomStringConvertible {
        var platform: String
        var provider: String?
        var token: String?
        var appVersion: String?
        var language: String?
        var country: String?
        var timeZone: String?
        var notificationsAllowed: Bool

        var description: String {
            "\(platform) \(provider ?? "-") \(token?.prefix(20) ?? "-") \(appVersion ?? "-") \(language ?? "-") \(country ?? "-") \(timeZone ?? "-") \(notificationsAllowed)"
        }
    }

    /// One request and what Herald must answer to it.
    struct Case: CustomStringConvertible {
        var id: String
        var body: [UInt8]
        var contentType = "application/json"
        /// What is stored after a registration Herald takes; nil for one it refuses.
        var stored: Stored?
        /// The refusal's status (0 for a registration Herald takes) and the field it names, if one.
        var refusal = 0
        var field: String?

        var description: String {
            "PUT \(JSONValue.quoted(id)) \(contentType) → \(refusal == 0 ? "stored" : "\(refusal) \(field ?? "")")\n\(String(decoding: body.prefix(3000), as: UTF8.self))"
        }
    }

    static let ids = (0..<12).map { "iid-\($0)" } + ["a/b", "phone 1 ✓", "تلفن", "x%y"]
    /// Tokens several installations register, so reinstalls take them over.
    static let sharedTokens = [("apns", String(repeating: "ab", count: 32)), ("apns", String(repeating: "0F", count: 32)), ("fcm", "fcm:shared-token_1")]
    static let languages = [("fa", "fa"), ("pt-br", "pt-BR"), ("PT", "pt"), ("zh-hant-tw", "zh-Hant-TW"), ("es-419", "es-419"), ("DE-de", "de-DE")]
    static let zones = ["Asia/Tehran", "Europe/Berlin", "UTC", "America/Sao_Paulo", "Asia/Tokyo", "Africa/Cairo"]
    /// The characters of an FCM registration token.
    static let fcmAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:-")
    /// Printable ASCII that FCM never puts in a token.
    static let outsideFCMAlphabet = (0x21...0x7E).map { Character(Unicode.Scalar(UInt8($0))) }.filter { !fcmAlphabet.contains($0) }

    static func randomCase(_ text: String, _ draw: inout Draw) -> String {
        String(text.map { draw.chance(0.5) ? Character($0.uppercased()) : Character($0.lowercased()) })
    }

    static func generator() -> Generator<Case, Shrink.None<Case>> {
        Generated.cases { draw in
            var stored = Stored(platform: draw.pick(Platform.allCases).rawValue, notificationsAllowed: draw.chance(0.5))
            var members: [(key: String, value: JSONValue)] = [("platform", .string(stored.platform)), ("notificationsAllowed", .bool(stored.notificationsAllowed))]
            func optional(_ key: String, _ written: String?) {
                if let written { members.append((key, .string(written))) } else if draw.chance(0.3) { members.append((key, .null)) }
            }
            switch draw.int(0...3) {
            case 0:
                break
            case 1:
                let (provider, token) = draw.pick(sharedTokens)
                stored.provider = provider
                stored.token = provider == "apns" ? token.lowercased() : token
                optional("pushProvider", provider)
                optional("pushToken", provider == "apns" ? randomCase(token, &draw) : token)
            case 2:
                let bytes = draw.list(draw.chance(0.9) ? 32...32 : 32...100) { UInt8($0.int(0...255)) }
                let hex = bytes.map { String(format: "%02x", $0) }.joined()
                stored.provider = "apns"
                stored.token = hex
                optional("pushProvider", "apns")
                optional("pushToken", randomCase(hex, &draw))
            default:
                let token = String(draw.list(draw.chance(0.05) ? 1000...InstallationRegistration.maxFCMTokenLength : 1...300) { $0.pick(fcmAlphabet) })
                stored.provider = "fcm"
                stored.token = token
                optional("pushProvider", "fcm")
                optional("pushToken", token)
            }
            // APNs reaches iOS devices only: any other platform with an APNs token is refused (broken below).
            if stored.provider == "apns" {
                stored.platform = Platform.ios.rawValue
                members[0] = ("platform", .string(stored.platform))
            }
            if draw.chance(0.8) {
                let version = draw.chance(0.6) ? "2.\(draw.int(0...9)).\(draw.int(0...99))" : GeneratedText.valid(&draw, maxPieces: 3, maxCharacters: 20)
                stored.appVersion = version.utf8.count <= InstallationRegistration.maxAppVersionBytes ? version : "2.4.0"
            }
            optional("appVersion", stored.appVersion)
            if draw.chance(0.8) {
                let (written, canonical) = draw.pick(languages)
                stored.language = canonical
                optional("language", written)
            } else {
                optional("language", nil)
            }
            if draw.chance(0.8) {
                let written = String((0..<2).map { _ in draw.pick(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")) })
                stored.country = written.uppercased()
                optional("country", written)
            } else {
                optional("country", nil)
            }
            stored.timeZone = draw.chance(0.8) ? draw.pick(zones) : nil
            optional("timeZone", stored.timeZone)
            var shuffled: [(key: String, value: JSONValue)] = []
            for member in members { shuffled.insert(member, at: draw.int(0...shuffled.count)) }
            var valid = Case(id: draw.pick(ids), body: Array(JSONValue.object(shuffled).text.utf8), stored: stored)
            return draw.chance(0.6) ? valid : broken(valid: &valid, members: shuffled, &draw)
        }
    }

    /// `valid` broken in one documented way.
    static func broken(valid: inout Case, members: [(key: String, value: JSONValue)], _ draw: inout Draw) -> Case {
        var members = members
        func set(_ key: String, _ value: JSONValue?) {
            members.removeAll { $0.key == key }
            if let value { members.insert((key, value), at: draw.int(0...members.count)) }
        }
        func refused(_ status: Int, _ field: String?) -> Case {
            Case(id: valid.id, body: Array(JSONValue.object(members).text.utf8), contentType: valid.contentType, refusal: status, field: field)
        }
        switch draw.int(0...15) {
        case 0:
            let key = draw.pick(["pushTokn", "platfrom", "aps", "herald_campaign_id", "push_token", "Platform", ""])
            set(key, draw.pick([.string("x"), .number(1), .object([("alert", .string("hi"))]), .null]))
            return refused(422, key)
        case 1:
            set("platform", draw.pick([.string("windows"), .string("iOS"), .string(""), .number(1), .null, nil]))
            return refused(400, "platform")
        case 2:
            set("notificationsAllowed", draw.pick([.string("true"), .number(1), .number(0), .null, nil]))
            return refused(400, "notificationsAllowed")
        case 3:
            set("pushProvider", draw.chance(0.5) ? nil : .null)
            set("pushToken", .string("abcd"))
            return refused(422, "pushProvider")
        case 4:
            set("pushProvider", .string(draw.pick(["apns", "fcm"])))
            set("pushToken", draw.chance(0.5) ? nil : .null)
            return refused(422, "pushToken")
        case 5:
            set("pushProvider", .string("apns"))
            set("pushToken", .string(draw.pick([
                "abc", "xyz0", "ab cd", "0x" + String(repeating: "ab", count: 32), String(repeating: "ab", count: 31), String(repeating: "ab", count: 101),
                String(repeating: "ab", count: 32) + "a", String(repeating: "ab", count: 2049),
            ])))
            return refused(422, "pushToken")
        case 6:
            set("pushProvider", .string("fcm"))
            let inside = String(draw.list(0...40) { $0.pick(fcmAlphabet) })
            set("pushToken", .string(draw.pick([
                "", "has space", "tök", "tab\there", String(repeating: "f", count: InstallationRegistration.maxFCMTokenLength + 1),
                inside + String(draw.pick(outsideFCMAlphabet)) + inside,
            ])))
            return refused(422, "pushToken")
        case 7:
            set("pushProvider", .string(draw.pick(["webpush", "APNS", "gcm"])))
            set("pushToken", .string("abcd"))
            return refused(400, "pushProvider")
        case 8:
            set("appVersion", .string(draw.pick(["", GeneratedText.withControl(&draw), String(repeating: "é", count: 33), "2.4\n"])))
            return refused(422, "appVersion")
        case 9:
            set("language", .string(draw.pick(["english", "en_US", "e", "pt-BRA", "fa-", "١٢", "zh-Hant-TW-x"])))
            return refused(422, "language")
        case 10:
            set("country", .string(draw.pick(["USA", "u", "١٢", "U1", " US", ""])))
            return refused(422, "country")
        case 11:
            set("timeZone", .string(draw.pick(["Mars/Olympus_Mons", "", "Asia/Tehran ", String(repeating: "A", count: 65), "../etc/passwd"])))
            return refused(422, "timeZone")
        case 12:
            let key = draw.pick(["appVersion", "language", "country", "timeZone", "pushToken"])
            set(key, draw.pick([.number(2), .bool(true), .array([.string("x")])]))
            return refused(400, key)
        case 13:
            let text = JSONValue.object(members).text
            let body = draw.pick([String(text.dropLast()), text + "x", "[" + text + "]", "null", text.replacingOccurrences(of: "}", with: ",}")])
            return Case(id: valid.id, body: Array(body.utf8), refusal: 400)
        case 14:
            set("platform", .string(draw.pick([Platform.android, .web]).rawValue))
            set("pushProvider", .string("apns"))
            set("pushToken", .string(String(repeating: "ab", count: 32)))
            return refused(422, "pushProvider")
        default:
            if draw.chance(0.5) {
                var refusedCase = refused(415, nil)
                refusedCase.contentType = draw.pick(["text/plain", "application/x-www-form-urlencoded", "application/jsonx"])
                return refusedCase
            }
            var refusedCase = refused(422, "installationId")
            refusedCase.id = draw.pick(["iid\u{1}", "iid\n", String(repeating: "i", count: 201), "\u{7F}"])
            return refusedCase
        }
    }

    static func encoded(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? id
    }

    static func stored(_ installation: Installation?) -> Stored? {
        installation.map {
            Stored(platform: $0.platform.rawValue, provider: $0.pushToken == nil ? nil : $0.pushProvider?.rawValue, token: $0.pushToken,
                   appVersion: $0.appVersion, language: $0.language, country: $0.country, timeZone: $0.timeZone, notificationsAllowed: $0.notificationsAllowed)
        }
    }

    static func stored(_ answer: JSONValue) -> Stored? {
        guard case .string(let platform)? = answer["platform"], case .bool(let allowed)? = answer["notificationsAllowed"] else { return nil }
        func text(_ key: String) -> String? { if case .string(let value)? = answer[key] { value } else { nil } }
        let token = text("pushToken")
        return Stored(platform: platform, provider: token == nil ? nil : text("pushProvider"), token: token, appVersion: text("appVersion"),
                      language: text("language"), country: text("country"), timeZone: text("timeZone"), notificationsAllowed: allowed)
    }

    @Test("Any registration is stored as documented and answered as stored, or refused with its status and field, changing nothing")
    func registrations() async throws {
        let fixture = try await GeneratedFixture.make()
        let store = fixture.app.database.installations
        var model: [String: Stored] = [:]
        var run = GeneratedRun("installation registrations", cases: 300)
        run.run(Self.generator()) { request, run in
            let before = try store.installation(appID: fixture.shop, id: request.id)
            let response = fixture.api("PUT", "/api/v1/installations/\(Self.encoded(request.id))", body: request.body, contentType: request.contentType)
            guard let expected = request.stored else {
                run.expect(response.status == request.refusal, "answered \(response.status): \(response.text)", input: request)
                if let field = request.field {
                    let fields = (try? JSONValue.parse(response.body))?["error"]?["fields"]?.array ?? []
                    run.expect(fields.contains { $0["path"]?.string == field }, "does not name \(field): \(response.text)", input: request)
                }
                run.expect(try store.installation(appID: fixture.shop, id: request.id) == before, "a refused registration changed the row", input: request)
                run.note("\(response.status)")
                return
            }
            let known = model[request.id] != nil
            run.expect(response.status == (known ? 200 : 201), "answered \(response.status): \(response.text)", input: request)
            let answer = Self.stored(try JSONValue.parse(response.body))
            run.expect(answer == expected, "answered \(answer.map(String.init(describing:)) ?? response.text), not \(expected)", input: request)
            let row = Self.stored(try store.installation(appID: fixture.shop, id: request.id))
            run.expect(row == expected, "stored \(row.map(String.init(describing:)) ?? "nothing"), not \(expected)", input: request)
            // A token another installation held is taken from it.
            if let token = expected.token {
                for (id, other) in model where id != request.id && other.token == token && other.provider == expected.provider {
                    model[id]?.token = nil
                    model[id]?.provider = nil
                    run.note("token taken over")
                }
            }
            model[request.id] = expected
            run.note(known ? "200" : "201")
        }
        // Then every installation says what its last registration said, and a token belongs to one of them
        for (id, expected) in model {
            let row = Self.stored(try store.installation(appID: fixture.shop, id: id))
            #expect(row == expected, "\(id): stored \(row.map(String.init(describing:)) ?? "nothing"), not \(expected)")
        }
        for provider in PushProvider.allCases {
            let holders = try store.withTokens(appID: fixture.shop, provider: provider, pageSize: Installation.maxPageSize).installations
            #expect(Set(holders.map(\.installationID)) == Set(model.filter { $0.value.provider == provider.rawValue }.keys), "\(provider)")
            #expect(Set(holders.compactMap(\.pushToken)).count == holders.count, "a token held twice")
        }
        #expect(try store.counts(appID: fixture.shop).installations == model.count)
    }

    /// A token drawn near the bounds: mostly from one provider's alphabet, sometimes with a character outside it.
    struct TokenCase: CustomStringConvertible {
        var provider: PushProvider
        var token: String
        var description: String { "\(provider) \(token.utf8.count) characters: \(token.prefix(60))…" }
    }

    @Test("A token passes exactly when it is what its provider issues: APNs an even 64 to 200 hex digits, FCM 1 to 1024 of A-Za-z0-9_:-")
    func tokenBounds() {
        let hex = Array("0123456789abcdefABCDEF"), fcmAlphabet = Self.fcmAlphabet
        let outside = Self.outsideFCMAlphabet + ["é", " ", "\u{0}", "\t", "٣"]
        let generator = Generated.cases { draw -> TokenCase in
            let provider = draw.pick(PushProvider.allCases)
            let length = draw.chance(0.5) ? draw.pick([0, 1, 62, 63, 64, 65, 199, 200, 201, 202, 1023, 1024, 1025]) : draw.int(0...1200)
            let alphabet = provider == .apns && draw.chance(0.7) ? hex : fcmAlphabet
            var characters = (0..<length).map { _ in draw.pick(alphabet) }
            if !characters.isEmpty, draw.chance(0.2) { characters[draw.int(0...characters.count - 1)] = draw.pick(outside) }
            return TokenCase(provider: provider, token: String(characters))
        }
        var run = GeneratedRun("push token bounds", cases: 2000)
        run.run(generator) { tokenCase, run in
            let characters = Array(tokenCase.token)
            let issued: Bool = switch tokenCase.provider {
            case .apns: (64...200).contains(characters.count) && characters.count.isMultiple(of: 2) && characters.allSatisfy(hex.contains)
            case .fcm: (1...1024).contains(characters.count) && characters.allSatisfy(fcmAlphabet.contains)
            }
            let problem = InstallationRegistration.tokenProblem(tokenCase.token, provider: tokenCase.provider)
            run.expect((problem == nil) == issued, issued ? "refused: \(problem ?? "")" : "taken", input: tokenCase)
            if let problem { run.expect(problem.contains("`pushToken`"), "does not name the field: \(problem)", input: tokenCase) }
            run.note(issued ? "taken" : "refused")
        }
    }
}
