import Crypto
import Foundation
import HeraldHTTP
import HeraldStorage
import Logging

/// `herald.js`, the web delivery client, as websites load it: `/sdk/v1/herald.js` (a classic script that
/// sets `globalThis.Herald`) and `/sdk/v1/herald.mjs` (an ES module exporting `Herald`). Both are made once
/// at start from the one source, `herald.js` in `webClientFolder`, which declares a top-level
/// `const Herald` and neither exports nor assigns globals. A Herald deployed without that file still
/// starts: it says so in its log, and the two addresses answer 404.
struct WebClient: Sendable {
    struct Script: Sendable {
        let body: SharedBody
        let etag: EntityTag

        init(_ text: String) {
            let bytes = Array(text.utf8)
            body = SharedBody(bytes)
            etag = EntityTag(String(Secret.hex(SHA256.hash(data: bytes)).prefix(32)))
        }
    }

    static let sourceName = "herald.js"

    let classic: Script?
    let module: Script?

    init(folder: URL, logger: Logger) throws {
        let source = folder.appendingPathComponent(Self.sourceName)
        guard FileManager.default.fileExists(atPath: source.path) else {
            logger.warning("the web client's source \(source.path) is missing: /sdk/v1/herald.js and /sdk/v1/herald.mjs answer 404 (put Clients/web/herald.js beside Templates/, or pass --web-client)")
            classic = nil
            module = nil
            return
        }
        guard let text = String(data: try Data(contentsOf: source), encoding: .utf8) else {
            throw WebClientError.notUTF8(path: source.path)
        }
        classic = Script("(function () {\n" + text + "\nglobalThis.Herald = Herald;\n})();")
        module = Script(text + "\nexport { Herald };\nexport default Herald;")
    }

    func classicScript(_ context: RequestContext) throws -> Response {
        serve(classic, context)
    }

    func moduleScript(_ context: RequestContext) throws -> Response {
        serve(module, context)
    }

    private func serve(_ script: Script?, _ context: RequestContext) -> Response {
        guard let script else {
            return .text("This Herald was started without the web client's source (\(Self.sourceName)), so it cannot serve the script.\n", status: 404)
        }
        let headers = HTTPHeaders([
            ("ETag", script.etag.description),
            ("Cache-Control", "public, max-age=3600"),
            // Any site may load it, as a classic script or as a module (module imports from other origins are CORS requests).
            ("Access-Control-Allow-Origin", "*"),
            ("Cross-Origin-Resource-Policy", "cross-origin"),
        ])
        if script.etag.isMatched(byIfNoneMatch: context.request.headers["If-None-Match"]) {
            return .notModified(headers: headers)
        }
        var response = Response(status: 200, headers: headers, body: script.body)
        response.headers.add("Content-Type", "text/javascript; charset=utf-8")
        return response
    }
}

enum WebClientError: Error, CustomStringConvertible {
    case notUTF8(path: String)

    var description: String {
        switch self {
        case .notUTF8(let path): "the web client's source \(path) is not UTF-8 text; replace it with the herald.js of this release"
        }
    }
}
