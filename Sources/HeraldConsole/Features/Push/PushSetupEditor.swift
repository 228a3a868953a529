import Foundation
import HeraldDomain
import HeraldPush
import HeraldStorage

/// Sets an app's push credentials from what an operator gave (the command line, the app page): each
/// is checked by making the provider's configuration from it, then stored sealed.
public struct PushSetupEditor: Sendable {
    let database: any HeraldDatabase
    let credentials: any PushCredentialStore

    public init(database: any HeraldDatabase, box: SecretBox) {
        self.database = database
        credentials = database.pushCredentials(box: box)
    }

    /// Checks and stores an app's APNs key; `url` replaces Apple's production address (its sandbox, a test server).
    public func setAPNs(appID: Int64, keyPEM: String, keyID: String, teamID: String, topic: String, url: String?, actor: AuditActor, now: Date) throws {
        try requireApp(appID)
        let baseURL = try Self.url(url, field: .apnsURL) ?? APNsConfiguration.productionURL
        let configuration = try Self.checked { try APNsConfiguration(keyPEM: keyPEM, keyID: keyID, teamID: teamID, topic: topic, baseURL: baseURL) }
        try credentials.setAPNs(
            APNsCredentials(keyPEM: configuration.keyPEM, keyID: configuration.keyID, teamID: configuration.teamID, topic: configuration.topic,
                            url: Self.given(url)),
            appID: appID, actor: actor, now: now)
    }

    /// Checks and stores an app's FCM service account (Google's JSON file); its token endpoint comes from the file.
    public func setFCM(appID: Int64, serviceAccountJSON: Data, url: String?, actor: AuditActor, now: Date) throws {
        try requireApp(appID)
        let baseURL = try Self.url(url, field: .fcmURL) ?? FCMConfiguration.productionURL
        let configuration = try Self.checked {
            try FCMConfiguration(serviceAccount: try FCMServiceAccount(json: serviceAccountJSON), baseURL: baseURL)
        }
        try credentials.setFCM(
            FCMCredentials(serviceAccountJSON: serviceAccountJSON, projectID: configuration.serviceAccount.projectID,
                           clientEmail: configuration.serviceAccount.clientEmail, url: Self.given(url)),
            appID: appID, actor: actor, now: now)
    }

    public func remove(_ provider: PushProvider, appID: Int64, actor: AuditActor, now: Date) throws {
        try requireApp(appID)
        switch provider {
        case .apns: try credentials.setAPNs(nil, appID: appID, actor: actor, now: now)
        case .fcm: try credentials.setFCM(nil, appID: appID, actor: actor, now: now)
        }
    }

    public func setup(appID: Int64) throws -> PushSetup {
        try credentials.setup(appID: appID)
    }

    private func requireApp(_ appID: Int64) throws {
        guard try database.apps.find(id: appID) != nil else {
            throw FormErrors("app", Phrase("apps.errors.no_app", ["id": .text(String(appID))], english: "There is no app with id \(appID)."))
        }
    }

    /// An address typed, or nil for an empty field (the provider's own address).
    private static func given(_ text: String?) -> String? {
        text.flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func url(_ text: String?, field: PushConfigurationError.Field) throws -> URL? {
        guard let text = given(text) else { return nil }
        guard let url = URL(string: text) else { throw problem(PushConfigurationError(field, "“\(text.prefix(80))” is not a URL.")) }
        return url
    }

    private static func checked<Configuration>(_ make: () throws -> Configuration) throws -> Configuration {
        do {
            return try make()
        } catch let error as PushConfigurationError {
            throw problem(error)
        }
    }

    /// The provider library's error as a form error: its English says exactly what is wrong; the
    /// console shows the catalog's sentence for the field in the reader's language.
    static func problem(_ error: PushConfigurationError) -> FormErrors {
        FormErrors(error.field.rawValue, Phrase("apps.push.errors.\(error.field.rawValue)", english: error.message))
    }
}
