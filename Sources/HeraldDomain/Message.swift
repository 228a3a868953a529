/// The message a device shows. Which fields apply depends on the layout (`Layout.fields`).
public struct Message: Codable, Sendable, Equatable {
    public var layout: Layout
    public var title: Text?
    public var body: Text?
    /// Portrait (or only) image, an https URL.
    public var imageUrl: String?
    /// Card only: used in landscape, falling back to `imageUrl`.
    public var landscapeImageUrl: String?
    /// `#RRGGBB` or `#AARRGGBB`.
    public var backgroundColor: String?
    public var primaryAction: Button?
    public var secondaryAction: Button?
    /// Where tapping the message goes (image_only, banner, slideup).
    public var action: Action?
    public var dismiss: Dismiss?
    public var slideFrom: SlideEdge?
    public var orientation: Orientation?
    /// Language versions by BCP 47 tag (`fa`, `pt-BR`); a device gets the one for its language
    /// (`version(for:)`), else this default version.
    public var translations: [String: MessageTranslation]?

    public init(
        layout: Layout, title: Text? = nil, body: Text? = nil, imageUrl: String? = nil, landscapeImageUrl: String? = nil,
        backgroundColor: String? = nil, primaryAction: Button? = nil, secondaryAction: Button? = nil, action: Action? = nil,
        dismiss: Dismiss? = nil, slideFrom: SlideEdge? = nil, orientation: Orientation? = nil,
        translations: [String: MessageTranslation]? = nil
    ) {
        self.layout = layout
        self.title = title
        self.body = body
        self.imageUrl = imageUrl
        self.landscapeImageUrl = landscapeImageUrl
        self.backgroundColor = backgroundColor
        self.primaryAction = primaryAction
        self.secondaryAction = secondaryAction
        self.action = action
        self.dismiss = dismiss
        self.slideFrom = slideFrom
        self.orientation = orientation
        self.translations = translations
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case layout, title, body, imageUrl, landscapeImageUrl, backgroundColor, primaryAction, secondaryAction, action, dismiss
        case slideFrom, orientation, translations
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        layout = try container.decode(Layout.self, forKey: .layout)
        title = try container.decodeIfPresent(Text.self, forKey: .title)
        body = try container.decodeIfPresent(Text.self, forKey: .body)
        imageUrl = try container.decodeIfPresent(String.self, forKey: .imageUrl)
        landscapeImageUrl = try container.decodeIfPresent(String.self, forKey: .landscapeImageUrl)
        backgroundColor = try container.decodeIfPresent(String.self, forKey: .backgroundColor)
        primaryAction = try container.decodeIfPresent(Button.self, forKey: .primaryAction)
        secondaryAction = try container.decodeIfPresent(Button.self, forKey: .secondaryAction)
        action = try container.decodeIfPresent(Action.self, forKey: .action)
        dismiss = try container.decodeIfPresent(Dismiss.self, forKey: .dismiss)
        slideFrom = try container.decodeIfPresent(SlideEdge.self, forKey: .slideFrom)
        orientation = try container.decodeIfPresent(Orientation.self, forKey: .orientation)
        translations = try container.decodeIfPresent([String: MessageTranslation].self, forKey: .translations)
    }

    public enum Layout: String, Codable, Sendable, CaseIterable {
        case card, modal, imageOnly = "image_only", banner, slideup, fullscreen

        public var title: String {
            switch self {
            case .card: "Card"
            case .modal: "Modal"
            case .imageOnly: "Image only"
            case .banner: "Banner"
            case .slideup: "Slide-up"
            case .fullscreen: "Full screen"
            }
        }

        public var summary: String {
            switch self {
            case .card: "Title, image and one or two buttons on a card over the app."
            case .modal: "A centered dialog with a title, optional image and one button."
            case .imageOnly: "Just an image; tapping it can open a link."
            case .banner: "A strip at the top that hides itself after a few seconds."
            case .slideup: "A short note that slides in from the top or bottom edge."
            case .fullscreen: "Covers the screen: image, title, text and up to two buttons."
            }
        }

