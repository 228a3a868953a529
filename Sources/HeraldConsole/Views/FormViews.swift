import HeraldDomain

extension InputProblems {
    /// The summary at the top of the form: each message links to its field.
    var summary: [ErrorSummaryItem] {
        items.map { ErrorSummaryItem(fieldID: FieldView.id(for: $0.field), message: $0.message) }
    }
}

struct ErrorSummaryItem: Sendable {
    let fieldID: String
    let message: String
}

/// A form of plain fields with its error summary (setup, password change).
struct FieldsForm: Sendable {
    let fields: [FieldView]
    let errors: [ErrorSummaryItem]
}

/// One labeled input, rendered by `partials/field`: the plain fields of the account and app forms, and
/// the composer's (made from a field's description in `ComposerFields` by `ComposerInputs`).
struct FieldView: Sendable {
    let id: String
    let name: String
    let label: String
    /// A field a card calls otherwise: both labels, for the script to switch as the layout changes.
    let cardLabel: String?
    let otherLabel: String?
    let type: String
    let value: String
    /// The browser's autofill hint; nil leaves the browser to choose.
    let autocomplete: String?
    let hint: String?
    /// A text area rather than a one-line input.
    let multiline: Bool
    let required: Bool
    let error: String?
    let placeholder: String?
    let datalist: String?
    let inputMode: String?
    let isColor: Bool
    /// The SVG fill for the swatch (`#RRGGBB`) and its opacity, for `#AARRGGBB` colors.
    let swatchFill: String?
    let swatchOpacity: String
    /// The message layouts that use the field (nil: all), so the composer's script shows only the chosen
    /// layout's fields.
    let usedByLayouts: String?
    let hidden: Bool
    /// The hint and the error, for `aria-describedby`, so screen readers read both.
    let describedBy: String?
    /// The id of the radio button that typing into this field chooses (the composer's script does it).
    let chooses: String?
    /// A language version's text input: its language and direction.
    let inputLang: String?
    let inputDir: String
    /// A language version's field: the default version's input it falls back to, and whether it sets its own value.
    let fallsBackTo: String?
    let overrides: Bool
}

extension FieldView {
    /// A plain required text input, with its problem from `errors`.
    init(
        _ name: String, label: String, type: String = "text", value: String = "", autocomplete: String = "off",
        hint: String? = nil, required: Bool = true, errors: InputProblems = InputProblems()
    ) {
        let id = Self.id(for: name)
        let error = errors.message(for: name)
        let described = [hint.map { _ in "\(id)-hint" }, error.map { _ in "\(id)-error" }].compactMap { $0 }
        self.init(
            id: id, name: name, label: label, cardLabel: nil, otherLabel: nil, type: type, value: value,
            autocomplete: autocomplete, hint: hint, multiline: false, required: required, error: error, placeholder: nil,
            datalist: nil, inputMode: nil, isColor: false, swatchFill: nil, swatchOpacity: "1", usedByLayouts: nil,
            hidden: false, describedBy: described.isEmpty ? nil : described.joined(separator: " "), chooses: nil,
            inputLang: nil, inputDir: "auto", fallsBackTo: nil, overrides: false)
    }

    static func id(for name: String) -> String {
        "field-" + name.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
    }
}

/// One checkbox or radio option, rendered by `partials/checkbox` (or as a radio button).
struct ChoiceView: Sendable {
    let id: String
    let name: String
    let value: String
    let label: String
    let hint: String?
    let checked: Bool

    init(name: String, value: String, label: String, hint: String? = nil, checked: Bool) {
        self.id = FieldView.id(for: "\(name)-\(value)")
        self.name = name
        self.value = value
        self.label = label
        self.hint = hint
        self.checked = checked
    }
}

/// Pagination links for long lists.
struct PaginationView: Sendable {
    let page: Int
    let pageCount: Int
    let previousHref: String?
    let nextHref: String?
    /// "Page 2 of 5", in the page's language and digits.
    let pageText: String

    /// nil when everything fits on one page.
    static func make(page: Int, pageSize: Int, total: Int, localizer: Localizer, href: (Int) -> String) -> PaginationView? {
        let pageCount = max(1, (total + pageSize - 1) / pageSize)
        guard pageCount > 1 else { return nil }
        return PaginationView(
            page: page, pageCount: pageCount,
            previousHref: page > 1 ? href(page - 1) : nil,
            nextHref: page < pageCount ? href(page + 1) : nil,
            pageText: localizer("common.pagination.page_of", ["page": localizer.number(page), "count": localizer.number(pageCount)]))
    }
}

/// Plain-text rules shared by the forms and the command line.
enum InputRules {
    static let minimumPasswordLength = 10
    static let maximumPasswordBytes = 1024

    static func emailProblem(_ email: String) -> Phrase? {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        if email.isEmpty { return Phrase("accounts.errors.email_required") }
        if parts.count != 2 || parts[0].isEmpty || !parts[1].contains(".") || email.contains(" ") || email.scalarCount > 254
            || ControlCharacters.first(in: email, multiline: false) != nil {
            return Phrase("accounts.errors.email_invalid")
        }
        return nil
    }

    /// A one-line name (of an app, a key, a test device, a person) holding a control character: not text in
    /// any script, and a NUL cuts text short in SQLite's C API.
    static func controlCharacterProblem(_ name: String) -> Phrase? {
        ControlCharacters.first(in: name, multiline: false).map {
            let character = ControlCharacters.name($0)
            return Phrase("validation.control_character_one_line", ["character": .text(character)])
        }
    }

    static func passwordProblem(_ password: String) -> Phrase? {
        if password.count < minimumPasswordLength {
            return Phrase("accounts.errors.password_short", ["count": .number(minimumPasswordLength)])
        }
        if password.utf8.count > maximumPasswordBytes {
            return Phrase("accounts.errors.password_long", ["count": .number(maximumPasswordBytes)])
        }
        return nil
    }
}
