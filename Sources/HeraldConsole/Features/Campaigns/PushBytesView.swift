import Foundation
import HeraldDomain
import HeraldHTTP

/// One notification version's payload measured against each provider's limit, as the composer shows
/// it under the version's fields: "APNs: 3,912 of 4,096 bytes left · FCM: 3,830 of 4,000 bytes left".
/// The sizes are the domain's (`Campaign.payloadSizes`), the bytes that will be sent; the composer's
/// script asks for them again as the marketer types (`POST …/push-bytes`), so the count is never a
/// second reckoning of the payload in the browser.
struct PushBytesView: Sendable {
    /// The version's tag; empty for the default version.
    let tag: String
    let text: String
    /// Whether a provider would refuse this version.
    let over: Bool

    /// Every version's count, the default's first, for the campaign a composer form describes.
    static func all(_ campaign: Campaign, _ localizer: Localizer) -> [PushBytesView] {
        var order: [String] = []
        var sizes: [String: [(provider: PushProvider, bytes: Int)]] = [:]
        for (tag, provider, bytes) in campaign.payloadSizes() {
            let key = tag ?? ""
            if sizes[key] == nil { order.append(key) }
            sizes[key, default: []].append((provider, bytes))
        }
        return order.map { tag in
            let counts = sizes[tag] ?? []
            let parts = counts.map { provider, bytes in
                let limit = provider.payloadLimit
                let arguments = ["provider": provider.title, "limit": localizer.number(limit)]
                return bytes > limit
                    ? localizer.plural("composer.push.bytes_over", count: bytes - limit, arguments)
                    : localizer.plural("composer.push.bytes_left", count: limit - bytes, arguments)
            }
            return PushBytesView(tag: tag, text: parts.joined(separator: " · "), over: counts.contains { $0.bytes > $0.provider.payloadLimit })
        }
    }

    /// The counts as the script reads them: `{"versions": [{"tag": "", "text": "…", "over": false}, …]}`.
    static func json(_ views: [PushBytesView]) throws -> [UInt8] {
        let versions = views.map { ["tag": $0.tag, "text": $0.text, "over": $0.over] as [String: Any] }
        return Array(try JSONSerialization.data(withJSONObject: ["versions": versions], options: [.sortedKeys]))
    }
}
