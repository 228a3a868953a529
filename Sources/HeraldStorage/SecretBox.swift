import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Seals secrets that Herald must read back (push provider keys) with AES-GCM under a 256-bit key
/// kept in a file beside the database, not in it: a copy of the database (a backup, a support dump)
/// does not carry the secrets, and the key file is made readable by its owner only.
public struct SecretBox: Sendable {
    private enum Source: Sendable {
        case key(SymmetricKey)
        case file(String)
    }

    private let source: Source

    public init(key: SymmetricKey) {
        source = .key(key)
    }

    /// The box whose key is in the file at `path`. The file is read when a secret is sealed or opened,
    /// and made (mode 0600) the first time one is sealed: a server that stores no secret, or runs on a
    /// read-only copy, needs none.
    public init(keyFile path: String) {
        source = .file(path)
    }

    private func key(creating: Bool) throws -> SymmetricKey {
        switch source {
        case .key(let key): return key
        case .file(let path): return try Self.key(in: path, creating: creating)
        }
    }

    /// The key in `path`. Refuses a file that is not a key rather than replacing it: secrets sealed with
    /// the old key would be lost.
    private static func key(in path: String, creating: Bool) throws -> SymmetricKey {
        if let existing = FileManager.default.contents(atPath: path) {
            guard existing.count == 32 else { throw SecretBoxError.notAKey(path: path, bytes: existing.count) }
            return SymmetricKey(data: existing)
        }
        guard creating else { throw SecretBoxError.missing(path: path) }
        let fresh = SymmetricKey(size: .bits256)
        let bytes = fresh.withUnsafeBytes { Data($0) }
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            // Another process made it between the read and the create: use theirs.
            if errno == EEXIST, let made = FileManager.default.contents(atPath: path), made.count == 32 {
                return SymmetricKey(data: made)
            }
            throw SecretBoxError.cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        defer { Glibc.close(descriptor) }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            throw SecretBoxError.cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        return fresh
    }

    /// `secret` sealed, bound to `context` (what it is and whose), so a sealed value moved to another
    /// row or column does not open.
    public func seal(_ secret: Data, context: String) throws -> Data {
        guard let combined = try AES.GCM.seal(secret, using: try key(creating: true), authenticating: Data(context.utf8)).combined else {
            throw SecretBoxError.cannotOpen
        }
        return combined
    }

    public func open(_ sealed: Data, context: String) throws -> Data {
        let key = try key(creating: false)
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
    case missing(path: String)
    case cannotOpen

    public var description: String {
        switch self {
        case .notAKey(let path, let bytes):
            "\(path) holds \(bytes) bytes, not a 32-byte secret key. Restore the key file this database was used with, or pass --secret-key with its path."
        case .cannotCreate(let path, let reason):
            "Cannot create the secret key file \(path): \(reason)."
        case .missing(let path):
            "The secret key file \(path) is missing, so the stored push credentials cannot be opened. Restore it (it is kept apart from database backups), or set the push credentials again."
        case .cannotOpen:
            "A stored secret does not open with this key file: it was sealed with another one. Restore that key file, or set the push credentials again."
        }
    }
}
