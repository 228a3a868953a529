import Foundation
import HeraldDomain

/// The stores a database engine provides, SQLite's (`SQLiteAppDatabase`) or PostgreSQL's (`PostgresAppDatabase`):
/// one interface per table group, one implementation per engine, held to the same behaviour by the storage
/// contract suite (Tests/HeraldTests/Storage/StorageContractTests.swift), which runs on both.
public protocol Stores: Sendable {
    var users: any UserStore { get }
    var sessions: any SessionStore { get }
    var loginThrottles: any LoginThrottleStore { get }
    var serverSecrets: any ServerSecretStore { get }
    var auditLog: any AuditLogStore { get }
    var apps: any AppStore { get }
    var apiKeys: any APIKeyStore { get }
    func pushCredentials(box: SecretBox) -> any PushCredentialStore
    var events: any EventStore { get }
    var campaigns: any CampaignStore { get }
    var testSends: any TestSendStore { get }
    var installations: any InstallationStore { get }
    var pushOutbox: any PushOutboxStore { get }
    /// Hands space that deletions freed back to the system, at most `pages` pages' worth at a time (after
    /// each step of raw-event retention).
    func reclaimFreePages(atMost pages: Int) throws
}

/// A database engine as the server runs on it: its stores, and what the server asks of the engine itself.
public protocol HeraldDatabase: Stores {
    /// Counts committed changes to what feeds, API keys and allowed web origins are built from, so
    /// in-memory copies know when to rebuild: SQLite's are this process's; PostgreSQL's are every instance's.
    var changes: ChangeCounter { get }
    /// Requests the database could not take lately, for `/readyz`.
    var unavailability: UnavailabilityLog { get }
    /// The database refused writes when it was opened: pages and the feed work, every change fails.
    var openedReadOnly: Bool { get }
    /// Where the data is, for logs and the System page: a file's path, or a server's URL without its password.
    var location: String { get }
    /// The number that moves with every change to what a feed is built from, by any process.
    func feedGeneration() throws -> Int64
    /// Whether the database answers a query (for `/readyz`).
    func isReachable() -> Bool
    /// Applies pending migrations; refuses a database migrated by a newer Herald.
    func migrate() throws
    func appliedMigrations() throws -> [String]
    /// What a long-running server needs beside its requests: SQLite's checkpoints off the commit path,
    /// PostgreSQL's listening for other instances' changes.
    func startBackgroundWork() throws
    /// Bytes the data takes: the file and its write-ahead log, or the server's database (no log of its own).
    func storageSize() throws -> (database: Int64, log: Int64?)
    func close() throws
}

extension Date {
    /// The instant as both engines keep it: to the nearest millisecond, as GRDB writes SQLite's text times
    /// ("yyyy-MM-dd HH:mm:ss.SSS"), so that PostgreSQL, which keeps microseconds, stores the same instant.
    public var storedPrecision: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    /// The instant as a number both engines store and compare as the instants compare (push due times): whole
    /// milliseconds since 1970, inside Herald's range (`UTCTime.supported`; an instant outside it is its nearer
    /// end, so order is kept and nothing traps).
    package var storedMilliseconds: Int64 {
        let clamped = min(max(self, UTCTime.supported.lowerBound), UTCTime.supported.upperBound)
        return Int64((clamped.timeIntervalSince1970 * 1000).rounded())
    }

    /// The instant `storedMilliseconds` stored.
    package init(storedMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
