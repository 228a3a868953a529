import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// A push campaign's notification as iOS and Android show it on a lock screen, collapsed and expanded
/// with its image, in light and dark, for one language version at a time (right to left for Persian,
/// Arabic and the other right-to-left languages).
struct PushPreview: Sendable {
    struct Screen: Sendable {
        let platform: String
        let theme: String
        let caption: String
        let expanded: Bool
    }

    struct Version: Sendable {
        let href: String
        let label: String
        let current: Bool
    }

    let id: Int64
    let heading: String
    let appName: String
    let title: String?
    let subtitle: String?
    let body: String?
    let image: String?
    let silent: Bool
    let direction: String
    let language: String
    let screens: [Screen]
    let versions: [Version]
    let hasVersions: Bool

    init(stored: StoredCampaign, appName: String, requestedLanguage: String?, localizer l: Localizer) {
        let push = stored.campaign.push ?? PushNotification()
        let tag = requestedLanguage.flatMap { wanted in push.translations?.keys.first { $0.lowercased() == wanted.lowercased() } }
        let version = tag.flatMap { push.translations?[$0] }.map(push.applying) ?? push.applying(PushTranslation())
        id = stored.id
        heading = l("preview.page_title", ["name": Localizer.isolated(stored.campaign.name)])
        self.appName = appName
        title = version.title
        subtitle = version.subtitle
        body = version.body
        image = version.imageUrl
        silent = version.silent
        direction = tag.map { LanguageTag.isRightToLeft($0) ? "rtl" : "ltr" } ?? "auto"
        language = tag ?? ""
        screens = ["ios", "android"].flatMap { platform in
            ["light", "dark"].flatMap { theme in
                [false, true].map { expanded in
                    Screen(platform: platform, theme: theme, caption: l("preview.push.caption", [
                        "platform": l("common.platform." + platform), "theme": l("preview.push." + theme),
                        "state": l(expanded ? "preview.push.expanded" : "preview.push.lock_screen"),
                    ]), expanded: expanded)
                }
            }
        }
        versions = [Version(href: "/campaigns/\(stored.id)/preview", label: l("preview.default_version"), current: tag == nil)]
            + (push.translations ?? [:]).keys.sorted().map { key in
                Version(href: "/campaigns/\(stored.id)/preview?" + FormData([("language", key)]).urlencoded,
                        label: LanguageNames.name(of: key, in: l), current: key == tag)
            }
        hasVersions = versions.count > 1
    }
}
