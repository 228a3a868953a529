import Foundation
import HeraldDomain

/// One framed preview document: a device frame with the message drawn as the delivery component draws it
/// (`preview/frame.mustache`), and the generated color rules its `<style nonce>` carries.
struct PreviewDocument: Sendable {
    let nonce: String
    /// The console's language, for the frame's own words (the message has its own `lang`).
    let uiLang: String
    let uiDir: String
    let problemsHeading: String
    /// The close button's name and tooltip, in the console's language (the button is the device's chrome).
    let closeLabel: String
    let closeTitle: String
    /// CSS built only from fixed selectors and colors that passed `ColorValue`; never other user input.
    let rules: String
    let documentTitle: String
    let device: String
    let orientation: String
    let theme: String
    let screenWidth: Int
    let screenHeight: Int
    let caption: String
    /// Why a device would drop this message (empty when it would show).
    let problems: [PreviewProblem]
    let wouldDisplay: Bool
    /// Set when the frame's orientation is one the message is locked out of; the message is then not drawn.
    let orientationNotice: OrientationNotice?
    let message: MessageView?
    /// Nothing to draw yet (the composer before its first preview).
    let placeholder: String?
}

/// One reason a device would drop the message: the field (as the composer labels it) and what is wrong.
struct PreviewProblem: Sendable, Equatable {
    let field: String
    let message: String
}

struct OrientationNotice: Sendable {
    let heading: String
    let text: String
}

/// What the layout partials draw. Buttons are in visual order: leading (secondary) first.
struct MessageView: Sendable {
    let layout: String
    /// `rtl` when the message's text is written right to left, so the whole layout mirrors.
    let direction: String
    /// The language version drawn, or "" for the default version, whose language is not recorded: `lang=""`
    /// says "unknown", so the message does not take the console's language from the frame document.
    let messageLang: String
    let dimmed: Bool
    let title: String?
    let body: String?
    let image: ImageView?
    let buttons: [ButtonView]
    let hasButtons: Bool
    /// The title attribute of a message that is one tap target (image only, banner, slide-up).
    let tapHint: String?
    let chevron: Bool
    let edge: String?
    let split: Bool
    let isCard: Bool
    let isModal: Bool
    let isImageOnly: Bool
    let isBanner: Bool
    let isSlideup: Bool
    let isFullscreen: Bool
}

struct ImageView: Sendable {
    /// Nil when there is nothing a device would load: the placeholder alone is drawn.
    let url: String?
    /// `portrait` or `landscape` (the card's two images), otherwise `image`.
    let kind: String
    let label: String
    /// What the placeholder says when the image does not load (preview.css draws it from `data-unloaded`).
    let unloadedLabel: String
    let missing: Bool
}

struct ButtonView: Sendable {
    let role: String
    let text: String
    /// Where the button would go, shown on hover; preview buttons never navigate.
    let hint: String
    let href: String
}

/// Builds the preview of a message for a frame. Pure: the same message and frame always give the same document.
enum MessagePreview {
    /// Draw the message as devices would. `problems` are what would make a device drop it (shown above the frame);
    /// `showsImage` decides which image addresses are loaded (https only, as devices do).
    /// `language` names the language version drawn (its tag); the message is then laid out in that
    /// language's direction.
    static func document(
        _ message: Message, frame: PreviewFrame, problems: [PreviewProblem], nonce: String, localizer: Localizer,
        language: String? = nil, showsImage: (String) -> Bool = { ImageURL.problem($0) == nil }
    ) -> PreviewDocument {
        let screen = frame.screen
        var caption = frame.caption(localizer)
        if let seconds = message.dismiss?.seconds ?? message.layout.defaultDismissSeconds,
           message.layout == .banner || message.layout == .slideup {
            let key = message.layout == .slideup ? "preview.hides_after_or_swipe" : "preview.hides_after"
            caption = localizer("preview.caption_more", ["caption": caption, "more": localizer(key, ["seconds": localizer.number(seconds)])])
        }

        var notice: OrientationNotice?
        if message.layout == .fullscreen, let lock = message.orientation, lock != .any, lock.rawValue != frame.orientation.rawValue {
            let held = localizer("preview.orientation_words.\(frame.orientation.rawValue)")
            let locked = localizer("preview.orientation_words.\(lock.rawValue)")
            notice = OrientationNotice(
                heading: localizer("preview.notice.heading", ["orientation": held]),
                text: localizer("preview.notice.text", ["lock": locked, "orientation": held]))
        }

        return PreviewDocument(
            nonce: nonce, uiLang: localizer.language.rawValue, uiDir: localizer.language.direction,
            problemsHeading: localizer("preview.problems_heading"),
            closeLabel: localizer("preview.close.label"), closeTitle: localizer("preview.close.title"), rules: notice == nil ? PreviewColors.rules(for: message) : "",
            documentTitle: localizer("preview.document_title", [
                "layout": localizer(ComposerFields.layout.optionKey(message.layout.rawValue)), "frame": frame.caption(localizer),
            ]),
            device: frame.device.rawValue, orientation: frame.orientation.rawValue, theme: frame.theme.rawValue,
            screenWidth: screen.width, screenHeight: screen.height, caption: caption,
            problems: problems, wouldDisplay: problems.isEmpty, orientationNotice: notice,
            message: notice == nil ? view(message, frame: frame, localizer: localizer, language: language, showsImage: showsImage) : nil,
            placeholder: nil)
    }

