import HeraldHTTP

/// Where a request's body ends must be beyond doubt before any of it is read. A proxy in front of us
/// that reads the end one way while we read it another lets a second request hide inside the first
/// (request smuggling), so only plain framings pass: one Content-Length of digits (libmicrohttpd
/// refuses other digits itself), or `Transfer-Encoding: chunked` alone on HTTP/1.1, with header lines
/// of a token name, a colon and a value without control characters.
enum RequestFraming {
    /// Why the head is refused, to say in the 400; nil when its framing is sound. `folded` tells that
    /// libmicrohttpd saw a header line continued on the next one (obs-fold).
    static func problem(headers: HTTPHeaders, version: String, folded: Bool) -> String? {
        if folded {
            return "A header is folded onto the next line, which HTTP/1.1 no longer allows. Send each header on one line."
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
