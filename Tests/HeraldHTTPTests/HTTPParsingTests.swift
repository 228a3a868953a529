import HeraldHTTP
import Testing

@Suite("Form, query and multipart parsing")
struct HTTPParsingTests {
    @Test("urlencoded forms decode + and %XX, keep order and repeated names")
    func urlencoded() throws {
        let form = try #require(FormData(urlencoded: "a=1+2&b=%E2%9C%93&a=3&empty=&flag"))
        #expect(form["a"] == "1 2")
        #expect(form.values("a") == ["1 2", "3"])
        #expect(form["b"] == "✓")
        #expect(form["empty"] == "")
        #expect(form["flag"] == "")
        #expect(FormData(urlencoded: "a=%FF") == nil, "not UTF-8")
        #expect(FormData(urlencoded: "a=%G1") == nil, "malformed escape")
        #expect(FormData([("name", "مریم & co"), ("x", "a=b")]).urlencoded == "name=%D9%85%D8%B1%DB%8C%D9%85%20%26%20co&x=a%3Db")
    }

    @Test("Request splits the target into a decoded path and a query")
    func target() {
        let request = Request(method: "get", target: "/caf%C3%A9/x?q=a%20b&q=c")
        #expect(request.method == "GET")
        #expect(request.path == "/café/x")
        #expect(request.query.values("q") == ["a b", "c"])
        #expect(Request(method: "GET", target: "/%FF").path == nil)
    }

    @Test("The path ends at the first `?`, even one a combining mark follows; the query is all after it")
    func queryMark() {
        let repeated = Request(method: "GET", target: "/a?b=1?2&c")
        #expect(repeated.path == "/a")
        #expect(repeated.query["b"] == "1?2" && repeated.query.values("c") == [""])
        // An encoded `?` is part of the path.
        let encoded = Request(method: "GET", target: "/a%3Fb?x=1")
        #expect(encoded.path == "/a?b" && encoded.query["x"] == "1")
        // `?` and U+0301 are one Character, but the `?` still starts the query (RFC 3986 §3.4 reads code points).
        let marked = Request(method: "GET", target: "/caf\u{E9}?\u{301}x=1")
        #expect(marked.path == "/caf\u{E9}" && marked.query["\u{301}x"] == "1")
        for target in ["/a?", "/a", "?", ""] {
            let request = Request(method: "GET", target: target)
            #expect(request.path == (target.hasPrefix("/a") ? "/a" : ""), "\(target)")
            #expect(request.query.values("x").isEmpty, "\(target)")
        }
    }

    @Test("multipart/form-data gives fields and files")
    func multipart() throws {
        let body = [
            "--XyZ", "Content-Disposition: form-data; name=\"title\"", "", "سلام دنیا",
            "--XyZ", "Content-Disposition: form-data; name=\"file\"; filename=\"c.json\"", "Content-Type: application/json", "", "{\"a\":1}",
            "--XyZ--", "",
        ].joined(separator: "\r\n")
        let request = Request(
            method: "POST", target: "/import",
            headers: HTTPHeaders([("Content-Type", "multipart/form-data; boundary=XyZ")]), body: Array(body.utf8))
        let fields = try request.formFields()
        #expect(fields["title"] == "سلام دنیا")
        #expect(fields["file"] == nil)
        let parts = try request.multipartParts()
        #expect(parts.count == 2)
        #expect(parts[1].filename == "c.json")
        #expect(parts[1].contentType == "application/json")
        #expect(String(decoding: parts[1].body, as: UTF8.self) == "{\"a\":1}")
    }

    @Test("A truncated multipart body is an error, not a crash")
    func truncatedMultipart() {
        let body = "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nno end"
        let request = Request(
            method: "POST", target: "/import",
            headers: HTTPHeaders([("Content-Type", "multipart/form-data; boundary=XyZ")]), body: Array(body.utf8))
        #expect(throws: Request.BodyError.self) { try request.formFields() }
        let noBoundary = Request(method: "POST", target: "/", headers: HTTPHeaders([("Content-Type", "multipart/form-data")]), body: [])
        #expect(throws: Request.BodyError.self) { try noBoundary.formFields() }
    }

