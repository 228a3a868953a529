import Foundation
import HeraldDomain
import HeraldHTTP

/// One field of the composer, described once: its form name (the campaign's JSON path; `*` stands for a
/// row's number), the catalog keys of its label and hint, the input it is, and the message part it belongs
/// to (hence the layouts that use it), or the notification's field it is. The form decoder and encoder, the composer view, the error summary,
/// the preview's problems and the history page all read this catalogue rather than spelling paths out.
struct ComposerField: Sendable {
    enum Kind: String, Sendable {
        case text, color, url, link, number, datetime, select, choice, checkbox, list
        /// Text that may span lines (a notification's body): a text area.
        case multiline
    }

    let path: String
    /// `title` → `fields.title.label` and `fields.title.hint`.
    let key: String
    let kind: Kind
    let hasHint: Bool
    /// Whether a card calls it otherwise (`fields.<key>.label_card`): a card's image is its portrait one.
    let hasCardLabel: Bool
    let placeholder: String?
    /// The message part it is (nil: not part of the message); decides which layouts show it.
    let part: Message.Field?
    /// The values of a select or a set of choices, labelled by `fields.<key>.options.<value>`.
    let options: [String]
    /// How a message field is read and written; nil for the campaign's other fields, which the form
    /// decoder reads one by one (their values are dates, numbers and lists, not message text).
    let access: Accessor<Message>?
    /// How a language version holds the field; nil when the field is not translated (colors, timing).
    let versionAccess: Accessor<MessageTranslation>?
    /// The same two for a push campaign's notification fields.
    let pushAccess: Accessor<PushNotification>?
    let pushVersionAccess: Accessor<PushTranslation>?

    /// How a field's text is read from and written into the part of the campaign that holds it.
    struct Accessor<Root>: Sendable {
        let read: @Sendable (Root) -> String?
        let write: @Sendable (inout Root, String) -> Void
    }

    init(
        _ path: String, _ key: String, _ kind: Kind = .text, hint: Bool = false, cardLabel: Bool = false, placeholder: String? = nil,
        part: Message.Field? = nil, options: [String] = [], access: Accessor<Message>? = nil,
        versionAccess: Accessor<MessageTranslation>? = nil, pushAccess: Accessor<PushNotification>? = nil,
        pushVersionAccess: Accessor<PushTranslation>? = nil
    ) {
        self.path = path
        self.key = key
        self.kind = kind
        self.hasHint = hint
        self.hasCardLabel = cardLabel
        self.placeholder = placeholder
        self.part = part
        self.options = options
        self.access = access
        self.versionAccess = versionAccess
        self.pushAccess = pushAccess
        self.pushVersionAccess = pushVersionAccess
    }

    var labelKey: String { "fields.\(key).label" }
    var hintKey: String? { hasHint ? "fields.\(key).hint" : nil }
    func optionKey(_ value: String) -> String { "fields.\(key).options.\(value)" }

    /// The layouts that show this field (every layout for fields outside the message).
    var layouts: [Message.Layout] {
        guard let part else { return Message.Layout.allCases }
        return Message.Layout.allCases.filter { $0.fields.contains(part) }
    }

    /// `data-layouts` for the script: nil for fields every layout shows.
    var layoutNames: String? {
        part == nil ? nil : layouts.map(\.rawValue).joined(separator: " ")
    }

    /// Whether a language version can set this field.
    var isTranslatable: Bool { versionAccess != nil || pushVersionAccess != nil }

    /// This field's form name in the language version `tag` (`message.translations.fa.title.text`,
    /// `push.translations.fa.body`).
    func versionPath(_ tag: String) -> String? {
        guard isTranslatable else { return nil }
        for channel in Channel.allCases {
            if let rest = path.dropPrefix(channel.contentPath + ".") { return "\(channel.translations).\(tag).\(rest)" }
        }
        return nil
    }

    /// The label, as the composer shows it for `layout` (a card has a portrait and a landscape image).
    func label(_ localizer: Localizer, layout: Message.Layout? = nil) -> String {
        hasCardLabel && layout == .card ? localizer("fields.\(key).label_card") : localizer(labelKey)
    }
}

