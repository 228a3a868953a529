import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// Every language's catalog, loaded at start: a missing or broken catalog fails the boot, not a request.
struct Localization: Sendable {
    let catalogs: [ConsoleLanguage: StringCatalog]
    /// The languages a user may choose (and the pseudo-language when the configuration offers it).
    let languages: [ConsoleLanguage]

    init(folder: URL, pseudoLocale: Bool) throws {
        var catalogs: [ConsoleLanguage: StringCatalog] = [:]
        for language in ConsoleLanguage.offered {
            let file = folder.appendingPathComponent(language.rawValue + ".json")
            guard FileManager.default.fileExists(atPath: file.path) else { throw StringCatalogError.missing(file: file.path) }
            catalogs[language] = try StringCatalog(language: language, contentsOf: file)
        }
        var languages = ConsoleLanguage.offered
        if pseudoLocale, let english = catalogs[.en] {
            catalogs[.pseudo] = StringCatalog.pseudo(from: english)
            languages.append(.pseudo)
        }
        self.catalogs = catalogs
        self.languages = languages
    }

    /// A localizer for `language` (English when it is not offered) writing times in `timeZone`.
    func localizer(_ language: ConsoleLanguage, timeZone: TimeZone = .gmt) -> Localizer {
        let english = catalogs[.en] ?? StringCatalog(language: .en, entries: [:])
        let chosen = languages.contains(language) ? catalogs[language] ?? english : english
        return Localizer(catalog: chosen, english: english, timeZone: timeZone)
    }

    /// The localizer for a request: the user's language and time zone, else the browser's language and UTC.
    func localizer(for request: Request, user: User?) -> Localizer {
        let zone = user?.timeZone.flatMap(TimeZoneName.zone) ?? .gmt
        return localizer(language(userChoice: user?.language, acceptLanguage: request.headers["Accept-Language"]), timeZone: zone)
    }

    /// The language for a request: the user's choice, else the browser's `Accept-Language`, else English.
    func language(userChoice: String?, acceptLanguage: String?) -> ConsoleLanguage {
        if let choice = userChoice.flatMap(ConsoleLanguage.init(rawValue:)), languages.contains(choice) { return choice }
        return acceptLanguage.flatMap { ConsoleLanguage.preferred(acceptLanguage: $0, among: languages) } ?? .en
    }
}

/// The console's words, numbers and times in one language and time zone: what pages and messages use.
public struct Localizer: Sendable {
    let catalog: StringCatalog
    /// Where a string missing from `catalog` is taken from (a test fails on every missing key).
    let english: StringCatalog
    public let timeZone: TimeZone

    public var language: ConsoleLanguage { catalog.language }

    /// Before the catalogs are known (a request that fails before routing): keys stand for themselves.
    static let untranslated = Localizer(
        catalog: StringCatalog(language: .en, entries: [:]), english: StringCatalog(language: .en, entries: [:]), timeZone: .gmt)

    /// The string `key` with its `{arguments}` filled in. Wrap user text in `isolated` before passing it.
    public func callAsFunction(_ key: String, _ arguments: [String: String] = [:]) -> String {
        switch catalog.entries[key] ?? english.entries[key] {
        case .text(let text): return Self.fill(text, arguments)
        case .plural(let forms): return Self.fill(forms[.other] ?? key, arguments)
        case nil: return key
        }
    }

    /// The plural string `key` in the form its language uses for `count`, with `{count}` written in the
    /// language's digits.
    public func plural(_ key: String, count: Int, _ arguments: [String: String] = [:]) -> String {
        plural(key)(count, arguments)
    }

    /// The plural string `key`, looked up once for text written many times on a page (a chart's day titles).
    func plural(_ key: String) -> PluralForms {
        PluralForms(key: key, entry: catalog.entries[key] ?? english.entries[key], localizer: self)
    }

    struct PluralForms {
        let key: String
        let entry: StringCatalog.Entry?
        let localizer: Localizer

        func callAsFunction(_ count: Int, _ arguments: [String: String] = [:]) -> String {
            let text: String
            switch entry {
            case .plural(let forms): text = forms[PluralCategory.of(count, in: localizer.language)] ?? forms[.other] ?? key
            case .text(let single): text = single
            case nil: return key
            }
            let number = localizer.number(count)
            return ProblemText.fill(text) { $0 == "count" ? number : arguments[$0] }
        }
    }

    /// The strings of templates, `{{t.some.key}}`.
    var templateStrings: [String: Any] { catalog.templateStrings }

    /// The strings of `Public/js/herald.js` (catalog section `script`), as JSON.
    var scriptStrings: String { catalog.scriptStrings }

    public func number(_ value: Int) -> String {
        language.numberWriter?.integer(value) ?? value.formatted(.number.locale(language.locale))
    }

    public func number(_ value: Double, fractionDigits: Int = 1) -> String {
        guard value.isFinite else { return "–" }
        return value.formatted(.number.precision(.fractionLength(0...fractionDigits)).locale(language.locale))
    }

    /// A share (0.125 is 12.5 %).
    public func percent(_ share: Double) -> String {
        guard share.isFinite else { return "–" }
        return share.formatted(.percent.precision(.fractionLength(0...1)).locale(language.locale))
    }

    /// The calendar every date is written in, in every language: the Gregorian one (as date fields, CSV files
    /// and the API write days), with the language's month names and digits, in the user's time zone (or
    /// `zone`). The one definition, so a page never mixes calendars (Persian's default is the solar one).
    public func calendar(in zone: TimeZone? = nil) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.locale = language.locale
        calendar.timeZone = zone ?? timeZone
        return calendar
    }

    /// `date` written with `style`'s fields in the language and `calendar(in:)`: every date the console
    /// writes goes through here.
    public func formatted(_ date: Date, _ style: Date.FormatStyle, in zone: TimeZone? = nil) -> String {
        var style = style.locale(language.locale)
        style.calendar = calendar(in: zone)
        style.timeZone = zone ?? timeZone
        return date.formatted(style)
    }

    /// Date and time in the user's time zone (or `zone`), e.g. "21. Sept. 2026, 17:43".
    public func dateTime(_ date: Date, in zone: TimeZone? = nil) -> String {
        formatted(date, Date.FormatStyle(date: .abbreviated, time: .shortened), in: zone)
    }

    /// The day in the user's time zone (or `zone`), e.g. "21. Sept. 2026".
    public func date(_ date: Date, in zone: TimeZone? = nil) -> String {
        formatted(date, Date.FormatStyle(date: .abbreviated, time: .omitted), in: zone)
    }

    /// User text inside a translated sentence, isolated (U+2068 … U+2069) so its direction cannot reorder
    /// the words around it: a Persian name in a German sentence reads right in both.
    public static func isolated(_ text: String) -> String {
        "\u{2068}" + text + "\u{2069}"
    }

    /// The one `{name}` filler, shared with the English of validation problems.
    static func fill(_ text: String, _ arguments: [String: String]) -> String {
        ProblemText.fill(text, arguments)
    }
}
