/// JSON written by hand, byte by byte: members in the order they are written, absent ones skipped. For
/// answers whose order matters (a push payload keeps the marketer's order of custom data) or whose cost
/// does (the stats endpoint: Foundation's `JSONEncoder` was a quarter of its CPU).
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Whether the object or array being written has a member yet, innermost last.
    private var started: [Bool] = []

    public init() {}

    public mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        started.append(false)
    }

    public mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        started.removeLast()
    }

    public mutating func openArray() {
        bytes.append(UInt8(ascii: "["))
        started.append(false)
    }

    public mutating func closeArray() {
        bytes.append(UInt8(ascii: "]"))
        started.removeLast()
    }

    /// An object whose members `write` writes.
    public mutating func object(_ write: (inout JSONWriter) -> Void) {
        open()
        write(&self)
        close()
    }

    /// An array of `items`, each written by `write`.
    public mutating func array<Items: Sequence>(_ items: Items, _ write: (Items.Element, inout JSONWriter) -> Void) {
        openArray()
        for item in items {
            element()
            write(item, &self)
        }
        closeArray()
    }

    /// An object of `values` by name, in the order of the names' bytes (a stable order whatever the names).
    public mutating func objectByName<Value>(_ values: [String: Value], _ write: (Value, inout JSONWriter) -> Void) {
        open()
        for (name, value) in values.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            key(name)
            write(value, &self)
        }
        close()
    }

    /// A member's name; its value is written next.
    public mutating func key(_ name: String) {
        element()
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Before an array's element: a comma unless it is the first.
    public mutating func element() {
        if started.last == true { bytes.append(UInt8(ascii: ",")) }
        if !started.isEmpty { started[started.count - 1] = true }
    }

    public mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    public mutating func member<Number: BinaryInteger>(_ name: String, _ value: Number?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    public mutating func member(_ name: String, _ value: Bool) {
        key(name)
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    /// A number as `member(_:_:)` writes it, or `null` where there is none (such as the rate of nothing).
    public mutating func member(_ name: String, _ value: Double?) {
        guard let value else {
            key(name)
            bytes.append(contentsOf: "null".utf8)
            return
        }
        member(name, value)
    }

    /// A number as Swift writes a `Double` (the shortest text that reads back as it), without a trailing
    /// `.0`, as `JSONEncoder` writes it. JSON has no NaN or infinity; they are written as 0.
    public mutating func member(_ name: String, _ value: Double) {
        key(name)
        guard value.isFinite else {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func integer<Number: BinaryInteger>(_ value: Number) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A JSON string: quotes, backslashes and control characters escaped (RFC 8259), the rest as UTF-8.
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
