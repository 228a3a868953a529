import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Mustache
import Synchronization

/// Renders pages: the page's template with its model, then the layout around it.
struct Views: Sendable {
    /// The templates as written: `{{t.…}}` is looked up in the model's `t` as it renders.
    private let library: MustacheLibrary
    /// The templates with each `{{t.…}}` already written in a language's words, per language: a page
    /// then skips a lookup through every enclosing context for each of them (a report page has ~70).
    private let translated: [ConsoleLanguage: MustacheLibrary]

    /// Loads `folder` and checks that every `Template` is there; a missing or broken one fails the boot.
    init(folder: URL, catalogs: [ConsoleLanguage: StringCatalog]) throws {
        MustacheContentTypes.register(EscapedHTML(), named: EscapedHTML.name)
        let sources = try Self.read(folder)
        let library = try Self.library(sources)
        let missing = Template.allCases.filter { library.getTemplate(named: $0.rawValue) == nil }
        guard missing.isEmpty else {
            throw ViewsError.missing(missing.map { "\($0.rawValue).mustache" }, folder: folder.path)
        }
        var translated: [ConsoleLanguage: MustacheLibrary] = [:]
        for (language, catalog) in catalogs {
            translated[language] = try Self.library(sources.map { ($0.name, Self.writingStrings($0.text, catalog)) })
        }
        self.library = library
        self.translated = translated
    }

    /// Every `.mustache` file under `folder`, by its path without the extension.
    private static func read(_ folder: URL) throws -> [(name: String, text: String)] {
        let root = folder.standardizedFileURL.path + "/"
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".mustache") } ?? []
        return try files.sorted().map { file in
            do {
                return (String(file.dropLast(".mustache".count)), try String(contentsOfFile: root + file, encoding: .utf8))
            } catch {
                throw ViewsError.broken(file: file, line: 0, column: 0, reason: "unreadable: \(error.localizedDescription)")
            }
        }
    }

    /// The templates, each escaping what it writes with `Markup.escape`. Mustache's own escaping reads
    /// characters, so a quote followed by a combining mark passed through unescaped and closed the
    /// attribute it was in; the content type is chosen by a pragma at the top of each template (a
    /// partial starts with Mustache's again).
    private static func library(_ sources: [(name: String, text: String)]) throws -> MustacheLibrary {
        let pragma = "{{% CONTENT_TYPE: \(EscapedHTML.name) }}\n"
        var library = MustacheLibrary()
        for (name, text) in sources {
            do {
                library.register(try MustacheTemplate(string: pragma + text), named: name)
            } catch let error as MustacheTemplate.ParserError {
                // The pragma is a line of its own, so the file's lines are one less than the parser's.
                throw ViewsError.broken(
                    file: name + ".mustache", line: error.context.lineNumber - 1, column: error.context.columnNumber, reason: "\(error.error)")
            }
        }
        return library
    }

    /// `text` with each `{{t.key}}` replaced by the catalog's string for `key`, escaped as Mustache would
    /// write it. A key the catalog lacks, or a string that would read as a tag, is left to the lookup.
    static func writingStrings(_ text: String, _ catalog: StringCatalog) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count + text.utf8.count / 2)
        var rest = text[...]
        while let open = rest.range(of: "{{t.") {
            result += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else { break }
            let key = String(rest[open.upperBound..<close.lowerBound])
            // `{{{t.…}}}` (unescaped) is left as it is.
            let tripled = open.lowerBound > text.startIndex && text[text.index(before: open.lowerBound)] == "{"
            if !tripled, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-") }),
               case .text(let string) = catalog.entries[key] {
                let written = Markup.escape(string)
                result += written.contains("{{") || written.contains("}}") ? rest[open.lowerBound..<close.upperBound] : written[...]
            } else {
                result += rest[open.lowerBound..<close.upperBound]
            }
            rest = rest[close.upperBound...]
        }
        result += rest
        return result
    }

    /// `object` rendered with `template`; with the templates written in `language` when given.
    func render(_ template: Template, _ object: Any, language: ConsoleLanguage? = nil) -> String {
        let templates = language.flatMap { translated[$0] } ?? library
        // Every template was checked at start, so a nil here cannot happen.
        return templates.render(Self.prepared(object) ?? object, withTemplate: template.rawValue) ?? ""
    }

    /// The model with our view structs turned into dictionaries, each read once with `Mirror`; nil for
    /// a nil optional. Mustache reads a struct's field through a new `Mirror` on every lookup, and
    /// again for each enclosing context while it searches outward: a 90-day report page spent 60 % of
    /// its time there. Dictionaries answer by hash.
    static func prepared(_ value: Any) -> Any? {
        // Most values are text or numbers, and a `Mirror` made only to learn that costs more than the
        // rest of their rendering (a 90-day report has thousands).
        switch value {
        case is String, is Int, is Bool: return value
        case let view as TemplateFields:
            assert(
                view.templateFields.map(\.0) == Mirror(reflecting: view).children.compactMap(\.label),
                "\(type(of: view)).templateFields must name every stored field, in order")
            return fields(view.templateFields)
        default: break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct where isOwn(type(of: value)):
            return fields(mirror.children.compactMap { child in child.label.map { ($0, child.value) } })
        case .collection where value is [Any]:
            return mirror.children.map { prepared($0.value) ?? $0.value }
        case .optional:
            return mirror.children.first.flatMap { prepared($0.value) }
        default:
            return value
        }
    }

    /// A view's fields as a dictionary, each prepared. A nil field is left out: Mustache then looks in the
    /// enclosing contexts, as it does when it reflects a nil field itself.
    private static func fields(_ named: [(String, Any)]) -> [String: Any] {
        var fields: [String: Any] = [:]
        fields.reserveCapacity(named.count)
        for (label, value) in named {
            guard let field = prepared(value) else { continue }
            fields[label] = field
        }
        return fields
    }

    private static let ownModule = String(reflecting: Views.self).prefix { $0 != "." } + "."
    /// Which types are this module's, by type: writing a type's name to find its module cost a tenth
    /// of a report page. The program's types are finite, so this stays small.
    private static let ownTypes = Mutex<[ObjectIdentifier: Bool]>([:])

    private static func isOwn(_ type: Any.Type) -> Bool {
        let key = ObjectIdentifier(type)
        if let known = ownTypes.withLock({ $0[key] }) { return known }
        let own = String(reflecting: type).hasPrefix(ownModule)
        ownTypes.withLock { $0[key] = own }
        return own
    }
}