        /// The message fields this layout uses; others are dropped when saving.
        public var fields: Set<Field> {
            switch self {
            case .card: [.title, .body, .imageUrl, .landscapeImageUrl, .backgroundColor, .primaryAction, .secondaryAction]
            case .modal: [.title, .body, .imageUrl, .backgroundColor, .primaryAction]
            case .imageOnly: [.imageUrl, .action]
            case .banner: [.title, .body, .imageUrl, .backgroundColor, .action, .dismiss]
            case .slideup: [.body, .imageUrl, .action, .slideFrom, .dismiss]
            case .fullscreen: [.title, .body, .imageUrl, .backgroundColor, .primaryAction, .secondaryAction, .orientation]
            }
        }

        /// Seconds before an automatic dismissal, for layouts that have one.
        public var defaultDismissSeconds: Int? {
            switch self {
            case .banner: 12
            case .slideup: 8
            default: nil
            }
        }
    }

    public enum Field: String, Sendable, CaseIterable {
        case title, body, imageUrl, landscapeImageUrl, backgroundColor, primaryAction, secondaryAction, action, dismiss, slideFrom, orientation
    }

    public struct Text: Codable, Sendable, Equatable {
        public var text: String
        public var color: String?

        public init(text: String, color: String? = nil) {
            self.text = text
            self.color = color
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case text, color }

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(knownKeys: CodingKeys.self)
            text = try container.decode(String.self, forKey: .text)
            color = try container.decodeIfPresent(String.self, forKey: .color)
        }
    }

    public struct Button: Codable, Sendable, Equatable {
        public var text: String
        public var textColor: String?
        public var buttonColor: String?
        /// An https URL or an app deep link; a secondary button without one dismisses the message.
        public var url: String?

        public init(text: String, textColor: String? = nil, buttonColor: String? = nil, url: String? = nil) {
            self.text = text
            self.textColor = textColor
            self.buttonColor = buttonColor
            self.url = url
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case text, textColor, buttonColor, url }

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(knownKeys: CodingKeys.self)
            text = try container.decode(String.self, forKey: .text)
            textColor = try container.decodeIfPresent(String.self, forKey: .textColor)
            buttonColor = try container.decodeIfPresent(String.self, forKey: .buttonColor)
            url = try container.decodeIfPresent(String.self, forKey: .url)
        }
    }

    public struct Action: Codable, Sendable, Equatable {
        public var url: String

        public init(url: String) {
            self.url = url
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case url }

        public init(from decoder: Decoder) throws {
            url = try decoder.container(knownKeys: CodingKeys.self).decode(String.self, forKey: .url)
        }
    }

    public struct Dismiss: Codable, Sendable, Equatable {
        public var seconds: Int

        public init(seconds: Int) {
            self.seconds = seconds
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case seconds }

        public init(from decoder: Decoder) throws {
            seconds = try decoder.container(knownKeys: CodingKeys.self).decode(Int.self, forKey: .seconds)
        }
    }

    public enum SlideEdge: String, Codable, Sendable, CaseIterable {
        case top, bottom
    }

    public enum Orientation: String, Codable, Sendable, CaseIterable {
        case any, portrait, landscape
    }

    /// This message with the fields its layout does not use removed.
    public var keepingLayoutFields: Message {
        let fields = layout.fields
        var message = Message(layout: layout)
        if fields.contains(.title) { message.title = title }
        if fields.contains(.body) { message.body = body }
        if fields.contains(.imageUrl) { message.imageUrl = imageUrl }
        if fields.contains(.landscapeImageUrl) { message.landscapeImageUrl = landscapeImageUrl }
        if fields.contains(.backgroundColor) { message.backgroundColor = backgroundColor }
        if fields.contains(.primaryAction) { message.primaryAction = primaryAction }
        if fields.contains(.secondaryAction) { message.secondaryAction = secondaryAction }
        if fields.contains(.action) { message.action = action }
        if fields.contains(.dismiss) { message.dismiss = dismiss }
        if fields.contains(.slideFrom) { message.slideFrom = slideFrom }
        if fields.contains(.orientation) { message.orientation = orientation }
        message.translations = translations.flatMap { versions in
            let kept = versions.mapValues { $0.keeping(fields) }
            return kept.isEmpty ? nil : kept
        }
        return message
    }
}
