import HeraldHTTP

/// Where a request's body ends must be beyond doubt before any of it is read. A proxy in front of us
/// that reads the end one way while we read it another lets a second request hide inside the first
/// (request smuggling), so only plain framings pass: one Content-Length of digits (libmicrohttpd
/// refuses other digits itself), or `Transfer-Encoding: chunked` alone on HTTP/1.1, with header lines
/// of a token name, a colon and a value without control characters.
enum RequestFraming {
    /// Why the head is refused, to say in the 400; nil when its framing is sound. `folded` tells that
    /// libmicrohttpd saw a header line continued on the next one (obs-fold); `cutShort`, that a NUL in the
    /// request line or a header ended it early for libmicrohttpd, which hides what followed it.
    static func problem(headers: HTTPHeaders, version: String, folded: Bool, cutShort: Bool = false) -> String? {
        if folded {
            return "A header is folded onto the next line, which HTTP/1.1 no longer allows. Send each header on one line."
        }
        if cutShort {
            return "The request line or a header holds a NUL character. Send the address and header values as printable characters."
        }
        for field in headers {
            if field.name.isEmpty || !field.name.utf8.allSatisfy(isTokenCharacter) {
                return "A header name has a space or another character names cannot have. Send \"Name: value\", with nothing between the name and the colon."
            }
            if field.value.utf8.contains(where: isControlCharacter) {
                return "The header \(field.name) holds a control character. Send header values of printable characters."
            }
        }
        let lengths = headers.values("Content-Length")
        let codings = headers.values("Transfer-Encoding")
        if lengths.count > 1 {
            return "The request has more than one Content-Length. Send one."
        }
        guard let coding = codings.first else { return nil }
        if !lengths.isEmpty {
            return "The request has both Content-Length and Transfer-Encoding. Send one of them."
        }
        if codings.count > 1 || coding.lowercased() != "chunked" {
            return "The only Transfer-Encoding accepted is chunked, alone. Send the body chunked, or with a Content-Length."
        }
        if version != "HTTP/1.1" {
            return "Transfer-Encoding needs HTTP/1.1, and this request is \(version). Send a Content-Length."
        }
        return nil
    }

    /// A header as libmicrohttpd left it in the head: where its name and its value start, as offsets from
    /// the head's first byte, and their lengths up to the NUL that ends each.
    struct ParsedField {
        let name: Int
        let nameLength: Int
        let value: Int
        let valueLength: Int
    }

    /// Whether every byte of `head` is accounted for by the request line ending at `requestLineEnd` and
    /// `fields`, as libmicrohttpd 0.9.75 leaves a head it parsed in place: each line end (CR LF or LF)
    /// overwritten by one or two NULs, each header's colon by one, blanks before a value, and an empty
    /// line last. A value (or the request target) ends at its first NUL, so one that the client sent cuts
    /// it short (`Content-Length: 13\0 99` reads as 13, an origin followed by `\0.evil.example` as the
    /// origin); the bytes it hid are then left over between one part and the next. Only a NUL right
    /// before a line's end hides nothing, and cannot be told from the line end.
    static func isWhole(_ head: UnsafeRawBufferPointer, requestLineEnd: Int, fields: [ParsedField]) -> Bool {
        var position = requestLineEnd
        /// The bytes from `position` to `next` are `count` NULs, within the head.
        func nuls(to next: Int, _ count: ClosedRange<Int>) -> Bool {
            guard position >= 0, next <= head.count, next >= position, count.contains(next - position) else { return false }
            return head[position..<next].allSatisfy { $0 == 0 }
        }
        for field in fields {
            guard field.nameLength >= 0, field.valueLength >= 0, nuls(to: field.name, 1...2) else { return false }
            // The colon MHD overwrote, then only blanks up to the value.
            let colon = field.name + field.nameLength
            position = colon
            guard field.value > colon, nuls(to: colon + 1, 1...1), field.value + field.valueLength <= head.count,
                  head[(colon + 1)..<field.value].allSatisfy({ $0 == 0x20 || $0 == 0x09 }) else { return false }
            position = field.value + field.valueLength
        }
        // The last line's end, then the empty line's.
        return nuls(to: head.count, 2...4)
    }

    /// RFC 9110's tchar: the characters of a token, such as a header name.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// A control character other than the tab: a bare CR inside a value ends the line for some readers.
    private static func isControlCharacter(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F
    }
}
