import Foundation
import HeraldDomain
import Testing

@Suite struct PushPayloadTests {
    let notification = PushNotification(
        title: "Sale \"today\"", subtitle: "Shoes", body: "50% off\nall day", imageUrl: "https://cdn.example.com/a.png", badge: 3,
        sound: "default", category: "OFFER", threadId: "sales", url: "myapp://sale")
    let data = CustomData([.init(key: "z", value: "last"), .init(key: "a", value: "first")])

    @Test func apnsPayloadIsTheAlertThenHeraldsKeysThenTheDataInOrder() throws {
        let bytes = PushPayload.apns(notification, campaignID: 42, data: data)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"aps":{"alert":{"title":"Sale \"today\"","subtitle":"Shoes","body":"50% off\nall day"},"badge":3,"sound":"default","category":"OFFER","thread-id":"sales","mutable-content":1},"herald_campaign_id":42,"herald_url":"myapp://sale","herald_image_url":"https://cdn.example.com/a.png","z":"last","a":"first"}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["herald_campaign_id"] as? Int == 42)
    }

    @Test func silentPayloadsCarryContentAvailableAndNoAlert() {
        let silent = PushNotification(silent: true)
        #expect(String(decoding: PushPayload.apns(silent, campaignID: 7, data: CustomData()), as: UTF8.self)
            == #"{"aps":{"content-available":1},"herald_campaign_id":7}"#)
        #expect(String(decoding: PushPayload.fcm(silent, campaignID: 7, data: CustomData(), token: "t", platform: .android), as: UTF8.self)
            == #"{"message":{"token":"t","data":{"herald_campaign_id":"7"},"android":{"priority":"normal"}}}"#)
        // To an iPhone through FCM: the background push APNs wakes the app with, at priority 5.
        #expect(String(decoding: PushPayload.fcm(silent, campaignID: 7, data: CustomData(), token: "t", platform: .ios), as: UTF8.self)
            == #"{"message":{"token":"t","data":{"herald_campaign_id":"7"},"apns":{"headers":{"apns-push-type":"background","apns-priority":"5","apns-collapse-id":"herald-7"},"payload":{"aps":{"content-available":1}}}}}"#)
        #expect(String(decoding: PushPayload.feedRefresh(provider: .fcm, token: "t", platform: .ios), as: UTF8.self)
            == #"{"message":{"token":"t","data":{"herald_refresh":"1"},"apns":{"headers":{"apns-push-type":"background","apns-priority":"5","apns-collapse-id":"herald-refresh"},"payload":{"aps":{"content-available":1}}}}}"#)
        #expect(String(decoding: PushPayload.feedRefresh(provider: .fcm, token: "t", platform: .web), as: UTF8.self)
            == #"{"message":{"token":"t","data":{"herald_refresh":"1"},"android":{"priority":"normal"}}}"#)
    }

    @Test func fcmBodyForAnIPhoneCarriesTheAPNsOverrideWithEveryAlertField() throws {
        let bytes = PushPayload.fcm(notification, campaignID: 42, data: data, token: "tok", platform: .ios)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"message":{"token":"tok","data":{"herald_campaign_id":"42","herald_url":"myapp://sale","herald_image_url":"https://cdn.example.com/a.png","z":"last","a":"first"},"apns":{"headers":{"apns-push-type":"alert","apns-priority":"10","apns-collapse-id":"herald-42"},"payload":{"aps":{"alert":{"title":"Sale \"today\"","subtitle":"Shoes","body":"50% off\nall day"},"badge":3,"sound":"default","category":"OFFER","thread-id":"sales","mutable-content":1}},"fcm_options":{"image":"https://cdn.example.com/a.png"}}}}"#)
        // The same aps as sent to APNs directly.
        let apns = try #require(try JSONSerialization.jsonObject(with: Data(PushPayload.apns(notification, campaignID: 42, data: data))) as? [String: Any])
        let message = try #require((try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?["message"] as? [String: Any])
        let payload = try #require((message["apns"] as? [String: Any])?["payload"] as? [String: Any])
        #expect(NSDictionary(dictionary: payload["aps"] as? [String: Any] ?? [:]).isEqual(to: apns["aps"] as? [String: Any] ?? ["": 0]))
        #expect(message["android"] == nil && message["notification"] == nil)
        // The size FCM counts is the larger shape's, without the token.
        let sizes = Platform.allCases.map { PushPayload.fcmSize(notification, campaignID: 42, data: data, platform: $0) }
        #expect(PushPayload.size(notification, campaignID: 42, data: data, provider: .fcm) == sizes.max())
        #expect(sizes[0] == bytes.count - #""token":"tok","#.utf8.count)
    }

    @Test func fcmBodyHasTheTokenTheNotificationAndStringData() throws {
        let bytes = PushPayload.fcm(notification, campaignID: 42, data: data, token: "tok", platform: .android)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let message = try #require(object["message"] as? [String: Any])
        #expect(message["token"] as? String == "tok")
        #expect((message["notification"] as? [String: String])?["image"] == "https://cdn.example.com/a.png")
        #expect((message["data"] as? [String: String]) == [
            "herald_campaign_id": "42", "herald_subtitle": "Shoes", "herald_url": "myapp://sale", "z": "last", "a": "first",
        ])
        let android = try #require(message["android"] as? [String: Any])
        #expect((android["notification"] as? [String: Any])?["click_action"] as? String == "OFFER")
        // The size FCM counts leaves the token out.
        #expect(PushPayload.fcmSize(notification, campaignID: 42, data: data, platform: .android)
            == PushPayload.fcm(notification, campaignID: 42, data: data, token: "", platform: .android).count - #""token":"","#.utf8.count)
    }

    @Test func textIsCountedInUTF8Bytes() {
        let base = PushPayload.size(PushNotification(body: ""), campaignID: 1, data: CustomData(), provider: .apns)
        #expect(PushPayload.size(PushNotification(body: "سلام"), campaignID: 1, data: CustomData(), provider: .apns) == base + 8)
        #expect(PushPayload.size(PushNotification(body: "こんにちは"), campaignID: 1, data: CustomData(), provider: .apns) == base + 15)
        // A control character is escaped as six bytes, a quote as two.
        #expect(PushPayload.size(PushNotification(body: "\u{1}\""), campaignID: 1, data: CustomData(), provider: .apns) == base + 8)
    }

    /// A push campaign whose APNs payload is exactly `bytes` long, filled with Persian (2 bytes a letter)
    /// and one ASCII letter to reach an odd length.
    func campaign(apnsBytes bytes: Int) -> Campaign {
        var push = PushNotification(title: "تخفیف", body: "")
        var campaign = Campaign(id: 9, app: 1, name: "Sale", push: push)
        let base = campaign.payloadSizes().first { $0.provider == .apns }!.bytes
        let missing = bytes - base
        push.body = String(repeating: "ب", count: missing / 2) + (missing % 2 == 1 ? "b" : "")
        campaign.push = push
        return campaign
    }

    @Test func apnsLimitIsAByteLimit() {
        let fits = campaign(apnsBytes: 4096)
        #expect(fits.payloadSizes().first { $0.provider == .apns }?.bytes == 4096)
        #expect(!fits.problems(for: .publish).contains { $0.key == "push_payload_too_large" && $0.message.contains("APNs") })
        let over = campaign(apnsBytes: 4097)
        let problem = over.problems(for: .publish).first { $0.key == "push_payload_too_large" && $0.message.contains("APNs") }
        #expect(problem?.path == "push.body")
        #expect(problem?.message.contains("4097") == true)
    }

    @Test func aVersionOverTheLimitIsReportedAtTheVersion() {
        var campaign = Campaign(id: 9, app: 1, name: "Sale", push: PushNotification(title: "Hi", body: "Short"))
        campaign.push?.translations = ["ja": PushTranslation(body: String(repeating: "あ", count: 1400))]
        let paths = campaign.problems(for: .publish).filter { $0.key == "push_payload_too_large" }.map(\.path)
        #expect(paths == ["push.translations.ja.body", "push.translations.ja.body"])
    }

    @Test func pushRules() {
        var campaign = Campaign(app: 1, name: "Sale", push: PushNotification())
        #expect(campaign.problems(for: .draft).isEmpty)
        #expect(campaign.problems(for: .publish).map(\.key) == ["push_text_required"])
        campaign.push = PushNotification(title: "Hi", badge: 100_000, sound: String(repeating: "s", count: 65), silent: true)
        campaign.triggers = [Trigger(event: "app_launch")]
        campaign.data = CustomData([.init(key: "aps", value: "x"), .init(key: "herald_url", value: "x"), .init(key: "google.x", value: "x"), .init(key: "ok", value: "x")])
        let keys = campaign.problems(for: .publish).map(\.key)
        #expect(keys.contains("push_triggers"))
        #expect(keys.contains("push_badge_range"))
        #expect(keys.contains("push_name_too_long"))
        #expect(keys.contains("push_silent_shows_nothing"))
        #expect(keys.filter { $0 == "push_data_key_reserved" }.count == 3)
        campaign = Campaign(app: 1, name: "Sale", push: PushNotification(title: "Hi", imageUrl: "http://x", url: "javascript:alert(1)", inDeviceTimeZone: true))
        let problems = campaign.problems(for: .publish)
        #expect(problems.map(\.path) == ["push.imageUrl", "push.url", "schedule.start"])
    }

    @Test func versionsFallBackToTheDefault() {
        let push = PushNotification(title: "Hello", body: "Default", url: "myapp://x", translations: ["fa": PushTranslation(body: "سلام")])
        let version = push.version(for: "fa-IR")
        #expect(version.tag == "fa")
        #expect(version.notification.title == "Hello")
        #expect(version.notification.body == "سلام")
        #expect(push.version(for: "de").tag == nil)
    }

    @Test func pushCampaignJSONRoundTripsWithoutAMessage() throws {
        let campaign = Campaign(app: 1, name: "Sale", push: PushNotification(title: "Hi", translations: ["de": PushTranslation(title: "Hallo")]))
        let json = try CampaignJSON.encoder().encode(campaign)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""channel":"push""#))
        #expect(!text.contains(#""message""#))
        let decoded = try CampaignJSON.decoder(refusingUnknownKeys: true).decode(Campaign.self, from: json)
        #expect(decoded == campaign)
        // In-app campaigns still need their message.
        #expect(throws: DecodingError.self) {
            try CampaignJSON.decoder().decode(Campaign.self, from: Data(#"{"app":1,"name":"x","channel":"in_app"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try CampaignJSON.decoder().decode(Campaign.self, from: Data(#"{"app":1,"name":"x","channel":"push"}"#.utf8))
        }
    }
}
