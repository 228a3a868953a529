import Foundation
import HeraldHTTP
import HeraldStorage

/// `GET /api/v1/key`: which app and scopes a key carries, so developers can check a key before using it.
struct KeyInfo: Sendable {
    let services: Services

    private struct Body: Encodable {
        struct Key: Encodable {
            let id: Int64
            let name: String
            let prefix: String
            let scopes: [String]
        }

        struct App: Encodable {
            let id: Int64
            let name: String
            let platforms: [String]
        }

        let key: Key
        let app: App
    }

    func show(_ context: RequestContext, key: APIKey) throws -> Response {
        // The key's app removed since the key was cached: the key went with it.
        guard let app = try services.database.apps.find(id: key.appID) else {
            throw HTTPError(401, "This API key is unknown or has been revoked.")
        }
        let body = Body(
            key: .init(id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes.map(\.rawValue)),
            app: .init(id: app.id, name: app.name, platforms: app.platforms.map(\.rawValue)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return .json(Array(try encoder.encode(body)))
    }
}
