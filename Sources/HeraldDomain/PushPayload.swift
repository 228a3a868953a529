/// The bytes a provider is sent for one version of a push campaign, written by hand so that custom
/// data keeps the marketer's order and the size counted when the campaign is saved is the size sent.
///
/// Text is written as UTF-8, not `\u` escapes: a Persian letter costs 2 bytes, a Japanese one 3,
/// exactly as the providers count them.
public enum PushPayload {
    /// The key devices read the campaign's id from (`DeliveryClient.pushCampaignID(in:)`).
    public static let campaignIDKey = "herald_campaign_id"
    /// The keys Herald writes beside the custom data; a campaign's data may not use them.
    public static let reservedKeyPrefix = "herald_"
    /// Keys the providers keep for themselves: APNs's `aps`, and FCM's data keys it refuses.
    public static let providerReservedKeys: Set<String> = ["aps", "from", "notification", "message_type", "collapse_key"]
    public static let providerReservedPrefixes = ["google.", "gcm."]
    /// The widest campaign id (2^53 − 1): a campaign not yet saved is measured with it, so its size is
    /// never under what it will be.
    public static let widestCampaignID: Int64 = (1 << 53) - 1

    /// The APNs payload: an alert (or content-available for a silent notification), then Herald's keys,
    /// then the custom data in order.
    public static func apns(_ notification: PushNotification, campaignID: Int64, data: CustomData) -> [UInt8] {
        var json = JSONWriter()
        json.open()
        json.key("aps")
        aps(notification, into: &json)
        json.member(campaignIDKey, campaignID)
        json.member("herald_url", notification.url)
        json.member("herald_image_url", notification.imageUrl)
        for pair in data.pairs { json.member(pair.key, pair.value) }
        json.close()
        return json.bytes
    }

    /// APNs's `aps` dictionary: content-available alone for a silent notification, else the alert and
    /// how it is shown. The same whether Herald sends it to APNs or FCM forwards it.
    private static func aps(_ notification: PushNotification, into json: inout JSONWriter) {
        json.open()
        if notification.silent {
            json.member("content-available", 1)
        } else {
            json.key("alert")
            json.open()
            json.member("title", notification.title)
            json.member("subtitle", notification.subtitle)
            json.member("body", notification.body)
            json.close()
            json.member("badge", notification.badge)
            json.member("sound", notification.sound)
            json.member("category", notification.category)
            json.member("thread-id", notification.threadId)
            // Lets the app's notification service extension fetch the image before it is shown.
            if notification.imageUrl != nil { json.member("mutable-content", 1) }
        }
        json.close()
    }

    /// The FCM HTTP v1 request body for `token`, shaped for the device's platform. Data values are
    /// strings, as FCM takes them only. An Android (or web) device gets the notification and FCM's
    /// `android` options; an iOS device registered with an FCM token gets the `apns` override FCM passes
    /// to APNs (its headers, and the same `aps` Herald sends APNs itself), without which its category,
    /// badge, sound, subtitle and thread are lost and a silent push does not wake the app.
    public static func fcm(_ notification: PushNotification, campaignID: Int64, data: CustomData, token: String, platform: Platform) -> [UInt8] {
        let apple = platform == .ios
        var json = JSONWriter()
        json.open()
        json.key("message")
        json.open()
        json.member("token", token)
        if !notification.silent && !apple {
            json.key("notification")
            json.open()
            json.member("title", notification.title)
            json.member("body", notification.body)
            json.member("image", notification.imageUrl)
            json.close()
        }
        json.key("data")
        json.open()
        json.member(campaignIDKey, String(campaignID))
        // On Apple devices the subtitle is in the alert, and the image is where the APNs payload has it.
        if !apple { json.member("herald_subtitle", notification.subtitle) }
        json.member("herald_url", notification.url)
        if apple { json.member("herald_image_url", notification.imageUrl) }
        for pair in data.pairs { json.member(pair.key, pair.value) }
        json.close()
        if apple {
            apnsOverride(
                silent: notification.silent, collapseID: "herald-\(campaignID)", image: notification.silent ? nil : notification.imageUrl,
                into: &json
            ) { aps(notification, into: &$0) }
        } else {
            json.key("android")
            json.open()
            json.member("priority", notification.silent ? "normal" : "high")
            if !notification.silent {
                json.key("notification")
                json.open()
                json.member("click_action", notification.category)
                json.member("sound", notification.sound)
                json.member("notification_count", notification.badge)
                json.member("tag", notification.threadId)
                json.close()
            }
            json.close()
        }
        json.close()
        json.close()
        return json.bytes
    }

    /// FCM's `apns` member: the APNs headers FCM sends with it (a silent push goes as a background push
    /// at priority 5, as Apple requires), the payload whose `aps` `writeAPS` writes, and the image where
    /// FCM's notification service extension reads it.
    private static func apnsOverride(
        silent: Bool, collapseID: String, image: String? = nil, into json: inout JSONWriter, writeAPS: (inout JSONWriter) -> Void
    ) {
        json.key("apns")
        json.open()
        json.key("headers")
        json.open()
        json.member("apns-push-type", silent ? "background" : "alert")
        json.member("apns-priority", silent ? "5" : "10")
        json.member("apns-collapse-id", collapseID)
        json.close()
        json.key("payload")
        json.open()
        json.key("aps")
        writeAPS(&json)
        json.close()
        if let image {
            json.key("fcm_options")
            json.open()
            json.member("image", image)
            json.close()
        }
        json.close()
    }

    /// The bytes the provider counts against its limit: the APNs payload, or the FCM message without its
    /// device token (`"token":"…",`), which differs per device and which FCM does not count, in the larger
    /// of its two shapes (Android's and Apple's), so a campaign that fits fits every device.
    public static func size(_ notification: PushNotification, campaignID: Int64, data: CustomData, provider: PushProvider) -> Int {
        switch provider {
        case .apns: apns(notification, campaignID: campaignID, data: data).count
        case .fcm: Platform.allCases.map { fcmSize(notification, campaignID: campaignID, data: data, platform: $0) }.max() ?? 0
        }
    }

    /// The FCM message for a device of `platform`, counted as FCM counts it (without its token).
    public static func fcmSize(_ notification: PushNotification, campaignID: Int64, data: CustomData, platform: Platform) -> Int {
        fcm(notification, campaignID: campaignID, data: data, token: "", platform: platform).count - #""token":"","#.utf8.count
    }

    /// The silent push that asks devices to fetch the feed now, for an app whose in-app campaigns changed;
    /// through FCM to an iOS device, with the `apns` override that makes it wake the app.
    public static func feedRefresh(provider: PushProvider, token: String, platform: Platform) -> [UInt8] {
        var json = JSONWriter()
        json.open()
        switch provider {
        case .apns:
            json.key("aps")
            aps(PushNotification(silent: true), into: &json)
            json.member("herald_refresh", 1)
        case .fcm:
            json.key("message")
            json.open()
            json.member("token", token)
            json.key("data")
            json.open()
            json.member("herald_refresh", "1")
            json.close()
            if platform == .ios {
                apnsOverride(silent: true, collapseID: refreshCollapseID, into: &json) { aps(PushNotification(silent: true), into: &$0) }
            } else {
                json.key("android")
                json.open()
                json.member("priority", "normal")
                json.close()
            }
            json.close()
        }
        json.close()
        return json.bytes
    }

    /// A refresh replaces the one before it that a device has not seen yet (`apns-collapse-id`).
    public static let refreshCollapseID = "herald-refresh"
}
