import Foundation

/// A language the console speaks, by its BCP 47 tag; each has a string catalog `Locales/<tag>.json`.
public enum ConsoleLanguage: String, CaseIterable, Sendable {
    case en, de, fa, ar, ja
    /// A made-up language for tests: every catalog string of English, marked and stretched, so a test can
    /// find text on a page that did not come from the catalog. Offered only when the configuration asks.
    case pseudo = "en-XA"

    /// The languages users can choose.
    public static let offered: [ConsoleLanguage] = [.en, .de, .fa, .ar, .ja]

    /// The language's own name for itself, so a user who cannot read the current one still finds theirs.
    public var nativeName: String {
        switch self {
        case .en: "English"
        case .de: "Deutsch"
        case .fa: "فارسی"
        case .ar: "العربية"
        case .ja: "日本語"
        case .pseudo: "[Ƥşḗḗŭḓǿǿ]"
        }
    }

    public var isRightToLeft: Bool { self == .fa || self == .ar }

    /// `rtl` or `ltr`, for `<html dir>`.
    public var direction: String { isRightToLeft ? "rtl" : "ltr" }

    /// The locale numbers and dates are written in. The pseudo-language writes them as English does.
    public var locale: Locale { Locale(identifier: self == .pseudo ? "en" : rawValue) }

    /// The best offered language for an `Accept-Language` header, or nil when it names none of them.
    /// Reads at most the first 32 entries of at most 1,024 characters: a header is a hint, not a workload.
    public static func preferred(acceptLanguage header: String, among languages: [ConsoleLanguage]) -> ConsoleLanguage? {
        var best: (language: ConsoleLanguage, quality: Double)?
        for entry in header.prefix(1024).split(separator: ",").prefix(32) {
            let parts = entry.split(separator: ";")
            guard let range = parts.first?.trimmingCharacters(in: .whitespaces).lowercased(), !range.isEmpty else { continue }
            var quality: Double? = 1
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0] == "q" else { continue }
                // A weight that is not 0…1 makes the entry meaningless: it is skipped.
                quality = Double(pair[1]).flatMap { $0.isFinite && (0...1).contains($0) ? $0 : nil }
            }
            guard let quality else { continue }
            guard quality > 0,
                  let language = languages.first(where: { $0.rawValue.lowercased() == range })
                      ?? languages.first(where: { $0.matches(range: range) }) else { continue }
            // On equal quality the earlier entry wins, as the header lists them by preference.
            if quality > best?.quality ?? 0 { best = (language, quality) }
        }
        return best?.language
    }

    /// Whether an Accept-Language range (`de`, `de-AT`, `fa-IR`) asks for this language.
    private func matches(range: String) -> Bool {
        let tag = rawValue.lowercased()
        return range == tag || range.hasPrefix(tag + "-") || (self != .pseudo && range.split(separator: "-").first.map(String.init) == tag)
    }
}
