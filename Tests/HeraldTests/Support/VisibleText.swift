import Foundation

/// The text a person reads or hears on one of our HTML pages: text nodes outside `<script>`, `<style>` and
/// `<textarea>` (whose content is what the user typed), and the attribute values browsers show or speak.
/// A small tokenizer for the pages Herald writes, not a general HTML parser: it needs tags to be closed
/// in order, which a test of Mustache output can ask.
struct VisibleText {
    struct Piece: Equatable, CustomStringConvertible {
        /// `nil` for a text node; otherwise the attribute, such as `aria-label`.
        let attribute: String?
        let text: String
        /// Inside `<code>`, `<kbd>` or `<samp>` (identifiers and literal values, the same in every language),
        /// or inside an element marked `translate="no"` (a stored record, such as an audit line's details).
        let isCode: Bool
        /// Inside `<template>`: markup the page's script clones, where a word in capitals (`LANGNAME`) is a
        /// placeholder the script fills.
        var inTemplate = false

        var description: String {
            let shown = text.count > 120 ? String(text.prefix(117)) + "…" : text
            return attribute.map { "[\($0)] '\(shown)'" } ?? "'\(shown)'"
        }
    }

    /// Attributes whose values people read (tooltips, placeholders, image text) or hear (screen readers).
    static let readAttributes: Set<String> = [
        "title", "alt", "placeholder", "label", "aria-label", "aria-description", "aria-roledescription",
        "aria-valuetext", "aria-placeholder",
    ]
    /// Attributes whose values the page's script shows (the noun of a repeated row: "Remove pair").
    static let scriptShownAttributes: Set<String> = ["data-row-noun"]
    static let voidElements: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
    ]
    /// Elements whose content is not read as markup, and is not UI text (script, style) or is the user's (textarea).
    static let skippedRawElements: Set<String> = ["script", "style", "textarea"]
    static let codeElements: Set<String> = ["code", "kbd", "samp"]

    static func pieces(of html: String) -> [Piece] {
        let scalars = Array(html.unicodeScalars)
        var pieces: [Piece] = []
        var open: [String] = []
        /// Where in `open` an element marked `translate="no"` is.
        var records: [Int] = []
        var text = String.UnicodeScalarView()
        var index = 0

        func inCode(_ extra: String? = nil) -> Bool {
            open.contains(where: codeElements.contains) || extra.map(codeElements.contains) == true || !records.isEmpty
        }
        func flush() {
            let decoded = decodeEntities(String(text)).trimmingCharacters(in: .whitespacesAndNewlines)
            if !decoded.isEmpty {
                pieces.append(Piece(attribute: nil, text: collapse(decoded), isCode: inCode(), inTemplate: open.contains("template")))
            }
            text = String.UnicodeScalarView()
        }
        func starts(_ prefix: String, at position: Int) -> Bool {
            let wanted = Array(prefix.unicodeScalars)
            guard position + wanted.count <= scalars.count else { return false }
            for (offset, scalar) in wanted.enumerated() where lower(scalars[position + offset]) != lower(scalar) { return false }
            return true
        }
        func skip(past marker: String, from position: Int) -> Int {
            var position = position
            while position < scalars.count, !starts(marker, at: position) { position += 1 }
            return min(scalars.count, position + marker.unicodeScalars.count)
        }
        /// A tag's name from `position`, lower-cased, and where it ends.
        func name(from position: Int) -> (String, Int) {
            var position = position
            var name = ""
            while position < scalars.count, isNameCharacter(scalars[position]) {
                name.unicodeScalars.append(lower(scalars[position]))
                position += 1
            }
            return (name, position)
        }

        while index < scalars.count {
            guard scalars[index] == "<", index + 1 < scalars.count else {
                text.append(scalars[index])
                index += 1
                continue
            }
            let next = scalars[index + 1]
            if starts("<!--", at: index) {
                flush()
                index = skip(past: "-->", from: index + 4)
            } else if next == "!" || next == "?" {
                flush()
                index = skip(past: ">", from: index)
            } else if next == "/" {
                flush()
                let (name, position) = name(from: index + 2)
                index = skip(past: ">", from: position)
                if let last = open.lastIndex(of: name) {
                    open.removeSubrange(last...)
                    records.removeAll { $0 >= last }
                }
            } else if next.properties.isAlphabetic && next.isASCII {
                flush()
                var (name, position) = name(from: index + 1)
                var attributes: [(String, String)] = []
                var selfClosing = false
                while position < scalars.count {
                    while position < scalars.count, scalars[position].properties.isWhitespace { position += 1 }
                    guard position < scalars.count else { break }
                    if scalars[position] == ">" { position += 1; break }
                    if scalars[position] == "/" {
                        selfClosing = position + 1 < scalars.count && scalars[position + 1] == ">"
                        position += 1
                        continue
                    }
                    var attribute = ""
                    while position < scalars.count, !scalars[position].properties.isWhitespace,
                          !["=", ">", "/"].contains(scalars[position]) {
                        attribute.unicodeScalars.append(lower(scalars[position]))
                        position += 1
                    }
                    while position < scalars.count, scalars[position].properties.isWhitespace { position += 1 }
                    var value = ""
                    if position < scalars.count, scalars[position] == "=" {
                        position += 1
                        while position < scalars.count, scalars[position].properties.isWhitespace { position += 1 }
                        if position < scalars.count, scalars[position] == "\"" || scalars[position] == "'" {
                            let quote = scalars[position]
                            position += 1
                            while position < scalars.count, scalars[position] != quote {
                                value.unicodeScalars.append(scalars[position])
                                position += 1
                            }
                            position += 1
                        } else {
                            while position < scalars.count, !scalars[position].properties.isWhitespace, scalars[position] != ">" {
                                value.unicodeScalars.append(scalars[position])
                                position += 1
                            }
                        }
                    }
                    if attribute.isEmpty { position += 1 } else { attributes.append((attribute, decodeEntities(value))) }
                }
                index = position
                let type = attributes.first { $0.0 == "type" }?.1.lowercased()
                for (attribute, value) in attributes {
                    let shown = readAttributes.contains(attribute) || scriptShownAttributes.contains(attribute)
                        || (attribute == "value" && name == "input" && ["submit", "button", "reset"].contains(type ?? ""))
                    let trimmed = collapse(value.trimmingCharacters(in: .whitespacesAndNewlines))
                    if shown, !trimmed.isEmpty {
                        pieces.append(Piece(attribute: attribute, text: trimmed, isCode: inCode(name), inTemplate: open.contains("template")))
                    }
                }
                if skippedRawElements.contains(name) {
                    index = skip(past: "</" + name, from: index)
                    index = skip(past: ">", from: index)
                } else if !selfClosing, !voidElements.contains(name) {
                    if attributes.contains(where: { $0.0 == "translate" && $0.1.lowercased() == "no" }) { records.append(open.count) }
                    open.append(name)
                }
            } else {
                text.append(scalars[index])
                index += 1
            }
        }
        flush()
        return pieces
    }

    /// The `lang` and `dir` of the page's `<html>` element.
    static func htmlLanguage(of html: String) -> (lang: String?, dir: String?) {
        guard let range = html.range(of: #"<html\b[^>]*>"#, options: [.regularExpression, .caseInsensitive]) else { return (nil, nil) }
        let tag = String(html[range])
        func attribute(_ name: String) -> String? {
            guard let match = tag.range(of: #"\b\#(name)="([^"]*)""#, options: .regularExpression) else { return nil }
            return tag[match].split(separator: "\"", omittingEmptySubsequences: false).dropFirst().first.map(String.init)
        }
        return (attribute("lang"), attribute("dir"))
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-")
    }

    private static func lower(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32) ?? scalar : scalar
    }

    private static func collapse(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).joined(separator: " ")
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named: [String: String] = [
            "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "hellip": "…", "middot": "·",
            "mdash": "—", "ndash": "–", "times": "×", "rarr": "→", "larr": "←", "copy": "©",
        ]
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let after = rest[rest.index(after: ampersand)...]
            if let semicolon = after.prefix(12).firstIndex(of: ";") {
                let entity = after[..<semicolon]
                var decoded: String?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    decoded = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                } else if entity.hasPrefix("#") {
                    decoded = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
                } else {
                    decoded = named[String(entity)]
                }
                if let decoded {
                    result += decoded
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            result += "&"
            rest = after
        }
        return result + rest
    }
}

