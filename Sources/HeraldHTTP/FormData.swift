/// Ordered name/value pairs from a query string or a form body; a name may repeat.
public struct FormData: Sendable, Equatable {
    public var pairs: [(name: String, value: String)]

    public init(_ pairs: [(String, String)] = []) {
        self.pairs = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// Parses `application/x-www-form-urlencoded` text; nil when it is not valid UTF-8 after decoding.
    public init?(urlencoded text: Substring) {
        guard let form = try? FormData(urlencoded: text, maxPairs: .max) else { return nil }
        self = form
    }

    /// Parses `application/x-www-form-urlencoded` text, refusing it as soon as pair `maxPairs + 1` is
    /// found: a body of `a&a&a…` costs no more than the pairs Herald would keep.
    public init(urlencoded text: Substring, maxPairs: Int) throws(Request.BodyError) {
        pairs = []
        let bytes = text.utf8
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            defer { start = end < bytes.endIndex ? bytes.index(after: end) : end }
            guard start < end else { continue }
            guard pairs.count < maxPairs else { throw .tooManyFields(maxPairs + 1) }
            let part = text[start..<end]
            let equals = part.utf8.firstIndex(of: UInt8(ascii: "=")) ?? part.endIndex
            let value = equals < part.endIndex ? part[part.utf8.index(after: equals)...] : ""
            guard let name = PercentEncoding.decode(part[..<equals], plusAsSpace: true),
                  let decoded = PercentEncoding.decode(value, plusAsSpace: true) else { throw .invalidEncoding }
            pairs.append((name, decoded))
        }
    }

    /// The first value for `name`, or nil.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    /// Every value for `name`, in order (checkbox groups, repeated fields).
    public func values(_ name: String) -> [String] {
        pairs.filter { $0.name == name }.map(\.value)
    }

    /// Encodes the pairs as `application/x-www-form-urlencoded`.
    public var urlencoded: String {
        pairs.map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }.joined(separator: "&")
    }

    public static func == (lhs: FormData, rhs: FormData) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.name == $1.name && $0.value == $1.value }
    }
}
