/// One part of a `multipart/form-data` body.
public struct MultipartPart: Sendable, Equatable {
    public var name: String
    public var filename: String?
    public var contentType: String?
    public var body: [UInt8]
}

/// Parses `multipart/form-data` bodies (RFC 7578).
public enum MultipartParser {
    public enum Failure: Error, Equatable {
        case missingBoundary
        case malformed(String)
        /// Reading stopped at this part, the first past the limit.
        case tooManyParts(Int)
    }

    /// RFC 2046's longest boundary.
    static let maxBoundaryLength = 70

    /// The boundary parameter of a `multipart/form-data` content type.
    public static func boundary(fromContentType contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pieces = parameter.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2, pieces[0].trimmingSpaces.lowercased() == "boundary" else { continue }
            let value = pieces[1].trimmingSpaces
            let unquoted = value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2
                ? String(value.dropFirst().dropLast()) : value
            return unquoted.isEmpty || unquoted.utf8.count > maxBoundaryLength ? nil : unquoted
        }
        return nil
    }

    /// The parts of `body`, refusing it as soon as part `maxParts + 1` begins.
    public static func parse(_ body: [UInt8], boundary: String, maxParts: Int = .max) throws(Failure) -> [MultipartPart] {
        guard !boundary.isEmpty, boundary.utf8.count <= maxBoundaryLength else { throw .missingBoundary }
        let delimiter = Array("--\(boundary)".utf8)
        guard var position = firstIndex(of: delimiter, in: body, from: 0) else {
            throw .malformed("the body does not contain the boundary")
        }
        var parts: [MultipartPart] = []
        while true {
            position += delimiter.count
            if body[position...].starts(with: Array("--".utf8)) { return parts }
            guard body[position...].starts(with: crlf) else { throw .malformed("a boundary is not followed by a line break") }
            guard parts.count < maxParts else { throw .tooManyParts(maxParts + 1) }
            position += crlf.count
            guard let headerEnd = firstIndex(of: crlf + crlf, in: body, from: position) else {
                throw .malformed("a part's headers never end")
            }
            guard let headerText = String(validating: body[position..<headerEnd], as: UTF8.self) else {
                throw .malformed("a part's headers are not UTF-8")
            }
            let contentStart = headerEnd + 4
            guard let next = firstIndex(of: crlf + delimiter, in: body, from: contentStart) else {
                throw .malformed("the body ends before its closing boundary")
            }
            parts.append(try part(headers: headerText, body: Array(body[contentStart..<next])))
            position = next + crlf.count
        }
    }

    private static let crlf: [UInt8] = [13, 10]

    private static func part(headers: String, body: [UInt8]) throws(Failure) -> MultipartPart {
        var name: String?
        var filename: String?
        var contentType: String?
        for line in headers.split(separator: "\r\n") {
            let pieces = line.split(separator: ":", maxSplits: 1)
            guard pieces.count == 2 else { continue }
            let value = pieces[1].trimmingSpaces
            switch pieces[0].trimmingSpaces.lowercased() {
            case "content-disposition":
                for parameter in value.split(separator: ";").dropFirst() {
                    let pair = parameter.split(separator: "=", maxSplits: 1)
                    guard pair.count == 2 else { continue }
                    let raw = pair[1].trimmingSpaces
                    let unquoted = raw.hasPrefix("\"") && raw.hasSuffix("\"") && raw.count >= 2
                        ? String(raw.dropFirst().dropLast()) : raw
                    switch pair[0].trimmingSpaces.lowercased() {
                    case "name": name = unquoted
                    case "filename": filename = unquoted
                    default: break
                    }
                }
            case "content-type":
                contentType = value
            default:
                break
            }
        }
        guard let name else { throw .malformed("a part has no name") }
        return MultipartPart(name: name, filename: filename, contentType: contentType, body: body)
    }

    /// Where `needle` next starts in `haystack` at or after `start` (Knuth–Morris–Pratt): linear in the
    /// body whatever the boundary, where a naive scan costs the body's length times the delimiter's for a
    /// body that nearly repeats it.
    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, start >= 0, start <= haystack.count else { return nil }
        // fallback[i]: the length of the longest proper prefix of needle[0...i] that is also its suffix.
        var fallback = [Int](repeating: 0, count: needle.count)
        var length = 0
        for index in needle.indices.dropFirst() {
            while length > 0 && needle[index] != needle[length] { length = fallback[length - 1] }
            if needle[index] == needle[length] { length += 1 }
            fallback[index] = length
        }
        var matched = 0
        for index in start..<haystack.count {
            while matched > 0 && haystack[index] != needle[matched] { matched = fallback[matched - 1] }
            if haystack[index] == needle[matched] { matched += 1 }
            if matched == needle.count { return index - needle.count + 1 }
        }
        return nil
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    public var trimmingSpaces: String {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let bytes = Substring(self).utf8
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