/// A view that lists its fields for the templates itself, so `Views.prepared` need not reflect it: a
/// 90-day report has a few hundred such rows, metrics and ticks, and `Mirror` read each field at about a
/// microsecond. Debug builds check the list against the reflected fields whenever one is rendered.
protocol TemplateFields {
    /// Every stored field, by name, in declaration order.
    var templateFields: [(String, Any)] { get }
}

/// HTML escaping for every template (`Views.load`).
struct EscapedHTML: MustacheContentType {
    static let name = "HERALD_HTML"

    func escapeText(_ text: String) -> String {
        Markup.escape(text)
    }
}

enum ViewsError: Error, CustomStringConvertible {
    case missing([String], folder: String)
    case broken(file: String, line: Int, column: Int, reason: String)

    var description: String {
        switch self {
        case .missing(let names, let folder):
            "templates: missing in \(folder): \(names.joined(separator: ", "))"
        case .broken(let file, let line, let column, let reason):
            "templates: \(file):\(line):\(column) does not parse: \(reason)"
        }
    }
}

/// What a page template sees: its model as `page`, the CSRF token as `csrf` for its forms, and the
/// strings of the page's language as `t` (`{{t.campaigns.index.title}}`).
struct PageView: @unchecked Sendable {
    let page: any Sendable
    let csrf: String
    /// Read-only once built (the catalog's nested dictionaries).
    let t: [String: Any]
}

/// What the layout sees.
struct LayoutView {
    struct Navigation {
        let href: String
        let label: String
        let current: Bool
    }

    struct SignedInUser {
        let email: String
        let name: String
        let role: String
    }

    struct Flash {
        let kind: String
        let message: String
        /// `alert` for errors, so screen readers announce them at once; `status` otherwise.
        let ariaRole: String
    }

    let title: String
    let body: String
    let t: [String: Any]
    /// The script's strings in the page's language, JSON for `<body data-strings>` (escaped as any attribute).
    let scriptStrings: String
    /// `<html lang dir>`.
    let lang: String
    let dir: String
    let user: SignedInUser?
    let navigation: [Navigation]
    let flash: Flash?
    let csrf: String
}

/// A short message shown once on the next page (after a redirect).
enum FlashKind: String {
    case success, error, info
}
