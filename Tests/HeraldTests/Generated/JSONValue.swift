import Foundation

/// A JSON document written exactly as a test wants it sent (key order, duplicate keys, number tokens
/// such as `1e400` or `-0`), and read back from an answer for comparison.
indirect enum JSONValue: Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    /// A number token written as given, valid or not for the field it is sent in.
    case literal(String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    var text: String {
        switch self {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .literal(let token): token
        case .string(let string): Self.quoted(string)
        case .array(let items): "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { Self.quoted($0.key) + ":" + $0.value.text }.joined(separator: ",") + "}"
        }
    }

    var description: String { text }

    static func quoted(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\u{0}"..."\u{1F}": result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// The same object with `key` set (replacing every earlier member of that name) or removed (nil).
    func setting(_ key: String, _ value: JSONValue?) -> JSONValue {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.key == key }) {
            members.removeAll { $0.key == key }
            if let value { members.insert((key, value), at: min(index, members.count)) }
        } else if let value {
            members.append((key, value))
        }
        return .object(members)
    }

    /// The value at a dotted path (`message.title.text`, `triggers.0.event`).
    func at(_ path: String) -> JSONValue? {
        path.split(separator: ".").reduce(self as JSONValue?) { value, part in
            switch value {
            case .object: value?[String(part)]
            case .array(let items): Int(part).flatMap { items.indices.contains($0) ? items[$0] : nil }
            default: nil
            }
        }
    }

    /// The document with the value at `path` replaced (or removed with nil); unchanged if the path is not there.
    func replacing(_ path: some StringProtocol, with newValue: JSONValue?) -> JSONValue {
        let parts = path.split(separator: ".", maxSplits: 1)
        guard let first = parts.first else { return self }
        let rest = parts.count > 1 ? parts[1] : nil
        switch self {
        case .object:
            guard let rest else { return setting(String(first), newValue) }
            guard let child = self[String(first)] else { return self }
            return setting(String(first), child.replacing(rest, with: newValue))
        case .array(var items):
            guard let index = Int(first), items.indices.contains(index) else { return self }
            if let rest {
                items[index] = items[index].replacing(rest, with: newValue)
            } else if let newValue {
                items[index] = newValue
            } else {
                items.remove(at: index)
            }
            return .array(items)
        default:
            return self
        }
    }

    /// Every path to an object in the document, the root as "".
    var objectPaths: [String] {
        func walk(_ value: JSONValue, _ path: String) -> [String] {
            switch value {
            case .object(let members): [path] + members.flatMap { walk($0.value, path.isEmpty ? $0.key : "\(path).\($0.key)") }
            case .array(let items): items.enumerated().flatMap { walk($1, path.isEmpty ? "\($0)" : "\(path).\($0)") }
            default: []
            }
        }
        return walk(self, "")
    }
}

extension JSONValue: Decodable {
    /// Reads an answer's JSON; objects come back in no particular order, which `sameDocument` ignores.
    init(from decoder: Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(JSONValue.self)) }
            self = .array(items)
        } else if let object = try? decoder.container(keyedBy: Key.self) {
            self = .object(try object.allKeys.map { ($0.stringValue, try object.decode(JSONValue.self, forKey: $0)) })
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let flag = try? single.decode(Bool.self) {
                self = .bool(flag)
            } else if let number = try? single.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try single.decode(String.self))
            }
        }
    }

    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// Whether two documents say the same: object members in any order, numbers by value, strings
/// scalar for scalar (no Unicode normalization: text must survive byte for byte). Returns the first
/// difference's path, or nil when they agree.
func firstDifference(_ a: JSONValue, _ b: JSONValue, at path: String = "") -> String? {
    func here(_ detail: String) -> String { "\(path.isEmpty ? "(top)" : path): \(detail)" }
    switch (a, b) {
    case (.null, .null): return nil
    case (.bool(let x), .bool(let y)): return x == y ? nil : here("\(x) vs \(y)")
    case (.string(let x), .string(let y)):
        if x.unicodeScalars.elementsEqual(y.unicodeScalars) { return nil }
        let offset = zip(x.unicodeScalars, y.unicodeScalars).prefix { $0 == $1 }.count
        func scalars(_ text: String) -> String {
            text.unicodeScalars.dropFirst(offset).prefix(3).map { String(format: "U+%04X", $0.value) }.joined(separator: " ")
        }
        return here("\(JSONValue.quoted(x).prefix(200)) vs \(JSONValue.quoted(y).prefix(200)) (from scalar \(offset): \(scalars(x)) vs \(scalars(y)))")
    case (.array(let x), .array(let y)):
        guard x.count == y.count else { return here("\(x.count) items vs \(y.count)") }
        for (index, (left, right)) in zip(x, y).enumerated() {
            if let difference = firstDifference(left, right, at: path.isEmpty ? "\(index)" : "\(path).\(index)") { return difference }
        }
        return nil
    case (.object(let x), .object(let y)):
        let left = Dictionary(x, uniquingKeysWith: { $1 }), right = Dictionary(y, uniquingKeysWith: { $1 })
        for key in Set(left.keys).union(right.keys).sorted() {
            let child = path.isEmpty ? key : "\(path).\(key)"
            guard let l = left[key], let r = right[key] else { return "\(child): present on one side only" }
            if let difference = firstDifference(l, r, at: child) { return difference }
        }
        return nil
    default:
        guard let x = a.numberValue, let y = b.numberValue else { return here("\(a.text.prefix(200)) vs \(b.text.prefix(200))") }
        return x == y ? nil : here("\(x) vs \(y)")
    }
}

extension JSONValue {
    var numberValue: Double? {
        switch self {
        case .number(let number): number
        case .literal(let token): Double(token)
        default: nil
        }
    }
}
