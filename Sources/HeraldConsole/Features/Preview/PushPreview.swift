import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// A notification as iOS and Android show it on a lock screen, collapsed and expanded with its image,
/// in light or dark, for one language version (right to left for Persian, Arabic and the other
/// right-to-left languages): `preview/push_screens.mustache`, drawn on the preview page and in the
/// composer's frame.
struct PushScreens: Sendable {
    struct Screen: Sendable {
        let platform: String
        let theme: String
        let caption: String
        let expanded: Bool
    }

    let appName: String
    let title: String?
    let subtitle: String?
    let body: String?
    let image: String?
    let silent: Bool
    let direction: String
    let language: String
    let screens: [Screen]

    /// `version` is the notification as devices of the language `tag` get it (nil: the default version).
    init(_ version: PushNotification, tag: String?, appName: String, themes: [String], localizer l: Localizer) {
        self.appName = appName
        title = version.title
        subtitle = version.subtitle
        body = version.body
        image = version.imageUrl.flatMap { ImageURL.problem($0) == nil ? $0 : nil }
        silent = version.silent
        direction = tag.map { LanguageTag.isRightToLeft($0) ? "rtl" : "ltr" } ?? "auto"
        language = tag ?? ""
        screens = ["ios", "android"].flatMap { platform in
            themes.flatMap { theme in
                [false, true].map { expanded in
                    Screen(platform: platform, theme: theme, caption: l("preview.push.caption", [
                        "platform": l("common.platform." + platform), "theme": l("preview.push." + theme),
                        "state": l(expanded ? "preview.push.expanded" : "preview.push.lock_screen"),
                    ]), expanded: expanded)
                }
            }
        }
    }

    /// The version of `push` for the language `requested` names exactly (any case), and its tag; the
    /// default version when there is none.
    static func version(_ push: PushNotification, requested: String?) -> (PushNotification, String?) {
        let tag = requested.flatMap { wanted in push.translations?.keys.first { $0.lowercased() == wanted.lowercased() } }
        return (tag.flatMap { push.translations?[$0] }.map(push.applying) ?? push.applying(PushTranslation()), tag)
    }
}

/// `GET /campaigns/{id}/preview` for a push campaign: every screen, light and dark, with links to
/// each language version.
struct PushPreview: Sendable {
    struct Version: Sendable {
        let href: String
        let label: String
        let current: Bool
    }

    let id: Int64
    let heading: String
    let notification: PushScreens
    let versions: [Version]
    let hasVersions: Bool

    init(stored: StoredCampaign, appName: String, requestedLanguage: String?, localizer l: Localizer) {
        let push = stored.campaign.push ?? PushNotification()
        let (version, tag) = PushScreens.version(push, requested: requestedLanguage)
        id = stored.id
        heading = l("preview.page_title", ["name": Localizer.isolated(stored.campaign.name)])
        notification = PushScreens(version, tag: tag, appName: appName, themes: ["light", "dark"], localizer: l)
        versions = [Version(href: "/campaigns/\(stored.id)/preview", label: l("preview.default_version"), current: tag == nil)]
            + (push.translations ?? [:]).keys.sorted().map { key in
                Version(href: "/campaigns/\(stored.id)/preview?" + FormData([("language", key)]).urlencoded,
                        label: LanguageNames.name(of: key, in: l), current: key == tag)
            }
        hasVersions = versions.count > 1
    }
}

/// The composer's framed preview of a notification (`preview/push_frame.mustache`): its screens in the
/// chosen theme, and what a provider or device would refuse it for.
struct PushFrameDocument: Sendable {
    let uiLang: String
    let uiDir: String
    let documentTitle: String
    let problemsHeading: String
    let problems: [PreviewProblem]
    let wouldDisplay: Bool
    let notification: PushScreens

    init(_ campaign: Campaign, appName: String, requestedLanguage: String?, theme: PreviewFrame.Theme, problems: [FieldProblem], localizer l: Localizer) {
        let (version, tag) = PushScreens.version(campaign.push ?? PushNotification(), requested: requestedLanguage)
        uiLang = l.language.rawValue
        uiDir = l.language.direction
        documentTitle = l("preview.push_document_title", ["name": Localizer.isolated(campaign.name)])
        problemsHeading = l("preview.push_problems_heading")
        self.problems = PreviewPages.versionProblems(problems, channel: .push, language: tag, l)
        wouldDisplay = self.problems.isEmpty
        notification = PushScreens(version, tag: tag, appName: appName, themes: [theme.rawValue], localizer: l)
    }
}
