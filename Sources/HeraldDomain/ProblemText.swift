/// What is wrong, in words two audiences read: a stable key with its arguments, which the console renders
/// from `validation.<key>` in the reader's language, and the English sentence the API, the command line
/// and logs show (`message`), from the same `validation.<key>` of `Locales/en.json`, which the
/// EnglishCatalog plugin writes into this module at build time.
public struct ProblemText: Sendable, Equatable {
    /// A value a sentence names: a number (written in the reader's digits) or text (isolated in the
    /// sentence, as it may be user text in another script).
    public enum Argument: Sendable, Equatable {
        case number(Int)
        case text(String)

        /// The value as an English sentence writes it.
        public var english: String {
            switch self {
            case .number(let value): String(value)
            case .text(let text): text
            }
        }
    }

    public let key: String
    public let arguments: [String: Argument]

    public init(_ key: String, _ arguments: [String: Argument] = [:]) {
        self.key = key
        self.arguments = arguments
    }

    /// The English sentence; the key itself for a key en.json lacks (a test finds every such key).
    public var message: String {
        Self.fill(EnglishCatalog.sentences["validation." + key] ?? key, arguments.mapValues(\.english))
    }

    /// Fills `{name}` with `arguments[name]`; a name without a value stays as written.
    public static func fill(_ template: String, _ arguments: [String: String]) -> String {
        arguments.isEmpty ? template : fill(template) { arguments[$0] }
    }

    /// Fills `{name}` with `value(name)`; a name it answers nil for stays as written. For one text filled
    /// many times on a page (a chart's day titles), where a dictionary of arguments for each costs more
    /// than the filling.
    public static func fill(_ template: String, _ value: (String) -> String?) -> String {
        // Over the UTF-8 bytes, copying the text between names whole: braces are ASCII, so every index
        // found is a character boundary, and a page fills hundreds of strings.
        let bytes = template.utf8
        let (openBrace, closeBrace) = (UInt8(ascii: "{"), UInt8(ascii: "}"))
        guard var open = bytes.firstIndex(of: openBrace) else { return template }
        var result = ""
        result.reserveCapacity(bytes.count + 32)
        var copied = bytes.startIndex
        while true {
            let nameStart = bytes.index(after: open)
            guard let end = bytes[nameStart...].firstIndex(where: { $0 == openBrace || $0 == closeBrace }) else { break }
            // "{a{b}": the first brace opens nothing and stays as it is.
            if bytes[end] == openBrace {
                open = end
                continue
            }
            let afterEnd = bytes.index(after: end)
            // A name with no argument stays as written.
            if let value = value(String(template[nameStart..<end])) {
                result += template[copied..<open]
                result += value
                copied = afterEnd
            }
            guard let next = bytes[afterEnd...].firstIndex(of: openBrace) else { break }
            open = next
        }
        result += template[copied...]
        return result
    }
}
