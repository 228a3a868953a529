import Foundation

/// Keys made once per database and shared by every process that opens it, on either engine.
public protocol ServerSecretStore: Sendable {
    /// The 32-byte key that signs what the server hands browsers to bring back (visitors' form tokens,
    /// trusted-browser cookies), made the first time it is asked for, the same for every process.
    func signingKey(now: Date) throws -> [UInt8]
}
