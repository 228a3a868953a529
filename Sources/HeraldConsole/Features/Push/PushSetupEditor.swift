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

    /// Checks and stores an app's APNs key; `url` replaces Apple's production address (its sandbox, a test
    /// server). Every setting that cannot work is refused at once, each at its field.
    public func setAPNs(appID: Int64, keyPEM: String, keyID: String, teamID: String, topic: String, url: String?, actor: AuditActor, now: Date) throws {
        try requireApp(appID)
        var problems: [PushConfigurationError] = []
        let baseURL = Self.url(url, field: .apnsURL, problems: &problems) ?? APNsConfiguration.productionURL
        let configuration = Self.checked(&problems) {
            try APNsConfiguration(keyPEM: keyPEM, keyID: keyID, teamID: teamID, topic: topic, baseURL: baseURL)
        }
        guard let configuration, problems.isEmpty else { throw Self.formErrors(problems) }
        try credentials.setAPNs(
            APNsCredentials(keyPEM: configuration.keyPEM, keyID: configuration.keyID, teamID: configuration.teamID, topic: configuration.topic,
                            url: Self.given(url)),
            appID: appID, actor: actor, now: now)
    }

    /// Checks and stores an app's FCM service account (Google's JSON file); its token endpoint comes from the file.
    public func setFCM(appID: Int64, serviceAccountJSON: Data, url: String?, actor: AuditActor, now: Date) throws {
        try requireApp(appID)
        var problems: [PushConfigurationError] = []
        let baseURL = Self.url(url, field: .fcmURL, problems: &problems) ?? FCMConfiguration.productionURL
        let account = Self.checked(&problems) { try FCMServiceAccount(json: serviceAccountJSON) }
        let configuration = account.flatMap { account in Self.checked(&problems) { try FCMConfiguration(serviceAccount: account, baseURL: baseURL) } }
        guard let configuration, problems.isEmpty else { throw Self.formErrors(problems) }
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
            throw InputProblems("app", Phrase("apps.errors.no_app", ["id": .text(String(appID))]))
        }
    }

    /// An address typed, or nil for an empty field (the provider's own address).
    private static func given(_ text: String?) -> String? {
        text.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The address typed, nil for none; one that is not a URL is a problem at its field.
    private static func url(_ text: String?, field: PushConfigurationError.Field, problems: inout [PushConfigurationError]) -> URL? {
        guard let text = given(text) else { return nil }
        guard let url = URL(string: text) else {
            problems.append(PushConfigurationError(field, "“\(text.prefix(80))” is not a URL."))
            return nil
        }
        return url
    }

    /// What `make` makes, or nil with its problems added to `problems`.
    private static func checked<Configuration>(_ problems: inout [PushConfigurationError], _ make: () throws -> Configuration) -> Configuration? {
        do {
            return try make()
        } catch let error as PushConfigurationProblems {
            problems += error.problems
        } catch let error as PushConfigurationError {
            problems.append(error)
        } catch {
            problems.append(PushConfigurationError(.fcmServiceAccount, "\(error)"))
        }
        return nil
    }

    /// The provider library's problems as form errors, one a field (the first found there): its English says
    /// exactly what is wrong; the console shows the catalog's sentence for the field in the reader's language,
    /// naming what a key of the wrong kind is.
    static func formErrors(_ problems: [PushConfigurationError]) -> InputProblems {
        var errors = InputProblems()
        var fields = Set<PushConfigurationError.Field>()
        for problem in problems where fields.insert(problem.field).inserted {
            let phrase = if let kind = problem.keyKind {
                Phrase("apps.push.errors.\(problem.field.rawValue)_kind", ["kind": .text(kind)])
            } else {
                Phrase("apps.push.errors.\(problem.field.rawValue)")
            }
            errors.add(problem.field.rawValue, problem.message, shownAs: phrase)
        }
        return errors
    }
}
