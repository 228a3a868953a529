import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Seals secrets that Herald must read back (push provider keys) with AES-GCM under a 256-bit key
/// kept in a file beside the database, not in it: a copy of the database (a backup, a support dump)
/// does not carry the secrets, and the key file is made readable by its owner only.
public struct SecretBox: Sendable {
    private let key: SymmetricKey

    public init(key: SymmetricKey) {
        self.key = key
    }

    /// The box whose key is in `path`, made there (mode 0600) the first time. Refuses a file that is
    /// not a key rather than replacing it: secrets sealed with the old key would be lost.
    public init(keyFile path: String) throws {
        if let existing = FileManager.default.contents(atPath: path) {
            guard existing.count == 32 else { throw SecretBoxError.notAKey(path: path, bytes: existing.count) }
            key = SymmetricKey(data: existing)
            return
        }
        let fresh = SymmetricKey(size: .bits256)
        let bytes = fresh.withUnsafeBytes { Data($0) }
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            // Another process made it between the read and the create: use theirs.
            if errno == EEXIST, let made = FileManager.default.contents(atPath: path), made.count == 32 {
                key = SymmetricKey(data: made)
                return
            }
            throw SecretBoxError.cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        defer { Glibc.close(descriptor) }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            throw SecretBoxError.cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        key = fresh
    }

    /// `secret` sealed, bound to `context` (what it is and whose), so a sealed value moved to another
    /// row or column does not open.
    public func seal(_ secret: Data, context: String) throws -> Data {
        guard let combined = try AES.GCM.seal(secret, using: key, authenticating: Data(context.utf8)).combined else {
            throw SecretBoxError.cannotOpen
        }
        return combined
    }

    public func open(_ sealed: Data, context: String) throws -> Data {
        do {
            return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key, authenticating: Data(context.utf8))
        } catch {
            throw SecretBoxError.cannotOpen
        }
    }
}

public enum SecretBoxError: Error, CustomStringConvertible {
    case notAKey(path: String, bytes: Int)
    case cannotCreate(path: String, reason: String)
    case cannotOpen

    public var description: String {
        switch self {
        case .notAKey(let path, let bytes):
            "\(path) holds \(bytes) bytes, not a 32-byte secret key. Restore the key file this database was used with, or pass --secret-key with its path."
        case .cannotCreate(let path, let reason):
            "Cannot create the secret key file \(path): \(reason)."
        case .cannotOpen:
            "A stored secret does not open with this key file: it was sealed with another one. Restore that key file, or set the push credentials again."
        }
    }
}