/// The catalogue: every composer field, in the order the composer shows them.
enum ComposerFields {

    // MARK: Message

    static let message: [ComposerField] = [
        ComposerField("message.title.text", "title", part: .title,
                      access: .init(read: { $0.title?.text }, write: { $0.title = .init(text: $1, color: $0.title?.color) }),
                      versionAccess: .init(read: { $0.title?.text }, write: { $0.title = .init(text: $1) })),
        ComposerField("message.title.color", "title_color", .color, placeholder: "#000000", part: .title,
                      access: .init(read: { $0.title?.color }, write: { $0.title = .init(text: $0.title?.text ?? "", color: $1) })),
        ComposerField("message.body.text", "body", part: .body,
                      access: .init(read: { $0.body?.text }, write: { $0.body = .init(text: $1, color: $0.body?.color) }),
                      versionAccess: .init(read: { $0.body?.text }, write: { $0.body = .init(text: $1) })),
        ComposerField("message.body.color", "body_color", .color, placeholder: "#000000", part: .body,
                      access: .init(read: { $0.body?.color }, write: { $0.body = .init(text: $0.body?.text ?? "", color: $1) })),
        ComposerField("message.imageUrl", "image_url", .url, hint: true, cardLabel: true, placeholder: "https://", part: .imageUrl,
                      access: .init(read: { $0.imageUrl }, write: { $0.imageUrl = $1 }),
                      versionAccess: .init(read: { $0.imageUrl }, write: { $0.imageUrl = $1 })),
        ComposerField("message.landscapeImageUrl", "landscape_image_url", .url, hint: true, placeholder: "https://", part: .landscapeImageUrl,
                      access: .init(read: { $0.landscapeImageUrl }, write: { $0.landscapeImageUrl = $1 }),
                      versionAccess: .init(read: { $0.landscapeImageUrl }, write: { $0.landscapeImageUrl = $1 })),
        ComposerField("message.backgroundColor", "background_color", .color, placeholder: "#FFFFFF", part: .backgroundColor,
                      access: .init(read: { $0.backgroundColor }, write: { $0.backgroundColor = $1 })),
    ] + buttonFields(\.primaryAction, \.primaryAction, "primaryAction", "primary", part: .primaryAction,
                     textColor: "#FFFFFF", buttonColor: "#1A73E8")
      + buttonFields(\.secondaryAction, \.secondaryAction, "secondaryAction", "secondary", part: .secondaryAction,
                     textColor: "#1A73E8", buttonColor: "#FFFFFF")
      + [
        ComposerField("message.action.url", "action_url", .link, hint: true, placeholder: "https://", part: .action,
                      access: .init(read: { $0.action?.url }, write: { $0.action = .init(url: $1) }),
                      versionAccess: .init(read: { $0.action?.url }, write: { $0.action = .init(url: $1) })),
        ComposerField("message.dismiss.seconds", "dismiss_seconds", .number, hint: true, part: .dismiss,
                      access: .init(read: { $0.dismiss.map { String($0.seconds) } }, write: { message, text in Int(text).map { message.dismiss = .init(seconds: $0) } })),
        ComposerField("message.slideFrom", "slide_from", .select, part: .slideFrom, options: Message.SlideEdge.allCases.reversed().map(\.rawValue),
                      access: .init(read: { $0.slideFrom?.rawValue }, write: { $0.slideFrom = Message.SlideEdge(rawValue: $1) })),
        ComposerField("message.orientation", "orientation", .select, part: .orientation, options: Message.Orientation.allCases.map(\.rawValue),
                      access: .init(read: { $0.orientation?.rawValue }, write: { $0.orientation = Message.Orientation(rawValue: $1) })),
    ]