/// Finds words on a page in the pseudo-language that did not come from a string catalog.
///
/// In `en-XA` every catalog string is wrapped in ⟦…⟧ and its letters a c e i n o s u y (either case) are
/// accented. So a word outside ⟦…⟧ is not from a catalog, and a word inside ⟦…⟧ that still holds one of
/// those nine letters unaccented came from an argument that is not catalog text either (an English word
/// made in Swift and passed into a translated sentence). What remains after removing what the test
/// seeded (user data) and the few things that are the same in every language (below) is English left
/// untranslated.
struct UntranslatedWords {
    /// Words that stay as they are in every language the console speaks: the product's name, platform and
    /// protocol names that are trademarks or standards (German, Persian, Arabic and Japanese text writes
    /// them in Latin letters too).
    static let allowedWords: Set<String> = [
        "Herald", "iOS", "Android", "JSON", "CSV", "API", "URL", "URLs", "APNs", "FCM", "HTTP", "HTTPS", "UTC", "GMT",
        // HTTP method names, as a 405 page names the one it refused.
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
    ]

    /// Things that are not words of a language, each a pattern: removed before looking for words.
    static let notWords: [NSRegularExpression] = [
        // URLs and app links (user data: images, actions).
        #"[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>]*"#,
        // E-mail addresses (user data: who signed in, who changed what).
        #"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"#,
        // ISO 8601 days and times: 2026-09-21, 2026-09-21T14:13:20Z.
        #"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+\-]\d{2}:?\d{2})?"#,
        // Dates and times Foundation writes for the pseudo-language, which uses English locale data
        // ("Sep 21, 2026 at 2:13 PM"): each real language gets its own from the locale, not the catalog.
        #"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|January|February|March|April|June|July|August|September|October|November|December)\.? \d{1,2}(?:, \d{4})?(?:,? (?:at )?\d{1,2}:\d{2}(?:\s?[AP]M)?)?"#,
        #"\b\d{1,2}:\d{2}(?::\d{2})?\s?[AP]M\b"#,
        // IANA time zone names: Asia/Tehran, America/Argentina/Buenos_Aires, Etc/GMT+5.
        #"\b[A-Z][A-Za-z_]+(?:/[A-Za-z_\-+0-9]+)+"#,
        // Colors: #1A73E8, #CC1A73E8.
        #"#(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{3,4})\b"#,
        // BCP 47 tags: the console's languages, any tag with a script or region (zh-Hant, pt-BR), and a
        // language code in parentheses after its name ("Bangla (bn)").
        #"(?<![\p{L}\p{N}_\-])(?:en-XA|en|de|fa|ar|ja|[a-z]{2,3}-(?:[A-Z][a-z]{3}(?:-(?:[A-Z]{2}|[0-9]{3}))?|[A-Z]{2}|[0-9]{3}))(?![\p{L}\p{N}_\-])"#,
        #"\([a-z]{2,3}\)"#,
        // Identifiers joined with `.`, `_` or `:`, which no language writes as words: field paths
        // (message.imageUrl), event and error codes (app_launch, image_fetch), API scopes (feed:read).
        #"(?<![\p{L}\p{N}])[A-Za-z][A-Za-z0-9]*(?:[._:][A-Za-z0-9]+)+(?![\p{L}\p{N}])"#,
    ].map { try! NSRegularExpression(pattern: $0) }

