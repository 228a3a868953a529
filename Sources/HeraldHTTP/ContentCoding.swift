import CZlib

/// The gzip content coding (RFC 9110 §8.4.1.3), for bodies compressed once and served many times.
public enum Gzip {
    /// `bytes` in the gzip format at zlib's highest level, or nil if zlib fails or the input is past what
    /// one deflate call takes (4 GiB).
    public static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count <= Int(UInt32.max) else { return nil }
        var stream = z_stream()
        guard herald_deflate_init_gzip(&stream, Z_BEST_COMPRESSION) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        // deflateBound is what one Z_FINISH call may write at most, header and trailer included.
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let written: Int? = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                guard deflate(&stream, Z_FINISH) == Z_STREAM_END else { return nil }
                return out.count - Int(stream.avail_out)
            }
        }
        guard let written else { return nil }
        output.removeSubrange(written...)
        return output
    }
}

/// Which content codings a request accepts (`Accept-Encoding`, RFC 9110 §12.5.3).
public enum AcceptEncoding {
    /// Whether a response may be sent in `coding` (a lowercase name such as "gzip"): the header names it
    /// (or its alias, "x-gzip" for "gzip") with a weight above 0, or does not name it and gives `*` a
    /// weight above 0. The first element that names a coding decides for it; an element whose weight
    /// does not parse is skipped. No header accepts nothing but identity.
    public static func accepts(_ coding: String, in header: String?) -> Bool {
        guard let header else { return false }
        let names = coding == "gzip" ? ["gzip", "x-gzip"] : [coding]
        var named: Int?
        var any: Int?
        for element in header.utf8.split(separator: UInt8(ascii: ",")) {
            let parts = element.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
            let name = trimmed(parts[0])
            guard !name.isEmpty, let weight = weight(parts.dropFirst()) else { continue }
            if names.contains(where: { HTTPHeaders.sameName(name, $0.utf8) }) {
                if named == nil { named = weight }
            } else if name.elementsEqual("*".utf8), any == nil {
                any = weight
            }
        }
        return (named ?? any ?? 0) > 0
    }

    /// The `q` parameter in thousandths (1000 without one), or nil if it is not a qvalue:
    /// `0` to `0.999` or `1` to `1.000`, at most three decimals.
    static func weight(_ parameters: ArraySlice<Substring.UTF8View>) -> Int? {
        var weight = 1000
        for parameter in parameters {
            let pair = trimmed(parameter)
            guard pair.count >= 2, pair.first == UInt8(ascii: "q") || pair.first == UInt8(ascii: "Q") else { continue }
            let rest = pair.dropFirst()
            guard rest.first == UInt8(ascii: "=") else { continue }
            guard let value = qvalue(trimmed(rest.dropFirst())) else { return nil }
            weight = value
        }
        return weight
    }

    private static func qvalue(_ text: Substring.UTF8View) -> Int? {
        guard let first = text.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
        let whole = Int(first - UInt8(ascii: "0"))
        let rest = text.dropFirst()
        if rest.isEmpty { return whole * 1000 }
        guard rest.first == UInt8(ascii: "."), rest.count <= 4 else { return nil }
        var thousandths = 0
        var scale = 100
        for digit in rest.dropFirst() {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            thousandths += Int(digit - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        guard whole == 0 || thousandths == 0 else { return nil }
        return whole * 1000 + thousandths
    }

    private static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }), let end = bytes.lastIndex(where: { !isSpace($0) }) else {
            return bytes[bytes.endIndex...]
        }
        return bytes[start...end]
    }
}
