import Crypto
import Foundation
import HeraldStorage
import TestSupport
import Testing

@Suite("Secrets sealed at rest")
struct SecretBoxTests {
    @Test("A key file is made (0600) on the first seal, read after; a secret opens only with its key and its context")
    func sealing() throws {
        let folder = try TemporaryFolder()
        let path = folder.url.appendingPathComponent("herald.sqlite.key").path
        let box = SecretBox(keyFile: path)
        #expect(throws: SecretBoxError.self, "nothing sealed yet: no key to open with") { try box.open(Data([1, 2, 3]), context: "x") }
        #expect(!FileManager.default.fileExists(atPath: path))
        let sealed = try box.seal(Data("-----BEGIN PRIVATE KEY-----".utf8), context: "herald push apns app 1")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 32)
        #expect(!String(decoding: sealed, as: UTF8.self).contains("PRIVATE KEY"))
        #expect(try SecretBox(keyFile: path).open(sealed, context: "herald push apns app 1") == Data("-----BEGIN PRIVATE KEY-----".utf8))
        #expect(throws: SecretBoxError.self, "another app's row") { try box.open(sealed, context: "herald push apns app 2") }
        #expect(throws: SecretBoxError.self, "another key") { try SecretBox(key: SymmetricKey(size: .bits256)).open(sealed, context: "herald push apns app 1") }
        var tampered = sealed
        tampered[tampered.count / 2] ^= 1
        #expect(throws: SecretBoxError.self) { try box.open(tampered, context: "herald push apns app 1") }
    }

    @Test("A key file that is not a key is refused, never replaced")
    func notAKey() throws {
        let folder = try TemporaryFolder()
        let path = folder.url.appendingPathComponent("key").path
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SecretBoxError.self) { try SecretBox(keyFile: path).seal(Data([1]), context: "x") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("not a key".utf8))
    }
}