    /// A button's four fields; its text and action are translated, its colors are not.
    private static func buttonFields(
        _ button: WritableKeyPath<Message, Message.Button?> & Sendable,
        _ version: WritableKeyPath<MessageTranslation, MessageTranslation.Button?> & Sendable,
        _ name: String, _ key: String, part: Message.Field, textColor: String, buttonColor: String
    ) -> [ComposerField] {
        @Sendable func edit(_ message: inout Message, _ change: (inout Message.Button) -> Void) {
            var value = message[keyPath: button] ?? Message.Button(text: "")
            change(&value)
            message[keyPath: button] = value
        }
        @Sendable func editVersion(_ translation: inout MessageTranslation, _ change: (inout MessageTranslation.Button) -> Void) {
            var value = translation[keyPath: version] ?? MessageTranslation.Button()
            change(&value)
            translation[keyPath: version] = value
        }
        return [
            ComposerField("message.\(name).text", "\(key)_text", part: part,
                          access: .init(read: { $0[keyPath: button]?.text }, write: { message, text in edit(&message) { $0.text = text } }),
                          versionAccess: .init(read: { $0[keyPath: version]?.text }, write: { version, text in editVersion(&version) { $0.text = text } })),
            ComposerField("message.\(name).url", "\(key)_url", .link, hint: true, placeholder: "https://", part: part,
                          access: .init(read: { $0[keyPath: button]?.url }, write: { message, url in edit(&message) { $0.url = url } }),
                          versionAccess: .init(read: { $0[keyPath: version]?.url }, write: { version, url in editVersion(&version) { $0.url = url } })),
            ComposerField("message.\(name).textColor", "\(key)_text_color", .color, placeholder: textColor, part: part,
                          access: .init(read: { $0[keyPath: button]?.textColor }, write: { message, color in edit(&message) { $0.textColor = color } })),
            ComposerField("message.\(name).buttonColor", "\(key)_button_color", .color, placeholder: buttonColor, part: part,
                          access: .init(read: { $0[keyPath: button]?.buttonColor }, write: { message, color in edit(&message) { $0.buttonColor = color } })),
        ]
    }

    // MARK: Notification

    static let push: [ComposerField] = [
        pushText("title", "title", read: \.title, \.title),
        pushText("subtitle", "push_subtitle", read: \.subtitle, \.subtitle),
        pushText("body", "body", .multiline, read: \.body, \.body),
        pushText("imageUrl", "push_image_url", .url, hint: true, placeholder: "https://", read: \.imageUrl, \.imageUrl),
        pushText("url", "push_url", .link, hint: true, placeholder: "myapp://", read: \.url, \.url),
        ComposerField("push.badge", "push_badge", .number, hint: true,
                      pushAccess: .init(read: { $0.badge.map(String.init) }, write: { push, text in Int(text).map { push.badge = $0 } })),
        pushName("sound", "push_sound", \.sound),
        pushName("category", "push_category", \.category),
        pushName("threadId", "push_thread_id", \.threadId),
    ]

    /// A notification text that language versions can set.
    private static func pushText(
        _ name: String, _ key: String, _ kind: ComposerField.Kind = .text, hint: Bool = false, placeholder: String? = nil,
        read keyPath: WritableKeyPath<PushNotification, String?> & Sendable, _ versionKeyPath: WritableKeyPath<PushTranslation, String?> & Sendable
    ) -> ComposerField {
        ComposerField("push.\(name)", key, kind, hint: hint, placeholder: placeholder,
                      pushAccess: .init(read: { $0[keyPath: keyPath] }, write: { $0[keyPath: keyPath] = $1 }),
                      pushVersionAccess: .init(read: { $0[keyPath: versionKeyPath] }, write: { $0[keyPath: versionKeyPath] = $1 }))
    }

    /// A notification setting every language version shares (a sound file, a click action, a thread).
    private static func pushName(_ name: String, _ key: String, _ keyPath: WritableKeyPath<PushNotification, String?> & Sendable) -> ComposerField {
        ComposerField("push.\(name)", key, hint: true,
                      pushAccess: .init(read: { $0[keyPath: keyPath] }, write: { $0[keyPath: keyPath] = $1 }))
    }

    static let pushSilent = ComposerField("push.silent", "push_silent", .checkbox, hint: true)
    static let pushInDeviceTimeZone = ComposerField("push.inDeviceTimeZone", "push_in_device_time_zone", .checkbox, hint: true)

    // MARK: The rest of the campaign