    @Test("A form with more fields than any page sends is refused, whatever its encoding")
    func tooManyFields() throws {
        // Given forms at the limit and one field past it
        let limit = Request.maxFormFields
        func urlencoded(_ count: Int) -> Request {
            let body = (0..<count).map { "data.\($0).key=k" }.joined(separator: "&")
            return Request(method: "POST", target: "/campaigns", headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")]),
                           body: Array(body.utf8))
        }
        let multipartBody = (0...limit).map { "--XyZ\r\nContent-Disposition: form-data; name=\"f\($0)\"\r\n\r\nv\r\n" }.joined() + "--XyZ--\r\n"
        let multipart = Request(method: "POST", target: "/campaigns", headers: HTTPHeaders([("Content-Type", "multipart/form-data; boundary=XyZ")]),
                                body: Array(multipartBody.utf8))

        // When they are read, then the one at the limit is whole and those past it are refused with their count
        #expect(try urlencoded(limit).formFields().pairs.count == limit)
        #expect(throws: Request.BodyError.tooManyFields(limit + 1)) { try urlencoded(limit + 1).formFields() }
        #expect(throws: Request.BodyError.tooManyFields(limit + 1)) { try multipart.formFields() }
    }

    @Test("A flood of empty or tiny fields is refused at the first field past the limit, not after reading them all")
    func floodStopsAtTheLimit() throws {
        // Given a 1 MiB body of `a&a&…` (half a million fields), as one field past the limit would be refused
        let flood = String(repeating: "a&", count: 512 * 1024)
        let request = Request(method: "POST", target: "/login", headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")]),
                              body: Array(flood.utf8))
        // When it is read, then reading stops at field limit + 1 (the error carries where it stopped)
        #expect(throws: Request.BodyError.tooManyFields(Request.maxFormFields + 1)) { try request.formFields() }
        #expect(throws: Request.BodyError.tooManyFields(3)) { try FormData(urlencoded: "a&&b&c&%FF", maxPairs: 2) }
    }

    @Test("Generated multipart bodies read back part for part, whatever the boundary looks like")
    func multipartRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("-ab\r\n=\"".utf8)
        for _ in 0..<300 {
            // A boundary that the parts nearly repeat is the worst case for a naive search.
            let boundary = String(repeating: "a", count: Int.random(in: 1...70, using: &generator))
            let parts = (0..<Int.random(in: 0...6, using: &generator)).map { index in
                (name: "f\(index)", body: (0..<Int.random(in: 0...200, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            }
            var body: [UInt8] = []
            for part in parts {
                body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\"\r\n\r\n".utf8) + part.body + [13, 10]
            }
            body += Array("--\(boundary)--\r\n".utf8)
            let contains = { (haystack: [UInt8], needle: [UInt8]) in
                haystack.count >= needle.count && (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
            }
            // A part that holds its own delimiter cannot be framed; the generator's alphabet makes that rare.
            guard !parts.contains(where: { contains($0.body + [13, 10], Array("\r\n--\(boundary)".utf8)) }) else { continue }
            let parsed = try MultipartParser.parse(body, boundary: boundary)
            #expect(parsed.map(\.name) == parts.map(\.name))
            #expect(parsed.map(\.body) == parts.map(\.body))
        }
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data; boundary=" + String(repeating: "b", count: 71)) == nil)
    }

    @Test("Cookies are read from every Cookie header")
    func cookies() {
        let request = Request(method: "GET", target: "/", headers: HTTPHeaders([("Cookie", "a=1; b=2"), ("cookie", "c=3; a=9")]))
        #expect(request.cookies == ["a": "1", "b": "2", "c": "3"])
    }
}
