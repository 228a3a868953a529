import Foundation

/// One language's strings, from `Locales/<tag>.json`: nested objects whose leaves are strings, keyed by
/// their dotted path (`campaigns.index.title`). A string may name arguments in braces (`{count}`); an
/// object whose keys are CLDR plural categories (`one`, `other`, …) is one string with plural forms.
struct StringCatalog: @unchecked Sendable {
    enum Entry: Equatable, Sendable {
        case text(String)
        case plural([PluralCategory: String])
    }

    let language: ConsoleLanguage
    let entries: [String: Entry]
    /// The plain strings as nested dictionaries, for templates: `{{t.campaigns.index.title}}`. Built once;
    /// only read after that (hence `@unchecked Sendable`: `[String: Any]` is what Mustache reads).
    let templateStrings: [String: Any]
    /// The `script` section as JSON, for the `data-strings` attribute of every page's `<body>`.
    let scriptStrings: String

    init(language: ConsoleLanguage, entries: [String: Entry]) {
        self.language = language
        self.entries = entries
        var nested: [String: Any] = [:]
        for (key, entry) in entries {
            guard case .text(let text) = entry else { continue }
            Self.insert(text, at: key.split(separator: ".").map(String.init)[...], into: &nested)
        }
        templateStrings = nested
        scriptStrings = Self.scriptJSON(nested["script"] as? [String: Any] ?? [:])
    }

    private static func scriptJSON(_ strings: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: strings, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    private static func insert(_ text: String, at path: ArraySlice<String>, into object: inout [String: Any]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            object[first] = text
        } else {
            var child = object[first] as? [String: Any] ?? [:]
            insert(text, at: path.dropFirst(), into: &child)
            object[first] = child
        }
    }

    /// Reads a catalog file; a file that is not such an object fails with the path of what is wrong.
    init(language: ConsoleLanguage, contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw StringCatalogError.unreadable(file: url.lastPathComponent, reason: "\(error.localizedDescription)")
        }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw StringCatalogError.unreadable(file: url.lastPathComponent, reason: "not a JSON object")
        }
        var entries: [String: Entry] = [:]
        try Self.flatten(root, prefix: "", file: url.lastPathComponent, into: &entries)
        self.init(language: language, entries: entries)
    }

    private static func flatten(_ object: [String: Any], prefix: String, file: String, into entries: inout [String: Entry]) throws {
        for (name, value) in object {
            let key = prefix.isEmpty ? name : prefix + "." + name
            guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }), !name.isEmpty else {
                throw StringCatalogError.unreadable(file: file, reason: "`\(key)`: a key has only letters, digits and _")
            }
            if let text = value as? String {
                entries[key] = .text(text)
            } else if let child = value as? [String: Any] {
                let categories = child.keys.compactMap(PluralCategory.init(rawValue:))
                if categories.count == child.count, child["other"] != nil {
                    var forms: [PluralCategory: String] = [:]
                    for category in categories {
                        guard let form = child[category.rawValue] as? String else {
                            throw StringCatalogError.unreadable(file: file, reason: "`\(key).\(category.rawValue)` is not a string")
                        }
                        forms[category] = form
                    }
                    entries[key] = .plural(forms)
                } else {
                    try flatten(child, prefix: key, file: file, into: &entries)
                }
            } else {
                throw StringCatalogError.unreadable(file: file, reason: "`\(key)` is neither a string nor an object")
            }
        }
    }

    /// The pseudo-language: each English string marked ⟦…⟧ and its letters accented, arguments kept.
    static func pseudo(from english: StringCatalog) -> StringCatalog {
        var entries: [String: Entry] = [:]
        for (key, entry) in english.entries {
            switch entry {
            case .text(let text): entries[key] = .text(pseudo(text))
            case .plural(let forms): entries[key] = .plural(forms.mapValues(pseudo))
            }
        }
        return StringCatalog(language: .pseudo, entries: entries)
    }

    private static func pseudo(_ text: String) -> String {
        var result = "⟦"
        var inArgument = false
        for character in text {
            if character == "{" { inArgument = true }
            if character == "}" { inArgument = false }
            result.append(inArgument ? character : (accented[character] ?? character))
        }
        return result + "⟧"
    }

    private static let accented: [Character: Character] = Dictionary(
        uniqueKeysWithValues: zip("aceinosuyACEINOSUY", "ȧƈḗīƞǿşŭẏȦƇḖĪƝǾŞŬẎ"))

    /// The argument names a string uses, `{name}`.
    static func arguments(in text: String) -> Set<String> {
        var names: Set<String> = []
        var current: String?
        for character in text {
            if character == "{" {
                current = ""
            } else if character == "}", let name = current {
                names.insert(name)
                current = nil
            } else if current != nil {
                current?.append(character)
            }
        }
        return names
    }
}

enum StringCatalogError: Error, CustomStringConvertible {
    case unreadable(file: String, reason: String)
    case missing(file: String)

    var description: String {
        switch self {
        case .unreadable(let file, let reason): "locales: \(file) does not load: \(reason)"
        case .missing(let file): "locales: \(file) is missing"
        }
    }
}