    static let channel = ComposerField("channel", "channel", .choice, options: Channel.allCases.map(\.rawValue))
    static let layout = ComposerField("message.layout", "layout", .choice, options: Message.Layout.allCases.map(\.rawValue))
    static let name = ComposerField("name", "name", hint: true)
    static let description = ComposerField("description", "description", hint: true)
    static let app = ComposerField("app", "app", .select)
    static let priority = ComposerField("priority", "priority", .select)
    static let dataKey = ComposerField("data.*.key", "data_key", placeholder: "promo_code")
    static let dataValue = ComposerField("data.*.value", "data_value")
    static let triggerEvent = ComposerField("triggers.*.event", "trigger_event", hint: true, placeholder: "app_launch")
    /// A property filter's fields, relative to its row (`triggers.0.filters.1`, `targeting.userProperties.2`).
    static let filterProperty = ComposerField("property", "filter_property", placeholder: "product_id")
    static let filterOperator = ComposerField("op", "filter_op", .select, options: FilterOperator.allCases.map(\.rawValue))
    static let filterType = ComposerField("type", "filter_type", .select, options: ["string", "number", "bool"])
    static let filterValue = ComposerField("value", "filter_value")
    static let filterPrefixes = ["triggers.*.filters", "targeting.userProperties", "conversion.filters"]
    static let conversionEvent = ComposerField("conversion.event", "conversion_event", hint: true, placeholder: "order_completed")
    static let conversionWindow = ComposerField("conversion.windowHours", "conversion_window", .number, hint: true)
    static let startMode = ComposerField("schedule.startMode", "start_mode", .choice, options: ["publish", "at"])
    static let start = ComposerField("schedule.start", "start", .datetime, hint: true)
    static let endMode = ComposerField("schedule.endMode", "end_mode", .choice, options: ["never", "at"])
    static let end = ComposerField("schedule.end", "end", .datetime, hint: true)
    static let timeZone = ComposerField("schedule.timeZone", "time_zone", hint: true)
    static let frequency = ComposerField("frequency.type", "frequency", .choice, options: Frequency.Kind.allCases.map(\.rawValue))
    static let frequencyDays = ComposerField("frequency.days", "frequency_days", .number, hint: true)
    static let platforms = ComposerField("targeting.platforms", "platforms", .checkbox, hint: true)
    static let appVersionOperator = ComposerField("targeting.appVersion.op", "app_version_op", .select,
                                                  options: Targeting.VersionRule.Operator.allCases.map(\.rawValue))
    static let appVersion = ComposerField("targeting.appVersion.value", "app_version", hint: true, placeholder: "2.4.0")
    static let languages = ComposerField("targeting.languages", "languages", .list, hint: true)
    static let countries = ComposerField("targeting.countries", "countries", .list, hint: true)
    static let minDays = ComposerField("targeting.daysSinceFirstOpen.min", "min_days", .number)
    static let maxDays = ComposerField("targeting.daysSinceFirstOpen.max", "max_days", .number)
    static let percentage = ComposerField("targeting.percentage", "percentage", .number, hint: true)
    static let testOnDevice = ComposerField("testOnDevice", "test_on_device", .checkbox, hint: true)
    static let versions = ComposerField(Channel.inApp.translations, "translations")
    static let pushVersions = ComposerField(Channel.push.translations, "translations")

    static let campaign: [ComposerField] = [
        channel, name, description, app, priority, layout, dataKey, dataValue, triggerEvent, startMode, start, endMode, end, timeZone,
        frequency, frequencyDays, platforms, appVersionOperator, appVersion, languages, countries, minDays, maxDays, percentage,
        testOnDevice, versions, pushVersions, pushSilent, pushInDeviceTimeZone, conversionEvent, conversionWindow,
    ]

    /// Every field, row fields under each of their prefixes.
    static let all: [ComposerField] = message + push + campaign + filterPrefixes.flatMap { prefix in
        [filterProperty, filterOperator, filterType, filterValue].map {
            ComposerField("\(prefix).*.\($0.path)", $0.key, $0.kind, hint: $0.hasHint, placeholder: $0.placeholder, options: $0.options)
        }
    }