    /// The user data the test seeded (names, titles, event names, …), removed where they stand as whole words.
    let seeded: [NSRegularExpression]

    /// Languages, scripts and regions by their English names, as Foundation writes them for the pseudo-language
    /// ("Portuguese (Brazil)", "Chinese, Simplified"): like dates, each real language gets its own from its locale.
    static let localeNames: NSRegularExpression = {
        let english = Locale(identifier: "en")
        var names: Set<String> = []
        for identifier in Locale.availableIdentifiers + Locale.LanguageCode.isoLanguageCodes.map(\.identifier) {
            if let name = english.localizedString(forIdentifier: identifier) { names.insert(name) }
        }
        let alternatives = names.filter { $0.count > 1 }.sorted { $0.count > $1.count }.map(NSRegularExpression.escapedPattern(for:))
        return try! NSRegularExpression(pattern: #"(?<![\p{L}\p{N}_])(?:"# + alternatives.joined(separator: "|") + #")(?![\p{L}\p{N}_])"#)
    }()

    /// A placeholder in a `<template>`: a word in capitals that the script replaces.
    static let placeholder = try! NSRegularExpression(pattern: #"(?<![\p{L}\p{N}_])[A-Z][A-Z0-9_]{2,}(?![\p{L}\p{N}_])"#)

    init(seeded: some Sequence<String>) {
        // Longest first, so a name that contains another is removed whole. Each language's name for itself is
        // shown in the language chooser so that anyone finds theirs: it is seeded too.
        // Other products' names, which the gallery credits for its layouts, are written as their makers write them.
        let names = Set(seeded).union(["English", "Deutsch", "[Ƥşḗḗŭḓǿǿ]", "Ƥşḗḗŭḓǿǿ", "Firebase In-App Messaging", "Braze"])
            .filter { !$0.isEmpty }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
        self.seeded = names.map {
            try! NSRegularExpression(pattern: #"(?<![\p{L}\p{N}_])"# + NSRegularExpression.escapedPattern(for: $0) + #"(?![\p{L}\p{N}_])"#)
        }
    }

    /// `text` with the seeded data as `…` and numbers as `#`: texts that differ only in those are one text
    /// made from one template (“Preview of Ẓcard”, “Preview of Ẓplan”).
    func template(of text: String) -> String {
        var rest = text
        for pattern in seeded {
            rest = pattern.stringByReplacingMatches(in: rest, range: NSRange(rest.startIndex..., in: rest), withTemplate: "…")
        }
        return rest.replacingOccurrences(of: #"\d+"#, with: "#", options: .regularExpression)
    }

    /// The words in `text` that did not come from a catalog (empty when all did).
    func words(in text: String) -> [String] {
        words(in: text, depth: 0).words
    }

    /// The same for one text node of a page, and how deep inside ⟦…⟧ the next one starts: a catalog string
    /// with markup in it (a name in `<bdi>`, a time in `<time>`) spans several text nodes.
    func words(in text: String, depth start: Int, inTemplate: Bool = false) -> (words: [String], depth: Int) {
        var rest = text
        for pattern in seeded + Self.notWords + [Self.localeNames] + (inTemplate ? [Self.placeholder] : []) {
            rest = pattern.stringByReplacingMatches(in: rest, range: NSRange(rest.startIndex..., in: rest), withTemplate: " ")
        }
        var found: [String] = []
        var depth = start
        /// Inside U+2068 … U+2069: an argument the console isolated, which is user data by its convention.
        var isolation = 0
        var word = String.UnicodeScalarView()
        func finish() {
            defer { word = String.UnicodeScalarView() }
            guard !word.isEmpty, isolation == 0 else { return }
            let candidate = String(word)
            if Self.allowedWords.contains(candidate) { return }
            // Inside ⟦…⟧ only a letter the pseudo-language would have accented gives an argument away.
            if depth > 0, !candidate.unicodeScalars.contains(where: { "aceinosuyACEINOSUY".unicodeScalars.contains($0) }) { return }
            found.append(candidate)
        }
        for scalar in rest.unicodeScalars {
            if Self.isLatinLetter(scalar) || (!word.isEmpty && scalar.properties.generalCategory == .nonspacingMark) {
                word.append(scalar)
                continue
            }
            finish()
            if scalar == "\u{2068}" { isolation += 1 }
            if scalar == "\u{2069}" { isolation = max(0, isolation - 1) }
            if scalar == "⟦" { depth += 1 }
            if scalar == "⟧" { depth = max(0, depth - 1) }
        }
        finish()
        return (found, depth)
    }

    /// Letters of the Latin script, accented ones included (the pseudo-language's are).
    static func isLatinLetter(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.properties.isAlphabetic else { return false }
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0x2AF, 0x1E00...0x1EFF, 0x2C60...0x2C7F, 0xA720...0xA7FF, 0xAB30...0xAB6F,
             0xFF21...0xFF3A, 0xFF41...0xFF5A:
            return true
        default:
            return false
        }
    }
}
