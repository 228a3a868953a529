import Crypto
import Foundation
@testable import HeraldPush

/// `PrivateKeyInfo`, the reader of what a PKCS#8 key says it is, and the APNs key check built on it: any
/// bytes, as DER and as the PEM that wraps them, read without a trap and to the same answer; an object
/// identifier read writes back to its own bytes; what the APNs check takes is a P-256 key; and a P-256 key
/// swift-crypto writes, made from the input's first 32 bytes, is taken as itself.
enum APNsKeyTarget {
    static func run(_ bytes: [UInt8]) {
        let info = PrivateKeyInfo.read(der: bytes)
        let pem = "-----BEGIN PRIVATE KEY-----\n" + Data(bytes).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END PRIVATE KEY-----\n"
        require(PrivateKeyInfo.read(pem: pem) == info, "the PEM of the bytes reads otherwise than the bytes")
        if let key = try? APNsConfiguration.readKey(pem) {
            require(info == .namedCurve(.p256), "taken as an APNs key though it reads as \(String(describing: info))")
            require(key.publicKey.rawRepresentation.count == 64, "a P-256 key without a 64-byte public key")
        }
        if let identifier = PrivateKeyInfo.ObjectIdentifier(der: bytes[...]) {
            require(encode(identifier) == bytes, "OID \(identifier) writes back as other bytes")
        }
        if bytes.count >= 32, let key = try? P256.Signing.PrivateKey(rawRepresentation: bytes.prefix(32)) {
            require(PrivateKeyInfo.read(der: Array(key.derRepresentation)) == .namedCurve(.p256), "swift-crypto's P-256 DER is not read as P-256")
            let read = try? APNsConfiguration.readKey(key.pemRepresentation)
            require(read?.rawRepresentation == key.rawRepresentation, "swift-crypto's P-256 PEM is not taken as itself")
        }
    }

    /// X.690's encoding of an identifier's arcs (the first two in one number), each in base 128.
    static func encode(_ identifier: PrivateKeyInfo.ObjectIdentifier) -> [UInt8] {
        let arcs = identifier.arcs
        guard arcs.count >= 2 else { return [] }
        var numbers = [arcs[0] * 40 + arcs[1]]
        numbers += arcs.dropFirst(2)
        var bytes: [UInt8] = []
        for number in numbers {
            var groups = [UInt8(number & 0x7F)]
            var rest = number >> 7
            while rest > 0 {
                groups.append(UInt8(rest & 0x7F) | 0x80)
                rest >>= 7
            }
            bytes += groups.reversed()
        }
        return bytes
    }
}