    private static let byPath: [String: ComposerField] = Dictionary(all.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })

    /// The field a form name or problem path belongs to: rows' numbers match `*`, a list's items
    /// (`targeting.languages.2`) and a JSON leaf under a field (`schedule.start` of a stored time) the list or field.
    static func field(for path: String) -> ComposerField? {
        let pattern = path.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) == nil ? String($0) : "*" }
        var parts = pattern[...]
        while !parts.isEmpty {
            if let field = byPath[parts.joined(separator: ".")] { return field }
            parts = parts.dropLast()
        }
        return nil
    }

    /// A path in a language version (`message.translations.fa.title.text`, `push.translations.fa.body`)
    /// as its tag and the default version's path (`message.title.text`, `push.body`); nil for other paths.
    static func version(of path: String) -> (tag: String, path: String)? {
        for channel in Channel.allCases {
            guard let rest = path.dropPrefix(channel.translations + ".") else { continue }
            let parts = rest.split(separator: ".", maxSplits: 1).map(String.init)
            guard let tag = parts.first else { return nil }
            return (tag, parts.count > 1 ? "\(channel.contentPath).\(parts[1])" : "")
        }
        return nil
    }

    /// How a person reads the field at `path`: its label, after the language version's name for a
    /// version's field ("Persian (fa) — Title") and the rows' for a row's ("Trigger 2 — Property filter 1 — Value").
    static func label(for path: String, _ localizer: Localizer) -> String? {
        if let (tag, inner) = version(of: path) {
            let language = LanguageNames.name(of: tag, in: localizer)
            guard !inner.isEmpty, let field = field(for: inner) else { return language }
            return localizer("composer.versions.field_label", ["language": language, "field": field.label(localizer)])
        }
        guard let field = field(for: path) else { return nil }
        return rowNames(in: path, localizer).reversed().reduce(field.label(localizer)) { label, row in
            localizer("composer.row_label", ["row": row, "field": label])
        }
    }

    /// The rows a path passes through, as people count them: `triggers.1.filters.0.value` → "Trigger 2", "Property filter 1".
    private static let rowKeys = [
        "data": "composer.data.row", "triggers": "composer.triggers.legend", "filters": "composer.triggers.filter_row",
        "userProperties": "composer.targeting.condition_row",
    ]

    static func rowNames(in path: String, _ localizer: Localizer) -> [String] {
        let parts = path.split(separator: ".").map(String.init)
        return parts.indices.dropFirst().compactMap { index in
            guard let number = Int(parts[index]), number >= 0, number < 10_000, let key = rowKeys[parts[index - 1]] else { return nil }
            return localizer(key, ["number": localizer.number(number + 1)])
        }
    }
}

/// What the composer writes for each channel: the in-app message's fields or the notification's.
extension Channel {
    /// The campaign's JSON key that holds the channel's content, and the form's prefix for it.
    var contentPath: String {
        switch self {
        case .inApp: "message"
        case .push: "push"
        }
    }

    /// The form's name for the language versions' tags (one hidden input each).
    var translations: String { "\(contentPath).translations" }

    /// The channel's content fields, in the order the composer shows them.
    var composerFields: [ComposerField] {
        switch self {
        case .inApp: ComposerFields.message
        case .push: ComposerFields.push
        }
    }

    /// The fields a language version can set.
    var translatable: [ComposerField] { composerFields.filter(\.isTranslatable) }

    /// The channel a composer form is for (in-app unless it says push).
    init(form: FormData) {
        self = Channel(rawValue: form[ComposerFields.channel.path] ?? "") ?? .inApp
    }
}

/// Language names in the console's language, from the system's locale data: "Persian (fa)", "Persisch (fa)".
enum LanguageNames {
    static func name(of tag: String, in localizer: Localizer) -> String {
        let bounded = String(tag.prefix(40))
        guard LanguageTag.isValid(bounded),
              let name = localizer.language.locale.localizedString(forIdentifier: bounded) else {
            return bounded
        }
        return localizer("composer.versions.language_name", ["name": name, "tag": bounded])
    }
}

extension String {
    /// The rest of the string after `prefix`, or nil when it does not start with it.
    func dropPrefix(_ prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
