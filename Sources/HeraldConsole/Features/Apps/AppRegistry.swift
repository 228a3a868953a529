import Foundation
import HeraldDomain
import HeraldStorage

/// Registering apps and issuing their API keys: shared by the forms and the command line.
public struct AppRegistry: Sendable {
    let database: any HeraldDatabase

    public init(database: any HeraldDatabase) {
        self.database = database
    }

    public func createApp(name: String, platforms: [Platform], actor: AuditActor, now: Date) throws -> App {
        let name = name.trimmingCharacters(in: .whitespaces)
        var errors = InputProblems()
        if name.isEmpty { errors.add("name", Phrase("apps.errors.name_required")) }
        if name.scalarCount > 80 { errors.add("name", Phrase("apps.errors.name_too_long", ["limit": .number(80)])) }
        if let problem = InputRules.controlCharacterProblem(name) { errors.add("name", problem) }
        if platforms.isEmpty { errors.add("platforms", Phrase("apps.errors.platforms_required")) }
        guard errors.isEmpty else { throw errors }
        do {
            return try database.apps.create(name: name, platforms: platforms, actor: actor, now: now)
        } catch AppStoreError.nameTaken {
            throw InputProblems("name", Phrase("apps.errors.name_taken"))
        }
    }

    /// Creates a key; the returned secret is shown once and never stored.
    public func createKey(appID: Int64, name: String, scopes: [APIScope], actor: AuditActor, now: Date) throws -> (key: APIKey, secret: String) {
        let name = name.trimmingCharacters(in: .whitespaces)
        var errors = InputProblems()
        if try database.apps.find(id: appID) == nil { errors.add("app", Self.noApp(appID)) }
        if name.isEmpty { errors.add("name", Phrase("apps.errors.key_name_required")) }
        if name.scalarCount > 80 { errors.add("name", Phrase("apps.errors.key_name_too_long", ["limit": .number(80)])) }
        if let problem = InputRules.controlCharacterProblem(name) { errors.add("name", problem) }
        if scopes.isEmpty { errors.add("scopes", Phrase("apps.errors.scopes_required")) }
        guard errors.isEmpty else { throw errors }
        return try database.apiKeys.create(appID: appID, name: name, scopes: scopes, actor: actor, now: now)
    }

    /// Adds a named test device; its installation ID is what the delivery client sends.
    public func addTestDevice(appID: Int64, installationID: String, name: String, actor: AuditActor, now: Date) throws -> TestDevice {
        let installationID = installationID.trimmingCharacters(in: .whitespaces)
        let name = name.trimmingCharacters(in: .whitespaces)
        var errors = InputProblems()
        if try database.apps.find(id: appID) == nil { errors.add("app", Self.noApp(appID)) }
        if !InstallationID.isValid(installationID) {
            errors.add("installationId", Phrase("apps.errors.installation_id_invalid"))
        }
        if name.isEmpty || name.scalarCount > 80 { errors.add("deviceName", Phrase("apps.errors.device_name_invalid")) }
        if let problem = InputRules.controlCharacterProblem(name) { errors.add("deviceName", problem) }
        guard errors.isEmpty else { throw errors }
        do {
            return try database.apps.addTestDevice(appID: appID, installationID: installationID, name: name, actor: actor, now: now)
        } catch AppStoreError.deviceTaken {
            throw InputProblems("installationId", Phrase("apps.errors.device_taken"))
        } catch AppStoreError.tooManyDevices {
            throw InputProblems("installationId", Phrase(
                "apps.errors.device_limit", ["limit": .number(TestDevice.maxPerApp)]))
        }
    }

    /// Allows a web origin for the app: its pages may use the app's key from visitors' browsers.
    /// Problems are reported on the field `origin`.
    public func addOrigin(appID: Int64, origin typed: String, actor: AuditActor, now: Date) throws -> AllowedOrigin {
        let origin = try Self.origin(typed, ofApp: appID, in: database)
        do {
            return try database.apps.addOrigin(appID: appID, origin: origin.text, actor: actor, now: now)
        } catch AppStoreError.originTaken {
            throw InputProblems("origin", Phrase(
                "apps.errors.origin_taken", ["origin": .text(origin.text)]))
        } catch AppStoreError.tooManyOrigins {
            throw InputProblems("origin", Phrase(
                "apps.errors.origin_limit", ["limit": .number(AllowedOrigin.maxPerApp)]))
        }
    }

    /// Removes an allowed origin named as typed (the command line), read as `addOrigin` reads it.
    public func removeOrigin(appID: Int64, origin typed: String, actor: AuditActor, now: Date) throws -> AllowedOrigin {
        let text = try Self.origin(typed, ofApp: appID, in: database).text
        guard let allowed = try database.apps.origins(appID: appID).first(where: { $0.origin == text }),
              let removed = try database.apps.removeOrigin(id: allowed.id, appID: appID, actor: actor, now: now) else {
            throw InputProblems("origin", Phrase(
                "apps.errors.origin_unknown", ["origin": .text(text), "id": .text(String(appID))]))
        }
        return removed
    }

    /// A typed origin for an app that exists, or the problems with either.
    private static func origin(_ typed: String, ofApp appID: Int64, in database: any HeraldDatabase) throws -> WebOrigin {
        guard try database.apps.find(id: appID) != nil else { throw InputProblems("app", noApp(appID)) }
        switch WebOrigin.parse(typed) {
        case .success(let origin): return origin
        case .failure(let problem): throw InputProblems("origin", problem.phrase)
        }
    }

    /// The app's allowed web origins; an unknown app is an error (the command line names apps by id).
    public func origins(appID: Int64) throws -> [AllowedOrigin] {
        guard try database.apps.find(id: appID) != nil else { throw InputProblems("app", Self.noApp(appID)) }
        return try database.apps.origins(appID: appID)
    }

    /// The command line names an app by id; the forms only offer apps that exist.
    private static func noApp(_ id: Int64) -> Phrase {
        Phrase("apps.errors.no_app", ["id": .text(String(id))])
    }

    func revokeKey(_ key: APIKey, actor: AuditActor, now: Date) throws {
        _ = try database.apiKeys.revoke(key, actor: actor, now: now)
    }
}
