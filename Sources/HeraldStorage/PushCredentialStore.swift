import Foundation

/// What signs an app's APNs requests: the `.p8` key (PKCS#8 PEM), its id, the team, and the topic
/// (the app's bundle id); `url` replaces Apple's address (a test server, a proxy).
public struct APNsCredentials: Sendable, Equatable {
    public var keyPEM: String
    public var keyID: String
    public var teamID: String
    public var topic: String
    public var url: String?

    public init(keyPEM: String, keyID: String, teamID: String, topic: String, url: String? = nil) {
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.url = url
    }
}

/// An app's FCM service account: the JSON file Google issues, with the parts pages show read out.
public struct FCMCredentials: Sendable, Equatable {
    public var serviceAccountJSON: Data
    public var projectID: String
    public var clientEmail: String
    public var url: String?

    public init(serviceAccountJSON: Data, projectID: String, clientEmail: String, url: String? = nil) {
        self.serviceAccountJSON = serviceAccountJSON
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.url = url
    }
}

/// What an app page shows of its push set-up: never a secret.
public struct PushSetup: Sendable, Equatable {
    public var apnsKeyID: String?
    public var apnsTeamID: String?
    public var apnsTopic: String?
    public var apnsURL: String?
    public var fcmProjectID: String?
    public var fcmClientEmail: String?
    public var fcmURL: String?
    public var updatedAt: Date?
    public var updatedBy: String?

    package init(
        apnsKeyID: String? = nil, apnsTeamID: String? = nil, apnsTopic: String? = nil, apnsURL: String? = nil,
        fcmProjectID: String? = nil, fcmClientEmail: String? = nil, fcmURL: String? = nil, updatedAt: Date? = nil,
        updatedBy: String? = nil
    ) {
        self.apnsKeyID = apnsKeyID
        self.apnsTeamID = apnsTeamID
        self.apnsTopic = apnsTopic
        self.apnsURL = apnsURL
        self.fcmProjectID = fcmProjectID
        self.fcmClientEmail = fcmClientEmail
        self.fcmURL = fcmURL
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
    }

    public var hasAPNs: Bool { apnsKeyID != nil }
    public var hasFCM: Bool { fcmProjectID != nil }
}

/// An app's `app_push_credentials` row as either engine reads it.
package struct StoredPushCredentials {
    package var apnsKeySealed: Data?
    package var apnsKeyID: String?
    package var apnsTeamID: String?
    package var apnsTopic: String?
    package var apnsURL: String?
    package var fcmAccountSealed: Data?
    package var fcmProjectID: String?
    package var fcmClientEmail: String?
    package var fcmURL: String?
    package var updatedAt: Date
    package var updatedBy: String

    package init(
        apnsKeySealed: Data? = nil, apnsKeyID: String? = nil, apnsTeamID: String? = nil, apnsTopic: String? = nil,
        apnsURL: String? = nil, fcmAccountSealed: Data? = nil, fcmProjectID: String? = nil, fcmClientEmail: String? = nil,
        fcmURL: String? = nil, updatedAt: Date, updatedBy: String
    ) {
        self.apnsKeySealed = apnsKeySealed
        self.apnsKeyID = apnsKeyID
        self.apnsTeamID = apnsTeamID
        self.apnsTopic = apnsTopic
        self.apnsURL = apnsURL
        self.fcmAccountSealed = fcmAccountSealed
        self.fcmProjectID = fcmProjectID
        self.fcmClientEmail = fcmClientEmail
        self.fcmURL = fcmURL
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
    }

    /// The credentials, opened with `box`; a provider whose sealed secret is there but whose other parts are
    /// not (written by something else) reads as not set up.
    package func opened(box: SecretBox, appID: Int64) throws -> (apns: APNsCredentials?, fcm: FCMCredentials?) {
        var apns: APNsCredentials?
        if let apnsKeySealed, let apnsKeyID, let apnsTeamID, let apnsTopic {
            let key = try box.open(apnsKeySealed, context: StoredPushCredentials.context("apns", appID))
            apns = APNsCredentials(keyPEM: String(decoding: key, as: UTF8.self), keyID: apnsKeyID, teamID: apnsTeamID, topic: apnsTopic, url: apnsURL)
        }
        var fcm: FCMCredentials?
        if let fcmAccountSealed, let fcmProjectID, let fcmClientEmail {
            fcm = FCMCredentials(
                serviceAccountJSON: try box.open(fcmAccountSealed, context: StoredPushCredentials.context("fcm", appID)),
                projectID: fcmProjectID, clientEmail: fcmClientEmail, url: fcmURL)
        }
        return (apns, fcm)
    }

    /// What binds a sealed secret to its provider and app, so one cannot be moved to another.
    package static func context(_ provider: String, _ appID: Int64) -> String { "herald push \(provider) app \(appID)" }

    /// What pages show: never a secret.
    package var setup: PushSetup {
        let hasAPNs = apnsKeySealed != nil, hasFCM = fcmAccountSealed != nil
        return PushSetup(
            apnsKeyID: hasAPNs ? apnsKeyID : nil, apnsTeamID: hasAPNs ? apnsTeamID : nil, apnsTopic: hasAPNs ? apnsTopic : nil,
            apnsURL: hasAPNs ? apnsURL : nil, fcmProjectID: hasFCM ? fcmProjectID : nil, fcmClientEmail: hasFCM ? fcmClientEmail : nil,
            fcmURL: hasFCM ? fcmURL : nil, updatedAt: updatedAt, updatedBy: updatedBy)
    }
}

/// Apps' push credentials, sealed, on either engine.
public protocol PushCredentialStore: Sendable {
    /// Sets (or with nil, removes) the app's APNs credentials, with its audit line.
    func setAPNs(_ credentials: APNsCredentials?, appID: Int64, actor: AuditActor, now: Date) throws
    /// Sets (or with nil, removes) the app's FCM service account, with its audit line.
    func setFCM(_ credentials: FCMCredentials?, appID: Int64, actor: AuditActor, now: Date) throws
    /// The app's credentials, opened: for the sender only.
    func credentials(appID: Int64) throws -> (apns: APNsCredentials?, fcm: FCMCredentials?)
    /// What pages show: which providers are set up, by whom and when.
    func setup(appID: Int64) throws -> PushSetup
}
