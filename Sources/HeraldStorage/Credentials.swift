import Crypto
import CryptoExtras
import Foundation

/// Random secrets and their hashes: session tokens, CSRF tokens and API keys are stored only as hashes.
public enum Secret {
    /// A URL-safe random token of `bytes` random bytes.
    public static func random(bytes: Int = 32) -> String {
        Data(randomBytes(bytes)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `count` bytes from the system's cryptographic random source.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// Whether `text` could be a token made by `random()` with the default size: 43 URL-safe characters.
    /// Checked before a token from a cookie is used, so nothing else is ever echoed or signed.
    public static func isToken(_ text: String) -> Bool {
        text.utf8.count == 43 && text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// Hex HMAC-SHA256 of `message` under `key`: what the server signs and later checks, with nothing stored.
    public static func hmac(_ message: String, key: [UInt8]) -> String {
        hex(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: SymmetricKey(data: key)))
    }

    /// Hex SHA-256: enough for high-entropy tokens, which cannot be guessed from their hash.
    public static func sha256(_ text: String) -> String {
        hex(SHA256.hash(data: Array(text.utf8)))
    }

    /// Lower-case hex of `bytes`. Written out by hand: `String(format:)` per byte costs more than the
    /// hash itself, and the API key check runs on every feed request.
    public static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Compares without leaking where the first difference is.
    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

/// Passwords hashed with scrypt into a self-describing string: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`.
public struct PasswordHasher: Sendable {
    /// log2 of scrypt's N: 15 uses 32 MiB per hash.
    public var logRounds: Int
    public var blockSize = 8
    public var parallelism = 1

    public init(logRounds: Int = 15) {
        self.logRounds = logRounds
    }

    public func hash(_ password: String) throws -> String {
        let salt = Data((0..<16).map { _ in UInt8.random(in: .min ... .max) })
        let derived = try derive(password, salt: salt, logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
        return "$scrypt$ln=\(logRounds),r=\(blockSize),p=\(parallelism)$\(salt.base64EncodedString())$\(derived.base64EncodedString())"
    }

    /// A well-formed hash with this hasher's parameters and random bytes, which no password matches: checking
    /// a password against it costs what checking a real one does, without hashing anything to make it.
    public var decoy: String {
        "$scrypt$ln=\(logRounds),r=\(blockSize),p=\(parallelism)$\(Data(Secret.randomBytes(16)).base64EncodedString())$\(Data(Secret.randomBytes(32)).base64EncodedString())"
    }

    /// Whether `password` matches `encoded`, using the parameters stored in `encoded`.
    public func verify(_ password: String, against encoded: String) -> Bool {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: true)
        guard fields.count == 4, fields[0] == "scrypt",
              let salt = Data(base64Encoded: String(fields[2])),
              let expected = Data(base64Encoded: String(fields[3])) else { return false }
        var parameters: [String: Int] = [:]
        for pair in fields[1].split(separator: ",") {
            let pieces = pair.split(separator: "=")
            if pieces.count == 2, let value = Int(pieces[1]) { parameters[String(pieces[0])] = value }
        }
        guard let logRounds = parameters["ln"], let blockSize = parameters["r"], let parallelism = parameters["p"],
              (1...20).contains(logRounds),
              let derived = try? derive(password, salt: salt, logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
        else { return false }
        return Secret.constantTimeEquals(derived.base64EncodedString(), expected.base64EncodedString())
    }

    private func derive(_ password: String, salt: Data, logRounds: Int, blockSize: Int, parallelism: Int) throws -> Data {
        let key = try KDF.Scrypt.deriveKey(
            from: Data(password.utf8), salt: salt, outputByteCount: 32,
            rounds: 1 << logRounds, blockSize: blockSize, parallelism: parallelism)
        return key.withUnsafeBytes { Data($0) }
    }
}
