/// Ordered name/value pairs from a query string or a form body; a name may repeat.
public struct FormData: Sendable, Equatable {
    public var pairs: [(name: String, value: String)]

    public init(_ pairs: [(String, String)] = []) {
        self.pairs = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// Parses `application/x-www-form-urlencoded` text; nil when it is not valid UTF-8 after decoding.
    public init?(urlencoded text: Substring) {
        pairs = []
        for part in text.split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(pieces[0], plusAsSpace: true),
                  let value = PercentEncoding.decode(pieces.count > 1 ? pieces[1] : "", plusAsSpace: true)
            else { return nil }
            pairs.append((name, value))
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
