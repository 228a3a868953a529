/// One language version of a message: the parts that carry words, or point at something made for a
/// language (images with text in them, a localized page). Whatever a version leaves out falls back to
/// the default version; colors, layout and timing are the message's own and never translated.
public struct MessageTranslation: Codable, Sendable, Equatable {
    public var title: Text?
    public var body: Text?
    public var imageUrl: String?
    public var landscapeImageUrl: String?
    public var primaryAction: Button?
    public var secondaryAction: Button?
    public var action: Message.Action?

    /// A text of a version; its color is the default version's.
    public struct Text: Codable, Sendable, Equatable {
        public var text: String

        public init(text: String) {
            self.text = text
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case text }

        public init(from decoder: Decoder) throws {
            text = try decoder.container(knownKeys: CodingKeys.self).decode(String.self, forKey: .text)
        }
    }

    /// A button of a version: its text, its action, or both; its colors are the default version's.
    public struct Button: Codable, Sendable, Equatable {
        public var text: String?
        public var url: String?

        public init(text: String? = nil, url: String? = nil) {
            self.text = text
            self.url = url
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case text, url }

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(knownKeys: CodingKeys.self)
            text = try container.decodeIfPresent(String.self, forKey: .text)
            url = try container.decodeIfPresent(String.self, forKey: .url)
        }
    }

    public init(
        title: Text? = nil, body: Text? = nil, imageUrl: String? = nil, landscapeImageUrl: String? = nil,
        primaryAction: Button? = nil, secondaryAction: Button? = nil, action: Message.Action? = nil
    ) {
        self.title = title
        self.body = body
        self.imageUrl = imageUrl
        self.landscapeImageUrl = landscapeImageUrl
        self.primaryAction = primaryAction
        self.secondaryAction = secondaryAction
        self.action = action
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case title, body, imageUrl, landscapeImageUrl, primaryAction, secondaryAction, action
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        title = try container.decodeIfPresent(Text.self, forKey: .title)
        body = try container.decodeIfPresent(Text.self, forKey: .body)
        imageUrl = try container.decodeIfPresent(String.self, forKey: .imageUrl)
        landscapeImageUrl = try container.decodeIfPresent(String.self, forKey: .landscapeImageUrl)
        primaryAction = try container.decodeIfPresent(Button.self, forKey: .primaryAction)
        secondaryAction = try container.decodeIfPresent(Button.self, forKey: .secondaryAction)
        action = try container.decodeIfPresent(Message.Action.self, forKey: .action)
    }

    /// The message parts this version sets, as `Message.Field`s (for "overrides" in the composer, and
    /// for telling a version's own problems from the default version's).
    public var overriddenFields: Set<Message.Field> {
        var fields: Set<Message.Field> = []
        if title != nil { fields.insert(.title) }
        if body != nil { fields.insert(.body) }
        if imageUrl != nil { fields.insert(.imageUrl) }
        if landscapeImageUrl != nil { fields.insert(.landscapeImageUrl) }
        if primaryAction != nil { fields.insert(.primaryAction) }
        if secondaryAction != nil { fields.insert(.secondaryAction) }
        if action != nil { fields.insert(.action) }
        return fields
    }

    /// This version without the parts `fields` (a layout's) does not hold.
    func keeping(_ fields: Set<Message.Field>) -> MessageTranslation {
        var kept = MessageTranslation()
        if fields.contains(.title) { kept.title = title }
        if fields.contains(.body) { kept.body = body }
        if fields.contains(.imageUrl) { kept.imageUrl = imageUrl }
        if fields.contains(.landscapeImageUrl) { kept.landscapeImageUrl = landscapeImageUrl }
        if fields.contains(.primaryAction) { kept.primaryAction = primaryAction }
        if fields.contains(.secondaryAction) { kept.secondaryAction = secondaryAction }
        if fields.contains(.action) { kept.action = action }
        return kept
    }
}

/// BCP 47 language tags as Herald takes them: a language, then optional script and region subtags
/// (`fa`, `pt-BR`, `zh-Hant-TW`), compared without regard to case.
public enum LanguageTag {
    /// The longest tag of the accepted shape, in characters (all ASCII): `yue-Hant-419`.
    public static let maxLength = 12

