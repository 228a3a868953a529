import Crypto
import Foundation
import HeraldHTTP
import HeraldStorage

/// The files under `Public/`, read once at start and served from memory under `/public/`.
/// Only files found at start can be served, so no request path can reach outside the folder.
struct StaticFiles: Sendable {
    struct File: Sendable {
        let body: [UInt8]
        let contentType: String
        let etag: EntityTag
        let lastModified: String
    }

    private let files: [String: File]

    init(folder: URL) throws {
        var files: [String: File] = [:]
        let root = folder.standardizedFileURL.resolvingSymlinksInPath()
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey, .contentModificationDateKey])
        while let url = enumerator?.nextObject() as? URL {
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .contentModificationDateKey])
            guard values.isRegularFile == true else { continue }
            let relative = String(url.standardizedFileURL.resolvingSymlinksInPath().path.dropFirst(root.path.count + 1))
            let body = Array(try Data(contentsOf: url))
            let digest = Secret.hex(SHA256.hash(data: body).prefix(12))
            files[relative] = File(
                body: body, contentType: Self.contentType(for: url.pathExtension), etag: EntityTag(digest),
                lastModified: HTTPDate.format(values.contentModificationDate ?? Date()))
        }
        self.files = files
    }

    func serve(_ context: RequestContext) throws -> Response {
        guard let name = context.parameters["*"], let file = files[name] else { throw HTTPError.notFound }
        var headers = HTTPHeaders([
            ("ETag", file.etag.description), ("Last-Modified", file.lastModified), ("Cache-Control", "public, max-age=300"),
        ])
        let request = context.request
        // RFC 9110 §13.2.2: If-Modified-Since counts only without If-None-Match.
        if file.etag.isMatched(byIfNoneMatch: request.headers["If-None-Match"])
            || (request.headers["If-None-Match"] == nil && request.headers["If-Modified-Since"] == file.lastModified) {
            return .notModified(headers: headers)
        }
        headers.add("Content-Type", file.contentType)
        return Response(status: 200, headers: headers, body: file.body)
    }

    private static func contentType(for fileExtension: String) -> String {
        switch fileExtension.lowercased() {
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "json": "application/json"
        case "txt": "text/plain; charset=utf-8"
        case "woff2": "font/woff2"
        default: "application/octet-stream"
        }
    }
}

/// HTTP dates (RFC 9110 IMF-fixdate).
enum HTTPDate {
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
