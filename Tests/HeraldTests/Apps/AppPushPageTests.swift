import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import PushMock
import Testing

@testable import HeraldConsole

/// The app page's push set-up: what an admin sets there is what `herald app push` sets, checked the same
/// way, and a stored secret never comes back into a page.
@Suite("Push set-up on the app page")
struct AppPushPageTests {
    static func withShop() async throws -> (TestApp, TestBrowser, App, MockCredentials) {
        let (app, admin, shop) = try await WebOriginTests.withShop()
        return (app, admin, shop, try MockCredentials.generate(tokenURI: "https://oauth2.example.test/token"))
    }

    @Test("APNs: a real key is checked and stored sealed; the page then shows its ids, never the key; a bad key is refused at its field with nothing stored")
    func apns() async throws {
        let (app, admin, shop, credentials) = try await Self.withShop()
        let page = "/apps/\(shop.id)"
        #expect(admin.get(page).text.contains("Not set up: iOS devices get no push campaigns from this app."))

        // A key that is not one: 422 at the key's field, the typed ids kept, nothing stored
        let refused = try admin.submit("\(page)/push/apns", from: page, [
            "apnsKey": "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----", "apnsKeyID": credentials.apnsKeyID,
            "apnsTeamID": credentials.apnsTeamID, "apnsTopic": "com.example.shop",
        ])
        #expect(refused.status == 422)
        #expect(refused.text.contains(#"<p class="field-error" id="field-apnsKey-error">This is not an APNs key"#))
        #expect(refused.text.contains(#"value="\#(credentials.apnsKeyID)""#))
        #expect(try app.application.services.push.editor.setup(appID: shop.id).hasAPNs == false)

        // A key id that is not 10 letters and digits is refused at its own field
        let badID = try admin.submit("\(page)/push/apns", from: page, [
            "apnsKey": credentials.apnsKeyPEM, "apnsKeyID": "ABC", "apnsTeamID": credentials.apnsTeamID, "apnsTopic": "com.example.shop",
        ])
        #expect(badID.status == 422)
        #expect(badID.text.contains(#"id="field-apnsKeyID-error""#))

        // The real key is stored, and the page shows what it is without the key itself
        let saved = try admin.submit("\(page)/push/apns", from: page, [
            "apnsKey": credentials.apnsKeyPEM, "apnsKeyID": credentials.apnsKeyID, "apnsTeamID": credentials.apnsTeamID,
            "apnsTopic": " com.example.shop ", "apnsURL": "",
        ])
        #expect(saved.status == 303)
        #expect(saved.headers["Location"] == "\(page)#push")
        let setup = try app.application.services.push.editor.setup(appID: shop.id)
        #expect(setup.apnsKeyID == credentials.apnsKeyID && setup.apnsTeamID == credentials.apnsTeamID && setup.apnsTopic == "com.example.shop")
        let shown = admin.get(page).text
        #expect(shown.contains("APNs is set up for \u{2068}Shop\u{2069}."))
        #expect(shown.contains("<code>\(credentials.apnsKeyID)</code>") && shown.contains("https://api.push.apple.com"))
        #expect(!shown.contains(Self.keyBody(credentials.apnsKeyPEM)))
        #expect(admin.get("/audit").text.contains("APNs key set"), "the audit log names the action in words")
        // Sealed in the database: the key's text is nowhere in the file
        let stored = try Data(contentsOf: app.folder.url.appendingPathComponent("herald.sqlite"))
        #expect(stored.range(of: Data(Self.keyBody(credentials.apnsKeyPEM).utf8)) == nil)
    }

    /// The key's first base64 line: what would show if the key leaked into a page or the file.
    static func keyBody(_ pem: String) -> String {
        pem.split(separator: "\n").first { !$0.hasPrefix("-----") }.map(String.init) ?? pem
    }

