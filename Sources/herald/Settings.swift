import ArgumentParser
import Foundation
import HeraldPostgres
import HeraldStorage

/// The optional configuration file (`--config FILE`, `HERALD_CONFIG`): `HERALD_NAME=value` lines with the
/// environment variables' names, so one documented set (docs/operations.md) serves flags, the
/// environment, this file and the systemd unit's `EnvironmentFile`. `#` starts a comment line, and so does
/// ` #` in an unquoted value (or `#` where it starts); a value in double quotes is taken whole. The environment
/// wins over the file, a flag over both.
enum ConfigFile {
    /// A configuration is a few dozen lines; anything larger is not one.
    static let largest = 64 * 1024

    static func load(_ path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("Cannot read the configuration file \(path).")
        }
        guard data.count <= largest else { throw ValidationError("The configuration file \(path) is over \(largest / 1024) KiB: is it the right file?") }
        guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("The configuration file \(path) is not UTF-8 text.") }
        var values: [String: String] = [:]
        // Lines split on the scalar: as Characters, "\r\n" is one grapheme that is not "\n", and a file
        // written on Windows would read as one long line.
        for (index, rawLine) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(String.UnicodeScalarView(rawLine)).trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "\(path), line \(index + 1)"
            guard let equals = line.firstIndex(of: "=") else {
                throw ValidationError("\(place): expected HERALD_NAME=value, found \(line.prefix(80).debugDescription).")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard name.hasPrefix("HERALD_"), name.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }) else {
                throw ValidationError("\(place): \(name.prefix(80).debugDescription) is not a setting name; they are HERALD_ and capitals, as in the environment.")
            }
            guard values[name] == nil else { throw ValidationError("\(place): \(name) is set a second time.") }
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\"") {
                guard let closing = value.dropFirst().firstIndex(of: "\""),
                      value[value.index(after: closing)...].trimmingCharacters(in: .whitespaces).first.map({ $0 == "#" }) ?? true else {
                    throw ValidationError("\(place): the value of \(name) opens a quote and does not close it (or has more after it).")
                }
                value = String(value[value.index(after: value.startIndex)..<closing])
            } else if value.hasPrefix("#") {
                value = ""
            } else if let comment = value.range(of: " #") ?? value.range(of: "\t#") {
                value = value[..<comment.lowerBound].trimmingCharacters(in: .whitespaces)
            }
            // Without escapes, a quote inside a value could not be printed back by config check as the same value.
            if value.contains("\"") {
                throw ValidationError("\(place): the value of \(name) holds a double quote; only a whole value may be quoted.")
            }
            if let control = value.unicodeScalars.first(where: { $0.properties.generalCategory == .control && $0 != "\t" }) {
                throw ValidationError("\(place): the value of \(name) holds the control character U+\(String(control.value, radix: 16, uppercase: true)).")
            }
            values[name] = value
        }
        return values
    }
}

/// Reads each setting the way the command uses it: its flag, else its `HERALD_*` variable from the
/// environment, else from the configuration file, else its default; and keeps every reading, so that
/// `herald config check` prints exactly what `herald serve` would run with, and a name in the file
/// that nothing read (a typo) is refused instead of ignored.
final class SettingsReader {
    enum Source: String {
        case flag, environment, file = "configuration file", `default`, unset = "not set"
    }

    struct Reading {
        let variable: String
        let value: String
        let source: Source
        let secret: Bool
    }

    private(set) var readings: [Reading] = []
    private let environment: [String: String]
    private let file: [String: String]
    let filePath: String?

    init(configFile: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.environment = environment
        filePath = configFile ?? environment["HERALD_CONFIG"]
        file = try filePath.map(ConfigFile.load) ?? [:]
    }

    /// The text of a setting, and where it came from; nil when nothing sets it and it has no default.
    func text(_ flag: String?, _ variable: String, default defaultValue: String? = nil, secret: Bool = false) -> String? {
        let found: (String, Source)? = if let flag { (flag, .flag) }
            else if let value = environment[variable] { (value, .environment) }
            else if let value = file[variable] { (value, .file) }
            else { defaultValue.map { ($0, .default) } }
        readings.append(Reading(variable: variable, value: found?.0 ?? "", source: found?.1 ?? .unset, secret: secret))
        return found?.0
    }

    /// A setting's value from the environment or the file, unrecorded: for commands that only need one.
    func lookup(_ variable: String) -> String? {
        environment[variable] ?? file[variable]
    }

    /// A whole number within `range`.
    func number(_ flag: Int?, _ variable: String, in range: ClosedRange<Int>, _ what: String, default defaultValue: Int) throws -> Int {
        let text = text(flag.map(String.init), variable, default: String(defaultValue)) ?? String(defaultValue)
        guard let value = Int(text) else { throw ValidationError("\(variable) must be a whole number, not \(text.prefix(80).debugDescription).") }
        guard range.contains(value) else {
            throw ValidationError("\(what) must be from \(range.lowerBound) to \(range.upperBound), not \(value).")
        }
        return value
    }

    /// An on/off setting: the flag, or `1`/`true` (`0`/`false`) in the environment or file.
    func switchedOn(_ flag: Bool, _ variable: String) throws -> Bool {
        let text = text(flag ? "true" : nil, variable, default: "false") ?? "false"
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off", "": return false
        default: throw ValidationError("\(variable) must be 1 or 0 (true or false), not \(text.prefix(80).debugDescription).")
        }
    }

    /// Refuses names in the configuration file that nothing read: a misspelt setting would otherwise
    /// be silently ignored.
    func refuseUnread() throws {
        let read = Set(readings.map(\.variable))
        if let unknown = file.keys.sorted().first(where: { !read.contains($0) }), let filePath {
            throw ValidationError("\(filePath): \(unknown) is not a setting of herald serve (herald config check lists them).")
        }
    }

    /// The readings as a configuration file would hold them, each with where its value came from;
    /// secrets (and passwords inside URLs) masked.
    func report() -> String {
        readings.map { reading in
            let shown = reading.secret && reading.source != .unset ? "********" : PostgresLocation.maskingPassword(in: reading.value)
            let quoted = shown.contains(" ") || shown.contains("#") || shown.contains("\t") ? "\"\(shown)\"" : shown
            let line = "\(reading.variable)=\(quoted)  # \(reading.source.rawValue)"
            return reading.source == .unset ? "# " + line : line
        }.joined(separator: "\n")
    }

}
