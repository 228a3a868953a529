import Foundation

/// The stores a database engine provides, SQLite's (`AppDatabase`) or PostgreSQL's (`PostgresAppDatabase`):
/// one interface per table group, one implementation per engine, held to the same behaviour by the storage
/// contract suite (Tests/HeraldTests/StorageContractTests.swift), which runs on both.
public protocol Stores: Sendable {
    var users: any UserStore { get }
    var sessions: any SessionStore { get }
    var loginThrottles: any LoginThrottleStore { get }
    var serverSecrets: any ServerSecretStore { get }
    var auditLog: any AuditLogStore { get }
    var apps: any AppStore { get }
    var apiKeys: any APIKeyStore { get }
    func pushCredentials(box: SecretBox) -> any PushCredentialStore
    var campaigns: any CampaignStore { get }
    var installations: any InstallationStore { get }
    var pushOutbox: any PushOutboxStore { get }
}

extension Date {
    /// The instant as both engines keep it: to the nearest millisecond, as GRDB writes SQLite's text times
    /// ("yyyy-MM-dd HH:mm:ss.SSS"), so that PostgreSQL, which keeps microseconds, stores the same instant.
    public var storedPrecision: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}
