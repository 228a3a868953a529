import HeraldHTTP

/// `PercentEncoding.decode`: whatever it decodes, encoding and decoding again gives back.
enum PercentDecodingTarget {
    static func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for plusAsSpace in [false, true] {
            guard let decoded = PercentEncoding.decode(text, plusAsSpace: plusAsSpace) else { continue }
            let encoded = PercentEncoding.encode(decoded)
            require(encoded.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "+") }, "encode wrote \(encoded.debugDescription)")
            require(PercentEncoding.decode(encoded, plusAsSpace: plusAsSpace) == decoded,
                    "\(decoded.debugDescription) does not survive encode then decode")
        }
    }
}

/// `FormData(urlencoded:maxPairs:)`: a body is read whole or refused at the first field past the limit,
/// and what it read writes back to a body that reads the same.
enum FormTarget {
    static let maxPairs = 64

    static func run(_ bytes: [UInt8]) {
        let text = Substring(String(decoding: bytes, as: UTF8.self))
        let unbounded = FormData(urlencoded: text)
        do {
            let form = try FormData(urlencoded: text, maxPairs: maxPairs)
            require(form.pairs.count <= maxPairs, "\(form.pairs.count) pairs read with a limit of \(maxPairs)")
            require(unbounded == form, "the bounded and unbounded readers disagree")
            let again = try? FormData(urlencoded: Substring(form.urlencoded), maxPairs: maxPairs)
            require(again == form, "\(form.pairs) does not survive writing and reading back")
        } catch .tooManyFields(let field) {
            require(field == maxPairs + 1, "refused at field \(field), not at \(maxPairs + 1)")
            require(unbounded.map { $0.pairs.count > maxPairs } ?? true, "refused a form of at most \(maxPairs) fields")
        } catch {
            require(error == .invalidEncoding, "unexpected \(error)")
            require(unbounded == nil, "the unbounded reader accepted what the bounded one refused as not UTF-8")
        }
    }
}

/// `MultipartParser`: the first line is the Content-Type, the rest the body. Parts never exceed the
/// limit or the body, and a request reads the same parts as the parser.
enum MultipartTarget {
    static let maxParts = 32

    static func run(_ bytes: [UInt8]) {
        let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let contentType = String(decoding: bytes[..<newline], as: UTF8.self)
        let body = Array(bytes[min(newline + 1, bytes.endIndex)...])
        let boundary = MultipartParser.boundary(fromContentType: contentType)
        if let boundary {
            require(!boundary.isEmpty && boundary.utf8.count <= 70, "boundary \(boundary.debugDescription) was accepted")
        }
        do {
            let parts = try MultipartParser.parse(body, boundary: boundary ?? "fuzz", maxParts: maxParts)
            require(parts.count <= maxParts, "\(parts.count) parts read with a limit of \(maxParts)")
            require(parts.reduce(0) { $0 + $1.body.count } <= body.count, "the parts hold more bytes than the body")
        } catch .tooManyParts(let part) {
            require(part == maxParts + 1, "refused at part \(part), not at \(maxParts + 1)")
        } catch {}
        let request = Request(method: "POST", target: "/", headers: HTTPHeaders([("Content-Type", contentType)]), body: body)
        if let fields = try? request.formFields() {
            require(fields.pairs.count <= Request.maxFormFields, "\(fields.pairs.count) form fields")
        }
    }
}

/// `Request.cookies`: each line is one `Cookie` header. Names and values come back trimmed and
/// never hold a separator.
enum CookieTarget {
    static func run(_ bytes: [UInt8]) {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let request = Request(method: "GET", target: "/", headers: HTTPHeaders(lines.map { ("Cookie", String($0)) }))
        for (name, value) in request.cookies {
            for text in [name, value] {
                require(text == text.trimmingSpaces, "\(text.debugDescription) is not trimmed")
                require(!text.contains(";"), "\(text.debugDescription) holds a ';'")
            }
            require(!name.contains("="), "the name \(name.debugDescription) holds a '='")
        }
    }
}

/// `Request.init`: the path decodes to what its encoding decodes to, and the query to what it writes back as.
enum RequestTargetTarget {
    static func run(_ bytes: [UInt8]) {
        let target = String(decoding: bytes, as: UTF8.self)
        let request = Request(method: "get", target: target)
        require(request.method == "GET", "the method is \(request.method)")
        if let path = request.path {
            let written = PercentEncoding.encode(path.utf8) { $0 < 0x80 && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "?") }
            require(Request(method: "GET", target: written).path == path, "the path \(path.debugDescription) does not survive encoding")
        }
        let query = Request(method: "GET", target: "/?" + request.query.urlencoded).query
        require(query == request.query, "the query \(request.query.pairs) does not survive writing and reading back")
    }
}

/// `AcceptEncoding.accepts`: any header reads without a trap; gzip is chosen only when the header names
/// gzip or `*`, and the first element naming gzip decides over whatever follows.
enum AcceptEncodingTarget {
    static func run(_ bytes: [UInt8]) {
        let header = String(decoding: bytes, as: UTF8.self)
        let accepted = AcceptEncoding.accepts("gzip", in: header)
        let lowered = header.lowercased()
        require(!accepted || lowered.contains("gzip") || header.contains("*"), "\(header.debugDescription) chose gzip without naming it or *")
        require(!AcceptEncoding.accepts("gzip", in: "gzip;q=0," + header), "a leading gzip;q=0 was overruled by \(header.debugDescription)")
        require(AcceptEncoding.accepts("gzip", in: "gzip;q=0.001," + header), "a leading gzip;q=0.001 was overruled by \(header.debugDescription)")
    }
}

/// `EntityTagCondition` (`If-Match`, `If-None-Match`): any value reads without a trap; what is read holds
/// only tag characters, writes back to a value that reads the same, and each tag read matches itself
/// weakly, and strongly unless it is weak.
enum EntityTagTarget {
    static func run(_ bytes: [UInt8]) {
        let value = String(decoding: bytes, as: UTF8.self)
        guard let condition = EntityTagCondition(value) else { return }
        guard case .tags(let tags) = condition else {
            require(value.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") } == [UInt8(ascii: "*")], "\(value.debugDescription) read as *")
            return
        }
        require(!tags.isEmpty, "\(value.debugDescription) read as an empty list")
        let written = tags.map(\.description).joined(separator: ", ")
        require(EntityTagCondition(written) == condition, "\(value.debugDescription) wrote back as \(written.debugDescription)")
        for tag in tags {
            require(tag.opaqueTag.utf8.allSatisfy { $0 == 0x21 || ($0 >= 0x23 && $0 != 0x7F) }, "\(tag) holds a character no tag may")
            require(condition.matchesWeakly(tag) && tag.isMatched(byIfNoneMatch: value), "\(tag) does not match its own list \(value.debugDescription)")
            require(tag.isWeak || condition.matchesStrongly(tag), "\(tag) does not match its own list strongly")
            require(!condition.matchesStrongly(EntityTag(tag.opaqueTag, weak: true)), "a weak tag matched \(value.debugDescription) strongly")
        }
    }
}
