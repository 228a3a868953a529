import Foundation
import HeraldDomain

/// An app's API key. The secret is shown once at creation; only its hash and a prefix are kept.
public struct APIKey: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var appID: Int64
    public var name: String
    /// The first characters of the secret, so people can tell keys apart.
    public var prefix: String
    public var scopes: [APIScope]
    public var createdAt: Date
    public var lastUsedAt: Date?
    public var revokedAt: Date?

    package init(
        id: Int64, appID: Int64, name: String, prefix: String, scopes: [APIScope], createdAt: Date, lastUsedAt: Date? = nil,
        revokedAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.name = name
        self.prefix = prefix
        self.scopes = scopes
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
    }
}

/// Apps' API keys, on either engine.
public protocol APIKeyStore: Sendable {
    /// Creates a key (and its audit line, in one transaction) and returns it with its secret, which is
    /// not stored and cannot be shown again.
    func create(appID: Int64, name: String, scopes: [APIScope], actor: AuditActor, now: Date) throws -> (key: APIKey, secret: String)
    /// The app's keys, newest first.
    func all(appID: Int64) throws -> [APIKey]
    func find(id: Int64) throws -> APIKey?
    /// The live (not revoked) key whose secret is `secret`.
    func authenticate(secret: String) throws -> APIKey?
    /// Records that the key was used, at most once a minute; only bookkeeping, so a database that cannot
    /// take the write does not fail the request.
    func markUsed(_ key: APIKey, now: Date) throws
    /// Revokes the key (with its audit line, in one transaction); false when it was already revoked or does not exist.
    func revoke(_ key: APIKey, actor: AuditActor, now: Date) throws -> Bool
}

extension APIKey {
    /// A new key's secret and the prefix kept to tell keys apart.
    package static func newSecret() -> (secret: String, prefix: String) {
        let secret = "hrld_" + Secret.random()
        return (secret, String(secret.prefix(12)))
    }

    /// Whether a key last used at `lastUsedAt` should record a use at `now`: at most once a minute.
    package static func shouldRecordUse(lastUsedAt: Date?, now: Date) -> Bool {
        lastUsedAt.map { now.timeIntervalSince($0) > 60 } ?? true
    }
}
