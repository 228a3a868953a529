import HeraldDomain

/// What is wrong with the input of an operation (a form, a command), by field name, in the order found;
/// thrown by the operations the console and the command line share (`Accounts`, `AppRegistry`). Each
/// message is English (what the command line prints) with, for most, its catalog phrase: a page shows
/// `localized(by:)`, the errors in the reader's language.
public struct InputProblems: Error, Sendable, CustomStringConvertible {
    public private(set) var items: [(field: String, message: String)] = []
    private var phrases: [Phrase?] = []

    public init() {}

    init(_ field: String, _ phrase: Phrase) {
        add(field, phrase)
    }

    init(_ field: String, _ message: String) {
        add(field, message)
    }

    public var isEmpty: Bool { items.isEmpty }

    mutating func add(_ field: String, _ phrase: Phrase) {
        add(field, phrase.english, shownAs: phrase)
    }

    /// A message that says more than any catalog sentence (a library's English diagnosis, which the
    /// command line prints), shown on a page as `phrase` in the reader's language.
    mutating func add(_ field: String, _ message: String, shownAs phrase: Phrase) {
        items.append((field, message))
        phrases.append(phrase)
    }

    /// A message with no phrase: shown as it is in every language.
    mutating func add(_ field: String, _ message: String) {
        items.append((field, message))
        phrases.append(nil)
    }

    public var description: String { items.map(\.message).joined(separator: " ") }

    func message(for field: String) -> String? {
        items.first { $0.field == field }?.message
    }

    /// The same errors with their messages in `localizer`'s language, for a page.
    func localized(by localizer: Localizer) -> InputProblems {
        var localized = InputProblems()
        for (item, phrase) in zip(items, phrases) {
            if let phrase {
                localized.items.append((item.field, localizer(phrase)))
                localized.phrases.append(phrase)
            } else {
                localized.add(item.field, item.message)
            }
        }
        return localized
    }
}
