// english-catalog.swift EN_JSON OUTPUT_FILE SECTION...: writes `EnglishCatalog.sentences`, the strings of
// `Locales/en.json` whose key passes through one of the named sections (`errors` takes `errors.csrf` and
// `apps.errors.name_taken`), as Swift, for the EnglishCatalog plugin. So English is written once, in the
// catalog, and a module that has no catalog at hand (the command line, the delivery client, the JSON API)
// still says the catalog's sentences. A script run by `swift` rather than a Swift tool target, so that no
// executable is built for it: the fuzz build's -sanitize=fuzzer would link libFuzzer's main into such a tool.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 3, let catalogPath = arguments.first else {
    FileHandle.standardError.write(Data("usage: english-catalog.swift EN_JSON OUTPUT_FILE SECTION...\n".utf8))
    exit(2)
}
let outputPath = arguments[arguments.startIndex + 1]
let sections = Set(arguments.dropFirst(2))

/// An object whose keys are all CLDR plural categories is one string with plural forms, not a section;
/// no sentence a program prints is one, so the table leaves them out.
let pluralCategories: Set<String> = ["zero", "one", "two", "few", "many", "other"]

/// Every string of `object` under `path`, by its dotted key, with whether a section on the way was named.
func strings(in object: [String: Any], path: [String], into table: inout [String: String]) {
    for (name, value) in object {
        if let text = value as? String {
            if path.contains(where: sections.contains) { table[(path + [name]).joined(separator: ".")] = text }
        } else if let child = value as? [String: Any], !Set(child.keys).isSubset(of: pluralCategories) {
            strings(in: child, path: path + [name], into: &table)
        }
    }
}

/// `text` as a Swift string literal: quotes, backslashes and control characters escaped.
func literal(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            result += "\\u{" + String(scalar.value, radix: 16) + "}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}

let data: Data
do {
    data = try Data(contentsOf: URL(fileURLWithPath: catalogPath))
} catch {
    FileHandle.standardError.write(Data("english-catalog: cannot read \(catalogPath): \(error)\n".utf8))
    exit(1)
}
guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
    FileHandle.standardError.write(Data("english-catalog: \(catalogPath) is not a JSON object\n".utf8))
    exit(1)
}
var table: [String: String] = [:]
strings(in: root, path: [], into: &table)
let entries = table.isEmpty ? ["        :"] : table.sorted { $0.key < $1.key }.map { "        \(literal($0.key)): \(literal($0.value))," }
let source = """
    // Written by Tools/english-catalog.swift at build time from Locales/en.json; not in the repository.

    /// The English of `Locales/en.json` under \(sections.sorted().map { "`\($0)`" }.joined(separator: ", ")), by full key.
    enum EnglishCatalog {
        static let sentences: [String: String] = [
    \(entries.joined(separator: "\n"))
        ]
    }

    """
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: outputPath), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("english-catalog: cannot write \(outputPath): \(error)\n".utf8))
    exit(1)
}
