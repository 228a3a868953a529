import HeraldDomain

/// A console sentence that is also read by programs or the command line: its catalog key and arguments,
/// which pages render in the reader's language, and its English, which the JSON API, the command line
/// and logs keep.
public struct Phrase: Sendable, Equatable {
    /// The full catalog key, such as `apps.errors.name_required`.
    public let key: String
    public let arguments: [String: ProblemText.Argument]

    public init(_ key: String, _ arguments: [String: ProblemText.Argument] = [:]) {
        self.key = key
        self.arguments = arguments
    }

    /// The sentence in English, from `Locales/en.json` (which the EnglishCatalog plugin writes into this
    /// module at build time, so the API and the command line need no catalog at hand); the key itself for
    /// a key en.json lacks (a test finds every such key).
    public var english: String {
        ProblemText.fill(EnglishCatalog.sentences[key] ?? key, arguments.mapValues(\.english))
    }
}

extension Localizer {
    /// The phrase in this language; its English when the catalogs lack the key (`Localizer.untranslated`).
    public func callAsFunction(_ phrase: Phrase) -> String {
        render(phrase.key, phrase.arguments) ?? phrase.english
    }

    /// A validation problem in this language, from `validation.<key>`: numbers in the language's digits,
    /// text (often the user's own) isolated from the sentence around it. A problem without a key, or one
    /// whose key no catalog has, is shown in its English.
    public func message(for problem: FieldProblem) -> String {
        problem.text.flatMap(message(for:)) ?? problem.message
    }

    /// A problem's words in this language, or nil when no catalog has its key.
    public func message(for text: ProblemText) -> String? {
        render("validation." + text.key, text.arguments)
    }

    /// Whether the catalogs (this language's or English) have `key`.
    func has(_ key: String) -> Bool {
        catalog.entries[key] != nil || english.entries[key] != nil
    }

    private func render(_ key: String, _ arguments: [String: ProblemText.Argument]) -> String? {
        guard has(key) else { return nil }
        return self(key, arguments.mapValues { argument in
            switch argument {
            case .number(let value): number(value)
            case .text(let text): Localizer.isolated(text)
            }
        })
    }
}
