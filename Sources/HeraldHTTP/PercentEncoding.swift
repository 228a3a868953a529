/// Percent-decoding for URL paths, query strings and urlencoded forms.
public enum PercentEncoding {
    /// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`); nil when the bytes are not UTF-8
    /// or an escape is malformed.
    public static func decode<S: StringProtocol>(_ text: S, plusAsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusAsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Encodes everything but unreserved characters, for building query strings and form bodies.
    public static func encode(_ text: String) -> String {
        encode(text.utf8, keeping: isUnreserved)
    }

    /// Writes every byte `keep` refuses as `%XX` (upper-case hex) and the others as they are.
    public static func encode(_ bytes: some Sequence<UInt8>, keeping keep: (UInt8) -> Bool) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.underestimatedCount)
        for byte in bytes {
            if keep(byte) {
                result.append(byte)
            } else {
                result += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// The value of one hex digit, either case.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