    /// The accepted shape as a regular expression matching a whole tag, for an HTML `pattern` (so a
    /// browser checks a typed tag as `isValid` does; a test holds the two to the same answers).
    public static let pattern = "[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?"

    /// Whether `tag` is a language tag of the accepted shape, `[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?`.
    /// By hand, over its bytes: ingestion checks every event's tag, and a Swift `Regex` match cost more than storing the event.
    public static func isValid(_ tag: String) -> Bool {
        let utf8 = tag.utf8
        guard utf8.count <= maxLength else { return false }
        func letters(_ part: Substring.UTF8View.SubSequence) -> Bool {
            part.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) }
        }
        func digits(_ part: Substring.UTF8View.SubSequence) -> Bool {
            part.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        var parts = Substring(tag).utf8.split(separator: UInt8(ascii: "-"), maxSplits: 3, omittingEmptySubsequences: false)[...]
        guard let language = parts.popFirst(), (2...3).contains(language.count), letters(language) else { return false }
        if let script = parts.first, script.count == 4, letters(script) { parts.removeFirst() }
        if let region = parts.popFirst(), !(region.count == 2 && letters(region)) && !(region.count == 3 && digits(region)) { return false }
        return parts.isEmpty
    }

    /// A valid tag in the case BCP 47 recommends, so one language counts once however a campaign or a
    /// device wrote it: language lower case, script title case, region upper case (`zh-hant-tw` → `zh-Hant-TW`).
    public static func canonical(_ tag: String) -> String {
        tag.split(separator: "-").enumerated().map { index, part in
            if index == 0 { return part.lowercased() }
            if part.count == 4 { return part.prefix(1).uppercased() + part.dropFirst().lowercased() }
            return part.uppercased()
        }.joined(separator: "-")
    }

    /// The tags to try for a device's language, most specific first: `pt-BR` → `pt-br`, `pt`.
    public static func fallbacks(for language: String) -> [String] {
        var parts = language.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
        var tags: [String] = []
        while !parts.isEmpty {
            tags.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        return tags
    }

    /// Right-to-left scripts' languages: the preview and renderers lay such a version out right to left.
    public static func isRightToLeft(_ tag: String) -> Bool {
        ["ar", "fa", "he", "iw", "ur", "ps", "sd", "ug", "yi", "dv", "ckb"].contains(fallbacks(for: tag).last ?? "")
    }
}

extension Message {
    /// The version a device whose language is `language` gets: the translation whose tag matches it
    /// most closely (`pt-BR`, else `pt`), applied over the default; the default when none matches. The
    /// tag is the translation's, as written, or nil for the default.
    public func version(for language: String) -> (tag: String?, message: Message) {
        for candidate in LanguageTag.fallbacks(for: language) {
            if let (tag, translation) = translations?.first(where: { $0.key.lowercased() == candidate }) {
                return (tag, applying(translation))
            }
        }
        return (nil, applying(MessageTranslation()))
    }

    /// The default version with `translation`'s parts in place of its own (and no versions of its own).
    public func applying(_ translation: MessageTranslation) -> Message {
        var message = self
        message.translations = nil
        if let title = translation.title { message.title = Text(text: title.text, color: self.title?.color) }
        if let body = translation.body { message.body = Text(text: body.text, color: self.body?.color) }
        if let imageUrl = translation.imageUrl { message.imageUrl = imageUrl }
        if let landscapeImageUrl = translation.landscapeImageUrl { message.landscapeImageUrl = landscapeImageUrl }
        message.primaryAction = Self.applying(translation.primaryAction, over: primaryAction)
        message.secondaryAction = Self.applying(translation.secondaryAction, over: secondaryAction)
        if let action = translation.action { message.action = action }
        return message
    }

    private static func applying(_ version: MessageTranslation.Button?, over button: Button?) -> Button? {
        guard let version else { return button }
        var result = button ?? Button(text: "")
        if let text = version.text { result.text = text }
        if let url = version.url { result.url = url }
        return result
    }
}
