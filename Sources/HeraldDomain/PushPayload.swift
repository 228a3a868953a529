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
        json.member(campaignIDKey, campaignID)
        json.member("herald_url", notification.url)
        json.member("herald_image_url", notification.imageUrl)
        for pair in data.pairs { json.member(pair.key, pair.value) }
        json.close()
        return json.bytes
    }

    /// The FCM HTTP v1 request body for `token`: the notification (none for a silent one), and data
    /// values, which FCM takes as strings only.
    public static func fcm(_ notification: PushNotification, campaignID: Int64, data: CustomData, token: String) -> [UInt8] {
        var json = JSONWriter()
        json.open()
        json.key("message")
        json.open()
        json.member("token", token)
        if !notification.silent {
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
        json.member("herald_subtitle", notification.subtitle)
        json.member("herald_url", notification.url)
        for pair in data.pairs { json.member(pair.key, pair.value) }
        json.close()
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
        json.close()
        json.close()
        return json.bytes
    }

    /// The bytes the provider counts against its limit: the APNs payload, or the FCM message without
    /// its device token (`"token":"…",`), which differs per device and which FCM does not count.
    public static func size(_ notification: PushNotification, campaignID: Int64, data: CustomData, provider: PushProvider) -> Int {
        switch provider {
        case .apns: apns(notification, campaignID: campaignID, data: data).count
        case .fcm: fcm(notification, campaignID: campaignID, data: data, token: "").count - #""token":"","#.utf8.count
        }
    }

    /// The silent push that asks devices to fetch the feed now, for an app whose in-app campaigns changed.
    public static func feedRefresh(provider: PushProvider, token: String) -> [UInt8] {
        var json = JSONWriter()
        json.open()
        switch provider {
        case .apns:
            json.key("aps")
            json.open()
            json.member("content-available", 1)
            json.close()
            json.member("herald_refresh", 1)
        case .fcm:
            json.key("message")
            json.open()
            json.member("token", token)
            json.key("data")
            json.open()
            json.member("herald_refresh", "1")
            json.close()
            json.key("android")
            json.open()
            json.member("priority", "normal")
            json.close()
            json.close()
        }
        json.close()
        return json.bytes
    }
}
