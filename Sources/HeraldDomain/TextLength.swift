/// How Herald counts text against a length limit: in Unicode scalar values (code points, what JSON
/// Schema's `maxLength` counts), never in `Character`s. A grapheme cluster holds any number of combining
/// marks, so "200 characters" counted as people count them let 300 KB through one field; in scalars a
/// limit of N keeps a field under 4N bytes of UTF-8, whatever the script.
extension StringProtocol {
    /// The text's length as limits count it.
    public var scalarCount: Int { unicodeScalars.count }
}

extension String {
    /// The text cut to at most `limit` scalars (whole scalars, so still valid text).
    public func prefix(scalars limit: Int) -> String {
        String(String.UnicodeScalarView(unicodeScalars.prefix(max(0, limit))))
    }
}
