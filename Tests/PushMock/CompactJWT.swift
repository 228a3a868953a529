import Crypto
import CryptoExtras
import Foundation

/// A compact JWT taken apart for checking, written here apart from Herald's signer so the mock (and a
/// test) checks tokens the way a provider would, not the way Herald makes them.
public struct CompactJWT {
    public let header: [String: Any]
    public let claims: [String: Any]
    let signingInput: Data
    let signature: Data

    public init?(_ text: String) {
        guard text.utf8.count <= 8192 else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerData = Self.base64URLDecode(parts[0]), let claimsData = Self.base64URLDecode(parts[1]),
              let signature = Self.base64URLDecode(parts[2]),
              let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
              let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else { return nil }
        self.header = header
        self.claims = claims
        signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        self.signature = signature
    }

    /// ES256 as APNs checks it: the raw r‖s signature over the signing input with the key's public half.
    public func verifiesES256(_ key: P256.Signing.PublicKey) -> Bool {
        guard header["alg"] as? String == "ES256",
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return key.isValidSignature(signature, for: signingInput)
    }

    /// RS256 as Google's token endpoint checks it: PKCS#1 v1.5 over SHA-256.
    public func verifiesRS256(_ key: _RSA.Signing.PublicKey) -> Bool {
        guard header["alg"] as? String == "RS256" else { return false }
        return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: .insecurePKCS1v1_5)
    }

    /// A numeric claim as whole seconds, if it is one.
    public func seconds(_ claim: String) -> Int64? {
        guard let number = claims[claim] as? NSNumber else { return nil }
        let value = number.doubleValue
        return value.isFinite && abs(value) < 1e15 ? Int64(value) : nil
    }

    static func base64URLDecode(_ text: Substring) -> Data? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
