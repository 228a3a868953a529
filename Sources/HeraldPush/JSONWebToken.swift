import Crypto
import CryptoExtras
import Foundation

/// Compact JSON Web Tokens as the providers take them: APNs's provider token (ES256) and Google's
/// service-account assertion (RS256).
enum JSONWebToken {
    /// The APNs provider token: `{"alg":"ES256","kid":…}.{"iss":team,"iat":…}`, signed with the `.p8` key
    /// (ECDSA P-256 over SHA-256, the signature as raw r‖s).
    static func apnsProviderToken(_ configuration: APNsConfiguration, issuedAt: Date) throws -> String {
        let input = try signingInput(
            header: ["alg": "ES256", "kid": configuration.keyID],
            claims: ["iss": configuration.teamID, "iat": wholeSeconds(issuedAt)])
        let signature = try configuration.signingKey.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// Google's JWT-bearer assertion for FCM: claims `iss` (the client email), `scope`, `aud` (the token
    /// endpoint), `iat` and `exp` an hour later, signed RS256 (PKCS#1 v1.5 over SHA-256).
    static func googleAssertion(_ account: FCMServiceAccount, issuedAt: Date) throws -> String {
        let issued = wholeSeconds(issuedAt)
        let input = try signingInput(
            header: ["alg": "RS256", "typ": "JWT"],
            claims: [
                "iss": account.clientEmail, "scope": "https://www.googleapis.com/auth/firebase.messaging",
                "aud": account.tokenURI.absoluteString, "iat": issued, "exp": issued + 3600,
            ])
        let signature = try account.signingKey.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// `base64url(header) "." base64url(claims)`, the text the signature covers.
    private static func signingInput(header: [String: String], claims: [String: any Sendable]) throws -> String {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        let headerJSON = try JSONSerialization.data(withJSONObject: header, options: options)
        let claimsJSON = try JSONSerialization.data(withJSONObject: claims, options: options)
        return base64URL(headerJSON) + "." + base64URL(claimsJSON)
    }

    /// Seconds since 1970 as a whole number; a clock before 1970 reads as 0 rather than trapping.
    private static func wholeSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return seconds.isFinite && seconds > 0 && seconds < 1e15 ? Int64(seconds) : 0
    }

    /// Base64 with the URL alphabet and no padding (RFC 7515 §2).
    static func base64URL(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