    /// A frame with nothing in it yet, and a line saying how to fill it.
    static func empty(frame: PreviewFrame, nonce: String, localizer: Localizer, text: String) -> PreviewDocument {
        let screen = frame.screen
        return PreviewDocument(
            nonce: nonce, uiLang: localizer.language.rawValue, uiDir: localizer.language.direction,
            problemsHeading: localizer("preview.problems_heading"),
            closeLabel: localizer("preview.close.label"), closeTitle: localizer("preview.close.title"), rules: "", documentTitle: localizer("preview.title"), device: frame.device.rawValue,
            orientation: frame.orientation.rawValue, theme: frame.theme.rawValue, screenWidth: screen.width,
            screenHeight: screen.height, caption: frame.caption(localizer), problems: [], wouldDisplay: true, orientationNotice: nil,
            message: nil, placeholder: text)
    }

    static func view(
        _ message: Message, frame: PreviewFrame, localizer: Localizer, language: String? = nil, showsImage: (String) -> Bool
    ) -> MessageView {
        let layout = message.layout
        let landscape = frame.orientation == .landscape
        func present(_ text: String?) -> String? {
            guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
            return text
        }
        let title = layout == .imageOnly || layout == .slideup ? nil : present(message.title?.text)
        let body = layout == .imageOnly ? nil : present(message.body?.text)

        let image = imageView(message, landscape: landscape, localizer: localizer, showsImage: showsImage)

        var buttons: [ButtonView] = []
        if layout == .card || layout == .fullscreen, let secondary = message.secondaryAction, let text = present(secondary.text) {
            let url = present(secondary.url)
            buttons.append(ButtonView(role: "secondary", text: text, hint: url.map { localizer("preview.opens", ["url": $0]) } ?? localizer("preview.dismisses"), href: url ?? ""))
        }
        if [.card, .modal, .fullscreen].contains(layout), let primary = message.primaryAction, let text = present(primary.text) {
            let url = present(primary.url)
            buttons.append(ButtonView(role: "primary", text: text, hint: url.map { localizer("preview.opens", ["url": $0]) } ?? localizer("preview.no_action"), href: url ?? ""))
        }

        let action = [.imageOnly, .banner, .slideup].contains(layout) ? present(message.action?.url) : nil
        let texts = [title, body] + buttons.map { Optional($0.text) }
        return MessageView(
            layout: layout.rawValue,
            direction: language.map { LanguageTag.isRightToLeft($0) ? "rtl" : "ltr" } ?? TextDirection.of(texts.compactMap { $0 }),
            messageLang: language ?? "",
            dimmed: [.card, .modal, .imageOnly, .fullscreen].contains(layout), title: title, body: body, image: image,
            buttons: buttons, hasButtons: !buttons.isEmpty, tapHint: action.map { localizer("preview.tap_opens", ["url": $0]) },
            chevron: layout == .slideup && action != nil,
            edge: layout == .slideup ? (message.slideFrom ?? .bottom).rawValue : nil,
            split: landscape && (layout == .card || (layout == .modal && image != nil)),
            isCard: layout == .card, isModal: layout == .modal, isImageOnly: layout == .imageOnly, isBanner: layout == .banner,
            isSlideup: layout == .slideup, isFullscreen: layout == .fullscreen)
    }

