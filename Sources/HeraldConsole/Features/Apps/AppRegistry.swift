import Foundation
import HeraldDomain
import HeraldStorage

/// Registering apps and issuing their API keys: shared by the forms and the command line.
public struct AppRegistry: Sendable {
    let database: AppDatabase

    public init(database: AppDatabase) {
        self.database = database
    }

    public func createApp(name: String, platforms: [Platform], actor: AuditActor, now: Date) throws -> App {
        let name = name.trimmingCharacters(in: .whitespaces)
        var errors = FormErrors()
        if name.isEmpty { errors.add("name", "Enter the app's name.") }
        if name.count > 80 { errors.add("name", "Use at most 80 characters for the app's name.") }
        if platforms.isEmpty { errors.add("platforms", "Choose at least one platform: iOS, Android or Web.") }
        guard errors.isEmpty else { throw errors }
        do {
            return try database.apps.create(name: name, platforms: platforms, actor: actor, now: now)
        } catch AppStoreError.nameTaken {
            throw FormErrors("name", "An app with this name already exists. Choose another name.")
        }
    }

    /// Creates a key; the returned secret is shown once and never stored.
    public func createKey(appID: Int64, name: String, scopes: [APIScope], actor: AuditActor, now: Date) throws -> (key: APIKey, secret: String) {
        let name = name.trimmingCharacters(in: .whitespaces)
        var errors = FormErrors()
        if try database.apps.find(id: appID) == nil { errors.add("app", "There is no app with id \(appID).") }
        if name.isEmpty { errors.add("name", "Name the key after where it will be used, such as “iOS app” or “CI script”.") }
        if name.count > 80 { errors.add("name", "Use at most 80 characters for the key's name.") }
        if scopes.isEmpty { errors.add("scopes", "Choose at least one scope.") }
        guard errors.isEmpty else { throw errors }
        return try database.apiKeys.create(appID: appID, name: name, scopes: scopes, actor: actor, now: now)
    }

    /// Adds a named test device; its installation ID is what the delivery client sends.
    public func addTestDevice(appID: Int64, installationID: String, name: String, actor: AuditActor, now: Date) throws -> TestDevice {
        let installationID = installationID.trimmingCharacters(in: .whitespaces)
        let name = name.trimmingCharacters(in: .whitespaces)
        var errors = FormErrors()
        if try database.apps.find(id: appID) == nil { errors.add("app", "There is no app with id \(appID).") }
        if installationID.isEmpty || installationID.count > 200 || ControlCharacters.first(in: installationID, multiline: false) != nil {
            errors.add("installationId", "Enter the installation ID (1 to 200 characters, no control characters) the device's app reports.")
        }
        if name.isEmpty || name.count > 80 { errors.add("deviceName", "Name the device (1 to 80 characters), such as “Sara's iPhone”.") }
        guard errors.isEmpty else { throw errors }
        do {
            return try database.apps.addTestDevice(appID: appID, installationID: installationID, name: name, actor: actor, now: now)
        } catch AppStoreError.deviceTaken {
            throw FormErrors("installationId", "This installation is already a test device of this app.")
        }
    }

    func revokeKey(_ key: APIKey, actor: AuditActor, now: Date) throws {
        _ = try database.apiKeys.revoke(key, actor: actor, now: now)
    }
}
