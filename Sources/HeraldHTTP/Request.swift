/// An HTTP request as the server received it: no socket, so handlers can be tested as plain functions.
public struct Request: Sendable {
    public var method: String
    /// The request target as sent, path and query.
    public var target: String
    /// The percent-decoded path, or nil when it does not decode to UTF-8.
    public var path: String?
    public var query: FormData
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The client's IP address as text; empty when unknown.
    public var remoteAddress: String
    /// The name the server gave this request, for its log line and error answers; empty until given.
    public var id = ""

    public init(
        method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        remoteAddress: String = ""
    ) {
        self.method = method.uppercased()
        self.target = target
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        let rawPath = Self.rawPath(of: target)
        self.path = PercentEncoding.decode(rawPath, plusAsSpace: false)
        self.query = rawPath.endIndex < target.endIndex
            ? FormData(urlencoded: target[target.utf8.index(after: rawPath.endIndex)...]) ?? FormData() : FormData()
    }

    /// The target up to its first `?`, not percent-decoded: what routes split into segments and logs name.
    public var rawPath: Substring { Self.rawPath(of: target) }

    /// `target` up to its first `?` (RFC 3986 §3.4 reads code points: a `?` that a combining mark follows still
    /// ends the path), found by byte, which costs far less than splitting by Character on every request.
    public static func rawPath(of target: String) -> Substring {
        target[..<(target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex)]
    }

    /// Cookies from every `Cookie` header; the first of a repeated name wins.
    public var cookies: [String: String] {
        var result: [String: String] = [:]
        for header in headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let pieces = pair.split(separator: "=", maxSplits: 1)
                guard pieces.count == 2 else { continue }
                let name = pieces[0].trimmingSpaces
                if result[name] == nil { result[name] = pieces[1].trimmingSpaces }
            }
        }
        return result
    }

    /// The media type of the body, lower-cased, without parameters.
    public var mediaType: String? {
        headers["Content-Type"].map { String($0.split(separator: ";").first ?? "").trimmingSpaces.lowercased() }
    }

    public enum BodyError: Error, Equatable {
        case unsupportedMediaType
        case invalidEncoding
        case malformedMultipart(String)
        /// More fields than any page sends: reading stopped at this one, the first past the limit.
        case tooManyFields(Int)
        /// A field's name or value holds more than `CombiningMarks.longestRun` combining marks in a row.
        case tooManyCombiningMarks
    }

    /// The most fields a form may send. Herald's largest form, the composer at every limit (20 triggers of
    /// 10 filters, 50 custom data pairs), sends about 1,000; a form far past that is a script, and
    /// reading it into a page with one input per field would cost far more than refusing it.
    public static let maxFormFields = 2000

    /// The form fields of a urlencoded or multipart body (file parts are left out; see `multipartParts`),
    /// none holding a run of combining marks that comparing or hashing it would pay for (`CombiningMarks`).
    public func formFields() throws(BodyError) -> FormData {
        var fields = FormData()
        switch mediaType {
        case "application/x-www-form-urlencoded":
            guard let text = String(validating: body, as: UTF8.self) else { throw .invalidEncoding }
            fields = try FormData(urlencoded: Substring(text), maxPairs: Self.maxFormFields)
        case "multipart/form-data":
            for part in try multipartParts() where part.filename == nil {
                guard let value = String(validating: part.body, as: UTF8.self) else { throw .invalidEncoding }
                fields.pairs.append((part.name, value))
            }
        default:
            throw .unsupportedMediaType
        }
        if fields.pairs.contains(where: { CombiningMarks.exceedRun(in: $0.name) || CombiningMarks.exceedRun(in: $0.value) }) {
            throw .tooManyCombiningMarks
        }
        return fields
    }

    /// Every part of a `multipart/form-data` body, files included.
    public func multipartParts() throws(BodyError) -> [MultipartPart] {
        guard mediaType == "multipart/form-data",
              let boundary = headers["Content-Type"].flatMap(MultipartParser.boundary(fromContentType:))
        else { throw .unsupportedMediaType }
        do {
            return try MultipartParser.parse(body, boundary: boundary, maxParts: Self.maxFormFields)
        } catch {
            switch error {
            case .missingBoundary: throw .malformedMultipart("the boundary is missing")
            case .malformed(let reason): throw .malformedMultipart(reason)
            case .tooManyParts(let count): throw .tooManyFields(count)
            }
        }
    }
}
