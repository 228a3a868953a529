import Foundation

/// The control port's routes, plain HTTP on 127.0.0.1, for tests in another process:
/// `GET /requests` (a JSON array; `?format=jsonl` for JSON Lines), `GET /stats`, `POST /reset`,
/// `POST /hold`, `POST /release`, `POST /revoke-tokens` (every FCM access token issued stops working).
struct ControlRoutes: Sendable {
    let providers: MockProviders

    func answer(_ request: MockRequest) -> MockResponse {
        switch (request.method, request.path) {
        case ("GET", "/requests"):
            let records = providers.requests()
            if request.query.split(separator: "&").contains("format=jsonl") {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                var body: [UInt8] = []
                for record in records {
                    body += (try? encoder.encode(record)) ?? Data("{}".utf8)
                    body.append(UInt8(ascii: "\n"))
                }
                return MockResponse(status: 200, headers: [("content-type", "application/jsonl")], body: body)
            }
            return Self.encoded(records)
        case ("GET", "/stats"):
            return Self.encoded(providers.stats())
        case ("POST", "/reset"):
            providers.reset()
            return Self.encoded(providers.stats())
        case ("POST", "/hold"):
            providers.hold()
            return Self.encoded(providers.stats())
        case ("POST", "/release"):
            providers.release()
            return Self.encoded(providers.stats())
        case ("POST", "/revoke-tokens"):
            providers.revokeAccessTokens()
            return Self.encoded(providers.stats())
        case (_, "/requests"), (_, "/stats"), (_, "/reset"), (_, "/hold"), (_, "/release"), (_, "/revoke-tokens"):
            return .json(405, ["error": "method not allowed"])
        default:
            return .json(404, ["error": "no such route: GET /requests, GET /stats, POST /reset, /hold, /release, /revoke-tokens"])
        }
    }

    private static func encoded(_ value: some Encodable) -> MockResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return MockResponse(status: 200, headers: [("content-type", "application/json")], body: Array(body))
    }
}
