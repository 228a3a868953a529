import Foundation

/// Writes whole numbers and one-decimal percentages as Foundation writes them in a language, without an
/// ICU formatter per number: the language's ten digits, group separator, decimal separator and percent
/// pattern are read once from Foundation's own output, and a writer is only used when it gives exactly
/// Foundation's text for a set of probes. A 90-day report writes about a thousand figures, and making
/// a formatter for each was a third of the page's time.
struct NumberWriter: Sendable {
    private let digits: [String]
    private let groupSeparator: String
    private let decimalSeparator: String
    private let percentPrefix: String
    private let percentSuffix: String

    /// The writer for `locale`, or nil when Foundation writes its numbers in a way this does not cover
    /// (another grouping, digits that are not one character each): callers then use Foundation.
    init?(locale: Locale) {
        let digits = (0...9).map { $0.formatted(.number.locale(locale)) }
        guard digits.allSatisfy({ $0.count == 1 }), Set(digits).count == 10 else { return nil }
        // 1234567 is "1" separator "234" separator "567" in every grouping this writer covers.
        let million = 1_234_567.formatted(.number.locale(locale))
        guard million.hasPrefix(digits[1]), let two = million.range(of: digits[2]) else { return nil }
        let groupSeparator = String(million[million.index(after: million.startIndex)..<two.lowerBound])
        // 0.5678 is "56" decimal separator "8" between the pattern's prefix and suffix.
        let share = 0.5678.formatted(.percent.precision(.fractionLength(1)).locale(locale))
        guard let five = share.range(of: digits[5] + digits[6]), let eight = share.range(of: digits[8], range: five.upperBound..<share.endIndex)
        else { return nil }
        self.digits = digits
        self.groupSeparator = groupSeparator
        decimalSeparator = String(share[five.upperBound..<eight.lowerBound])
        percentPrefix = String(share[..<five.lowerBound])
        percentSuffix = String(share[eight.upperBound...])
        guard Self.probes.allSatisfy({ integer($0) == $0.formatted(.number.locale(locale)) }),
              Self.shareProbes.allSatisfy({ percent($0.0, of: $0.1) == Self.foundationPercent($0.0, of: $0.1, locale) })
        else { return nil }
    }

    /// Values whose text must match Foundation's before a writer is used.
    static let probes = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10_000, 12_345, 99_999, 100_000, 999_999, 1_000_000, 10_203_040, Int.max]
    static let shareProbes = [(0, 1), (1, 3), (1, 8), (1, 16), (3, 16), (2, 3), (1, 1), (123, 1000), (7, 2000), (12_345, 10), (999_999, 1)]

    /// `value` with the language's digits and grouping; nil for a negative number (never a count).
    func integer(_ value: Int) -> String? {
        guard value >= 0 else { return nil }
        let plain = String(value).utf8
        var text = ""
        text.reserveCapacity(plain.count * 3)
        for (index, byte) in plain.enumerated() {
            if index > 0, (plain.count - index) % 3 == 0 { text += groupSeparator }
            text += digits[Int(byte - UInt8(ascii: "0"))]
        }
        return text
    }

    /// `part` of `whole` as a percentage with one decimal, rounded half to even as Foundation rounds;
    /// nil when the figures are outside what whole-number arithmetic answers exactly (Foundation then).
    func percent(_ part: Int, of whole: Int) -> String? {
        // Tenths of a percent, exactly: part × 1000 / whole. Foundation formats the double part / whole,
        // which rounds the same way while a rounding boundary (a multiple of 1 / 2000 whole away) is
        // farther than the double's last bit (part / whole × 2^-52): for any part under 10^12, with
        // both figures exact as doubles. Larger figures are left to it.
        guard part >= 0, part < 1_000_000_000_000, whole > 0, whole < 1 << 53 else { return nil }
        let scaled = part * 1000
        var tenths = scaled / whole
        let remainder = scaled % whole
        if remainder * 2 > whole || (remainder * 2 == whole && tenths % 2 == 1) { tenths += 1 }
        guard let units = integer(tenths / 10) else { return nil }
        return percentPrefix + units + decimalSeparator + digits[tenths % 10] + percentSuffix
    }

    static func foundationPercent(_ part: Int, of whole: Int, _ locale: Locale) -> String {
        (Double(part) / Double(whole)).formatted(.percent.precision(.fractionLength(1)).locale(locale))
    }
}

extension ConsoleLanguage {
    /// Each language's writer, made on first use (nil where Foundation must write the numbers).
    private static let numberWriters: [ConsoleLanguage: NumberWriter] = Dictionary(
        uniqueKeysWithValues: allCases.compactMap { language in NumberWriter(locale: language.locale).map { (language, $0) } })

    var numberWriter: NumberWriter? { Self.numberWriters[self] }
}