    /// The card shows its landscape image in landscape and falls back to the portrait one; other layouts have one image.
    /// A required image that is missing or unusable is a labeled placeholder of the same proportions.
    private static func imageView(_ message: Message, landscape: Bool, localizer: Localizer, showsImage: (String) -> Bool) -> ImageView? {
        func blank(_ value: String?) -> Bool { (value ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        let layout = message.layout
        guard layout.fields.contains(.imageUrl) else { return nil }
        let required = [.card, .imageOnly, .fullscreen].contains(layout)
        var url = message.imageUrl
        var kind = layout == .card ? "portrait" : "image"
        var name = localizer(layout == .card ? "preview.images.portrait" : "preview.images.image")
        if layout == .card && landscape {
            if !blank(message.landscapeImageUrl) {
                url = message.landscapeImageUrl
                kind = "landscape"
                name = localizer("preview.images.landscape")
            } else {
                name = localizer("preview.images.portrait_no_landscape")
            }
        }
        guard let url, !blank(url) else {
            return required ? ImageView(url: nil, kind: kind, label: localizer("preview.images.missing", ["image": name]), unloadedLabel: "", missing: true) : nil
        }
        guard showsImage(url) else {
            return ImageView(url: nil, kind: kind, label: localizer("preview.images.not_https", ["image": name]), unloadedLabel: "", missing: true)
        }
        return ImageView(url: url, kind: kind, label: name, unloadedLabel: localizer("preview.images.unloaded", ["image": name]), missing: false)
    }
}

/// Message colors as CSS. Herald stores `#AARRGGBB` (alpha first, as Android and FIAM do); CSS wants `#RRGGBBAA`.
enum PreviewColors {
    /// The CSS form of a valid stored color, or nil for anything else (which then never reaches the style sheet).
    static func css(_ color: String?) -> String? {
        guard let color, ColorValue.problem(color) == nil else { return nil }
        let hex = color.dropFirst().uppercased()
        return hex.count == 8 ? "#" + hex.dropFirst(2) + hex.prefix(2) : "#" + hex
    }

    /// The rules for this message's colors; parts without a valid color keep the delivery component's defaults.
    static func rules(for message: Message) -> String {
        let fields = message.layout.fields
        var rules: [String] = []
        func rule(_ selector: String, _ declarations: [(String, String?)]) {
            let set = declarations.compactMap { property, color in css(color).map { "\(property):\($0)" } }
            if !set.isEmpty { rules.append(".preview-doc \(selector){\(set.joined(separator: ";"))}") }
        }
        if fields.contains(.backgroundColor) { rule(".m-surface", [("background-color", message.backgroundColor)]) }
        if fields.contains(.title) { rule(".m-title", [("color", message.title?.color)]) }
        if fields.contains(.body) { rule(".m-body", [("color", message.body?.color)]) }
        for (role, button, field) in [("primary", message.primaryAction, Message.Field.primaryAction),
                                      ("secondary", message.secondaryAction, Message.Field.secondaryAction)]
        where fields.contains(field) {
            rule(".m-button-\(role)", [("background-color", button?.buttonColor), ("color", button?.textColor)])
        }
        return rules.joined(separator: "\n")
    }
}

/// The direction a message reads in, from its first strongly directional letter (as `dir="auto"` decides).
enum TextDirection {
    static func of(_ texts: [String]) -> String {
        for text in texts {
            // Digits, punctuation and emoji are weak or neutral: they do not decide.
            for scalar in text.unicodeScalars where scalar.properties.isAlphabetic {
                return isRightToLeft(scalar) ? "rtl" : "ltr"
            }
        }
        return "ltr"
    }

    /// Hebrew, Arabic, Syriac, Thaana, N'Ko, Samaritan, Mandaic and their presentation forms.
    static func isRightToLeft(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: true
        default: false
        }
    }
}
