import Foundation

/// A file of SQL statements (a migration) cut into single statements, which is what PostgreSQL's extended
/// query protocol runs, one at a time.
enum SQLScript {
    /// The statements of `script`, each without its closing `;`, blank ones left out. A `;` ends a statement
    /// only outside quotes ('…', "…"), comments (-- …, /* … */) and dollar-quoted bodies ($$…$$, $tag$…$tag$),
    /// so function bodies and literals may contain one.
    static func statements(_ script: String) -> [String] {
        let characters = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0

        func finish() {
            let text = String(current).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        /// Copies from `index` up to and including the first `end` at or after `from`, or to the end of the script.
        func copy(through end: [Unicode.Scalar], from start: Int) {
            var position = start
            while position < characters.count {
                if position + end.count <= characters.count, Array(characters[position..<(position + end.count)]) == end {
                    position += end.count
                    current.append(contentsOf: characters[index..<position])
                    index = position
                    return
                }
                position += 1
            }
            current.append(contentsOf: characters[index...])
            index = characters.count
        }

        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            switch (character, next) {
            case (";", _):
                finish()
                index += 1
            case ("'", _), ("\"", _):
                // A doubled quote inside reads as the end of one quoted run and the start of the next: the same text.
                copy(through: [character], from: index + 1)
            case ("-", "-"):
                copy(through: ["\n"], from: index + 2)
            case ("/", "*"):
                copy(through: ["*", "/"], from: index + 2)
            case ("$", _):
                // A dollar quote's tag is letters, digits and underscores between two dollars ($$ has none).
                var end = index + 1
                while end < characters.count, characters[end] == "_" || characters[end].properties.isAlphabetic
                    || ("0"..."9").contains(characters[end]) {
                    end += 1
                }
                if end < characters.count, characters[end] == "$" {
                    copy(through: Array(characters[index...end]), from: end + 1)
                } else {
                    current.append(character)
                    index += 1
                }
            default:
                current.append(character)
                index += 1
            }
        }
        finish()
        return statements
    }
}
