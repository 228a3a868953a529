import Foundation
import HeraldDomain
import HeraldHTTP

/// The composer's language versions: a tab for the default version and one for each version, a panel of
/// the translatable fields for each version, and the control that adds one. Without script the tabs and
/// buttons are submit buttons the server answers by drawing the form again (nothing saved), as the row
/// buttons are; with script they act in the page, new versions cloned from `template`.
struct ComposerVersions: Sendable {
    /// The form's hidden `preview.language`: the version being edited, which the live preview draws.
    static let currentName = "preview.language"
    /// The add-a-version control's fields (not campaign fields: never saved).
    static let newLanguageName = "composer.language"
    static let otherLanguageName = "composer.otherLanguage"
    /// Stands for the tag and language name in `template`; the script puts the chosen ones in.
    static let placeholderTag = "LANGTAG"
    static let placeholderName = "LANGNAME"
    static let placeholderDirection = "LANGDIR"

    /// Tags offered in the list; others can be typed.
    static let commonTags = [
        "ar", "bn", "cs", "da", "de", "el", "en", "es", "fa", "fi", "fr", "he", "hi", "hu", "id", "it", "ja", "ko", "ms", "nl",
        "no", "pl", "pt", "pt-BR", "ro", "ru", "sv", "th", "tr", "uk", "ur", "vi", "zh-Hans", "zh-Hant",
    ]

    struct Tab: Sendable {
        let tag: String
        let id: String
        let panelID: String
        let label: String
        let selected: Bool
        let hasProblems: Bool
    }

    struct Panel: Sendable {
        let tag: String
        let id: String
        let tabID: String
        let name: String
        let direction: String
        let selected: Bool
        let fields: [FieldView]
        /// A notification version's payload size against each provider's limit; nil for in-app messages.
        let bytes: PushBytesView?
        /// The problem with the version itself (a tag that is not one, a repeated tag). (Names here and in
        /// the fields' differ, not `error`: Mustache looks a missing value up in the enclosing ones.)
        /// The panel's labels are in the console's language: only the version's text inputs carry its `lang`.
        let versionError: String?
        let removeLabel: String
        let removeConfirmation: String
        /// Set after "Remove" without script: the panel asks to confirm.
        let confirmingRemoval: Bool
    }

    struct LanguageOption: Sendable {
        let value: String
        let name: String
        let direction: String
    }

    let current: String
    /// The hidden inputs' name that lists the versions (`message.translations`, `push.translations`).
    let translationsName: String
    let defaultTabID: String
    let defaultPanelID: String
    let defaultSelected: Bool
    let tabs: [Tab]
    let panels: [Panel]
    let template: Panel
    let templateTab: Tab
    let options: [LanguageOption]
    let otherPattern: String
    let addError: String?
    /// A tag typed in "Other language" that could not be added, kept in the field beside its error.
    let otherTyped: String
    /// Whether the problem is with that typed tag (rather than no language chosen, or a full list).
    let otherInvalid: Bool
    let versionsError: String?
    /// `?language=fa` for the saved preview's first frame; nil for the default version.
    let currentQuery: String?
    let atLimit: Bool