    @Test("FCM: the service-account file is checked and stored; the page shows its project and account, never the private key")
    func fcm() async throws {
        let (app, admin, shop, credentials) = try await Self.withShop()
        let page = "/apps/\(shop.id)"
        let refused = try admin.submit("\(page)/push/fcm", from: page, ["fcmServiceAccount": #"{"type": "authorized_user"}"#])
        #expect(refused.status == 422)
        #expect(refused.text.contains(#"id="field-fcmServiceAccount-error">This is not a service-account key"#))
        #expect(!refused.text.contains("authorized_user"), "what was pasted into the secret's field is not sent back")
        #expect(refused.text.contains("For your safety the key you gave was not kept: paste it or pick the file again."))

        let saved = try admin.submit("\(page)/push/fcm", from: page, [
            "fcmServiceAccount": String(decoding: credentials.fcmServiceAccountJSON, as: UTF8.self), "fcmURL": "https://fcm.example.test",
        ])
        #expect(saved.status == 303)
        let shown = admin.get(page).text
        #expect(shown.contains(credentials.fcmProjectID) && shown.contains(credentials.fcmClientEmail) && shown.contains("https://fcm.example.test"))
        let account = try #require(try JSONSerialization.jsonObject(with: credentials.fcmServiceAccountJSON) as? [String: String])
        #expect(!shown.contains(Self.keyBody(account["private_key"] ?? "")) && !shown.contains("private_key"))
        #expect(try app.application.services.push.editor.setup(appID: shop.id).fcmURL == "https://fcm.example.test")
    }

    @Test("A refused form never sends a key back: the other fields are kept, and the key's field says to give it again")
    func secretsAreNotSentBack() async throws {
        let (app, admin, shop, credentials) = try await Self.withShop()
        let page = "/apps/\(shop.id)"
        let apns = try admin.submit("\(page)/push/apns", from: page, [
            "apnsKey": credentials.apnsKeyPEM, "apnsKeyID": "ABC", "apnsTeamID": credentials.apnsTeamID, "apnsTopic": "com.example.shop",
        ])
        #expect(apns.status == 422)
        #expect(!apns.text.contains(Self.keyBody(credentials.apnsKeyPEM)), "the .p8 key is not in the page")
        #expect(apns.text.contains(#"value="\#(credentials.apnsTeamID)""#) && apns.text.contains(#"value="com.example.shop""#))
        #expect(apns.text.contains(#"<p class="hint" id="field-apnsKey-hint">For your safety the key you gave was not kept: paste it or pick the file again.</p>"#))
        #expect(apns.text.contains(#"class="secret-text" aria-describedby="field-apnsKey-hint"></textarea>"#), "the key's field is empty")

        let account = String(decoding: credentials.fcmServiceAccountJSON, as: UTF8.self)
        let fcm = try admin.submit("\(page)/push/fcm", from: page, ["fcmServiceAccount": account, "fcmURL": "http://fcm.example.com"])
        #expect(fcm.status == 422)
        #expect(fcm.text.contains(#"id="field-fcmURL-error""#))
        let privateKey = try #require(try JSONSerialization.jsonObject(with: credentials.fcmServiceAccountJSON) as? [String: String])["private_key"] ?? ""
        #expect(!fcm.text.contains(Self.keyBody(privateKey)) && !fcm.text.contains("private_key"), "the service account is not in the page")
        #expect(fcm.text.contains(#"value="http://fcm.example.com""#), "the address is kept")
        #expect(fcm.text.contains(#"<p class="hint" id="field-fcmServiceAccount-hint">For your safety the key you gave was not kept"#))
        let setup = try app.application.services.push.editor.setup(appID: shop.id)
        #expect(!setup.hasAPNs && !setup.hasFCM, "nothing stored")
    }

    @Test("The APNs form reports all its mistakes at once, each at its field; a key on another curve is named")
    func apnsMistakesAtOnce() async throws {
        let (app, admin, shop, _) = try await Self.withShop()
        let page = "/apps/\(shop.id)"
        let refused = try admin.submit("\(page)/push/apns", from: page, [
            "apnsKey": OpenSSLKeys.secp256k1, "apnsKeyID": "ABC", "apnsTeamID": "team", "apnsTopic": "", "apnsURL": "ftp://apns.example.com",
        ])
        #expect(refused.status == 422)
        for field in ["apnsKey", "apnsKeyID", "apnsTeamID", "apnsTopic", "apnsURL"] {
            #expect(refused.text.contains(#"<p class="field-error" id="field-\#(field)-error">"#), "\(field) has its error")
        }
        #expect(refused.text.contains("This key is \u{2068}secp256k1 (1.3.132.0.10)\u{2069}, not P-256: APNs keys are always P-256."))
        #expect(try app.application.services.push.editor.setup(appID: shop.id).hasAPNs == false)

        let german = try admin.submit("/account", from: "/account", ["language": "de", "time_zone": "UTC"])
        #expect(german.status == 303)
        let inGerman = try admin.submit("\(page)/push/apns", from: page, ["apnsKey": OpenSSLKeys.brainpoolP256r1, "apnsKeyID": "ABC"])
        #expect(inGerman.text.contains("Dieser Schlüssel ist \u{2068}brainpoolP256r1 (1.3.36.3.3.2.8.1.1.7)\u{2069}, nicht P-256"))
    }

    @Test("Sending settings: empty is no cap, a whole number from 1 to 100 a cap, anything else refused with the typed value kept", arguments: [
        ("0", false), ("101", false), ("abc", false), ("1e2", false), ("-5", false), ("99999999999999999999", false), ("٥", false),
        ("", true), (" 7 ", true), ("100", true),
    ])
    func settings(typed: String, accepted: Bool) async throws {
        let (app, admin, shop, _) = try await Self.withShop()
        let page = "/apps/\(shop.id)"
        let answer = try admin.submit("\(page)/push/settings", from: page, ["pushDailyCap": typed, "refreshOnChange": "on", "refreshMinutes": "20"])
        let stored = try app.database.apps.pushSettings(appID: shop.id)
        if accepted {
            #expect(answer.status == 303)
            let trimmed = typed.trimmingCharacters(in: .whitespaces)
            #expect(stored == AppPushSettings(dailyCap: trimmed.isEmpty ? nil : Int(trimmed), refreshOnChange: true))
            #expect(admin.get(page).text.contains(#"value="on" checked"#))
        } else {
            #expect(answer.status == 422)
            #expect(answer.text.contains(#"id="field-pushDailyCap-error">Leave it empty for no cap, or enter a whole number from 1 to 100."#))
            #expect(answer.text.contains(#"value="\#(typed)""#) || typed.contains("٥"))
            #expect(stored == AppPushSettings(), "nothing half-saved: not even the checkbox")
        }
    }

    @Test("Silent refreshes at most every N minutes: 1 to 1440 whole minutes, shown and stored; both fields' mistakes reported at once, nothing half-saved", arguments: [
        ("0", false), ("1441", false), ("", false), ("ten", false), ("1.5", false), ("٥", false), ("99999999999999999999", false),
        ("1", true), (" 45 ", true), ("1440", true),
    ])
    func refreshSpacing(typed: String, accepted: Bool) async throws {
        let (app, admin, shop, _) = try await Self.withShop()
        let page = "/apps/\(shop.id)"
        #expect(admin.get(page).text.contains(#"name="refreshMinutes" type="number" value="20""#), "the default, 20 minutes")
        let answer = try admin.submit("\(page)/push/settings", from: page, ["pushDailyCap": accepted ? "" : "0", "refreshOnChange": "on", "refreshMinutes": typed])
        let stored = try app.database.apps.pushSettings(appID: shop.id)
        if accepted {
            #expect(answer.status == 303)
            #expect(stored == AppPushSettings(refreshOnChange: true, refreshMinutes: Int(typed.trimmingCharacters(in: .whitespaces)) ?? 0))
        } else {
            #expect(answer.status == 422)
            #expect(answer.text.contains(#"id="field-refreshMinutes-error">Enter whole minutes from 1 to 1,440."#))
            #expect(answer.text.contains(#"id="field-pushDailyCap-error""#), "the cap's mistake too, at once")
            #expect(stored == AppPushSettings(), "nothing half-saved")
        }
    }

    @Test("Removing a provider asks first, then removes it; nothing to remove is a 404; only admins, and only with the form's token")
    func remove() async throws {
        let (app, admin, shop, credentials) = try await Self.withShop()
        let page = "/apps/\(shop.id)"
        #expect(admin.get("\(page)/push/apns/remove").status == 404, "not set up: nothing to remove")
        #expect(admin.get("\(page)/push/gcm/remove").status == 404)
        try app.application.services.push.editor.setAPNs(
            appID: shop.id, keyPEM: credentials.apnsKeyPEM, keyID: credentials.apnsKeyID, teamID: credentials.apnsTeamID,
            topic: "com.example.shop", url: nil, actor: .commandLine, now: app.clock.now)

        let confirm = admin.get("\(page)/push/apns/remove")
        #expect(confirm.status == 200)
        #expect(confirm.text.contains("Remove APNs from \u{2068}Shop\u{2069}?"))
        #expect(confirm.text.contains(#"action="\#(page)/push/apns/remove""#))
        #expect(try app.application.services.push.editor.setup(appID: shop.id).hasAPNs, "asking removes nothing")

        #expect(admin.post("\(page)/push/apns/remove", []).status == 403, "without the form's token")
        try app.createUser(email: "editor@example.com", role: .editor)
        let editor = app.browser(address: "10.0.0.2")
        _ = try editor.submit("/login", from: "/login", ["email": "editor@example.com", "password": "correct horse battery"])
        #expect(editor.get("\(page)/push/apns/remove").status == 403)

        let removed = try admin.submit("\(page)/push/apns/remove", from: "\(page)/push/apns/remove", [:])
        #expect(removed.status == 303)
        #expect(try app.application.services.push.editor.setup(appID: shop.id).hasAPNs == false)
        #expect(admin.get(page).text.contains("APNs removed from \u{2068}Shop\u{2069}."))
    }
}