    init(form: FormData, inputs: ComposerInputs) {
        let localizer = inputs.localizer
        let channel = Channel(form: form)
        let tags = CampaignForm.versionTags(form)
        // The version chosen, else (after a refused save) the first version with a problem when the
        // default version has none, so what needs fixing is on screen.
        let chosen = form[Self.currentName] ?? ""
        let versionsWithProblems = inputs.problems.compactMap { ComposerFields.version(of: $0.path)?.tag }
        let defaultHasProblems = inputs.problems.contains {
            $0.path.hasPrefix(channel.contentPath + ".") && ComposerFields.version(of: $0.path) == nil
        }
        let shown: String
        if tags.contains(chosen) {
            shown = chosen
        } else if chosen.isEmpty && !defaultHasProblems, let tag = versionsWithProblems.first(where: tags.contains) {
            shown = tag
        } else {
            shown = ""
        }
        current = shown
        translationsName = channel.translations
        let confirming = form["composer.confirmRemoval"]
        defaultTabID = "version-tab-default"
        defaultPanelID = "version-panel-default"
        defaultSelected = shown.isEmpty
        func panel(_ tag: String, name: String, direction: String, selected: Bool) -> Panel {
            let id = Self.panelID(tag, channel)
            return Panel(
                tag: tag, id: id, tabID: Self.tabID(tag), name: name, direction: direction, selected: selected,
                fields: channel.translatable.compactMap { field in
                    field.versionPath(tag).map { inputs.field(field, name: $0, version: (tag, direction)) }
                },
                bytes: inputs.pushBytes(tag: tag),
                versionError: inputs.error("\(channel.translations).\(tag)"),
                removeLabel: localizer("composer.versions.remove", ["language": name]),
                removeConfirmation: localizer("composer.versions.remove_confirm", ["language": name]),
                confirmingRemoval: confirming == tag)
        }
        tabs = tags.map { tag in
            Tab(tag: tag, id: Self.tabID(tag), panelID: Self.panelID(tag, channel), label: LanguageNames.name(of: tag, in: localizer), selected: tag == shown,
                hasProblems: versionsWithProblems.contains(tag))
        }
        panels = tags.map { tag in
            panel(tag, name: LanguageNames.name(of: tag, in: localizer), direction: Self.direction(tag), selected: tag == shown)
        }
        template = panel(Self.placeholderTag, name: Self.placeholderName, direction: Self.placeholderDirection, selected: false)
        templateTab = Tab(tag: Self.placeholderTag, id: Self.tabID(Self.placeholderTag), panelID: Self.panelID(Self.placeholderTag, channel),
                          label: Self.placeholderName, selected: false, hasProblems: false)
        let present = Set(tags.map { $0.lowercased() })
        options = Self.commonTags.filter { !present.contains($0.lowercased()) }.map {
            LanguageOption(value: $0, name: LanguageNames.name(of: $0, in: localizer), direction: Self.direction($0))
        }.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
        otherPattern = LanguageTag.pattern
        addError = inputs.error(Self.newLanguageName)
        otherTyped = form[Self.otherLanguageName] ?? ""
        otherInvalid = addError != nil && !otherTyped.trimmingCharacters(in: .whitespaces).isEmpty
        versionsError = inputs.error(channel.translations)
        currentQuery = shown.isEmpty ? nil : "?" + FormData([("language", current)]).urlencoded
        atLimit = tags.count >= CampaignLimits.languageVersions
    }

    static func direction(_ tag: String) -> String { LanguageTag.isRightToLeft(tag) ? "rtl" : "ltr" }
    static func tabID(_ tag: String) -> String { "version-tab-" + FieldView.id(for: tag).dropFirst("field-".count) }
    static func panelID(_ tag: String, _ channel: Channel) -> String { FieldView.id(for: "\(channel.translations).\(tag)") }

    // MARK: Buttons pressed without script

    /// The form after a language-version button (`add-language`, `language:fa`, `remove-language:fa`,
    /// `confirm-remove-language:fa`), and the problem to show when a version cannot be added; nil when
    /// `intent` is not one of them.
    static func apply(_ intent: String, to form: FormData, localizer: Localizer) -> (form: FormData, problems: [FieldProblem])? {
        var form = form
        func setCurrent(_ tag: String) {
            form.pairs.removeAll { $0.name == currentName || $0.name == "composer.confirmRemoval" }
            form.pairs.append((currentName, tag))
        }
        if intent == "add-language" {
            let typed = (form[otherLanguageName] ?? "").trimmingCharacters(in: .whitespaces)
            let tag = typed.isEmpty ? (form[newLanguageName] ?? "").trimmingCharacters(in: .whitespaces) : typed
            let tags = CampaignForm.versionTags(form)
            let problem: String? =
                if tag.isEmpty { localizer("composer.versions.errors.choose") }
                else if !LanguageTag.isValid(tag) { localizer("composer.versions.errors.invalid", ["tag": Localizer.isolated(String(tag.prefix(40)))]) }
                else if let existing = tags.first(where: { $0.lowercased() == tag.lowercased() }) {
                    localizer("composer.versions.errors.exists", ["language": LanguageNames.name(of: existing, in: localizer)])
                }
                else if tags.count >= CampaignLimits.languageVersions { localizer("composer.versions.errors.limit", ["count": localizer.number(CampaignLimits.languageVersions)]) }
                else { nil }
            if let problem { return (form, [FieldProblem(newLanguageName, problem)]) }
            form.pairs.removeAll { $0.name == newLanguageName || $0.name == otherLanguageName }
            form.pairs.append((Channel(form: form).translations, tag))
            setCurrent(tag)
            return (form, [])
        }
        let parts = intent.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2 || intent == "language:" else { return nil }
        let tag = parts.count == 2 ? parts[1] : ""
        switch parts[0] {
        case "language":
            setCurrent(tag)
        case "remove-language":
            setCurrent(tag)
            form.pairs.append(("composer.confirmRemoval", tag))
        case "confirm-remove-language":
            let translations = Channel(form: form).translations
            let prefix = "\(translations).\(tag)."
            form.pairs.removeAll { ($0.name == translations && $0.value == tag) || $0.name.hasPrefix(prefix) }
            setCurrent("")
        default:
            return nil
        }
        return (form, [])
    }
}
