import Foundation

/// What a PKCS#8 private key (RFC 5208, RFC 5958) says it is: its algorithm and, for an elliptic-curve
/// key, its curve. swift-crypto reads the private scalar of a PKCS#8 EC key without looking at the curve
/// named beside it, so a secp256k1 or brainpoolP256r1 key would be taken as a different P-256 key and
/// every provider token signed with it refused. This reads the DER itself, trusting no length it holds.
public enum PrivateKeyInfo: Equatable, Sendable {
    /// An EC key on a named curve (the `namedCurve` of RFC 5480), as the key's own info and, when the
    /// inner `ECPrivateKey` names one too, as that says.
    case namedCurve(ObjectIdentifier)
    /// An EC key that spells out its curve's parameters instead of naming it (Apple never issues one).
    case explicitCurve
    /// An EC key whose outer and inner descriptions name different curves.
    case conflictingCurves
    /// Not an EC key: RSA, Ed25519, …
    case otherAlgorithm(ObjectIdentifier)

    /// An object identifier, kept as its dotted arcs (`1.2.840.10045.3.1.7`).
    public struct ObjectIdentifier: Hashable, Sendable, CustomStringConvertible {
        public let arcs: [UInt64]
        public var description: String { arcs.map(String.init).joined(separator: ".") }

        public init(_ arcs: [UInt64]) {
            self.arcs = arcs
        }

        static let ecPublicKey = ObjectIdentifier([1, 2, 840, 10045, 2, 1])
        /// P-256, also called prime256v1 and secp256r1: the only curve APNs keys use.
        public static let p256 = ObjectIdentifier([1, 2, 840, 10045, 3, 1, 7])

        /// The names people know curves and key algorithms by, for what a refusal says.
        static let names: [ObjectIdentifier: String] = [
            p256: "P-256",
            ObjectIdentifier([1, 3, 132, 0, 10]): "secp256k1",
            ObjectIdentifier([1, 3, 36, 3, 3, 2, 8, 1, 1, 7]): "brainpoolP256r1",
            ObjectIdentifier([1, 3, 36, 3, 3, 2, 8, 1, 1, 11]): "brainpoolP384r1",
            ObjectIdentifier([1, 3, 132, 0, 34]): "P-384",
            ObjectIdentifier([1, 3, 132, 0, 35]): "P-521",
            ObjectIdentifier([1, 2, 840, 113549, 1, 1, 1]): "RSA",
            ObjectIdentifier([1, 3, 101, 112]): "Ed25519",
            ObjectIdentifier([1, 3, 101, 110]): "X25519",
        ]

        /// Its name, with the dotted form beside it when it has one (`secp256k1 (1.3.132.0.10)`).
        public var named: String {
            Self.names[self].map { "\($0) (\(description))" } ?? description
        }
    }

    /// What the PEM text's `PRIVATE KEY` block holds, or nil when it is not a PKCS#8 key in base64 DER.
    public static func read(pem: String) -> PrivateKeyInfo? {
        der(pem: pem).flatMap(read(der:))
    }

    /// The DER bytes of the first `-----BEGIN PRIVATE KEY-----` block, or nil when there is none or its
    /// base64 does not decode.
    static func der(pem: String) -> [UInt8]? {
        guard let begin = pem.range(of: "-----BEGIN PRIVATE KEY-----"),
              let end = pem.range(of: "-----END PRIVATE KEY-----", range: begin.upperBound..<pem.endIndex)
        else { return nil }
        let body = pem[begin.upperBound..<end.lowerBound].unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) }
        return Data(base64Encoded: String(String.UnicodeScalarView(body))).map { [UInt8]($0) }
    }

    /// What the DER of a `PrivateKeyInfo` / `OneAsymmetricKey` says, or nil when the bytes are not one.
    public static func read(der: [UInt8]) -> PrivateKeyInfo? {
        var outer = DERReader(der[...])
        guard var info = outer.nested(tag: DERReader.sequence), outer.isAtEnd,
              let version = info.content(tag: DERReader.integer), version.count == 1, version.first.map({ $0 <= 1 }) == true,
              var algorithm = info.nested(tag: DERReader.sequence), let algorithmID = algorithm.objectIdentifier(),
              let privateKey = info.content(tag: DERReader.octetString)
        else { return nil }
        guard algorithmID == .ecPublicKey else { return .otherAlgorithm(algorithmID) }
        guard let parameters = algorithm.next(), algorithm.isAtEnd else { return nil }
        let outerCurve: ObjectIdentifier
        switch parameters.tag {
        case DERReader.objectIdentifier:
            guard let curve = ObjectIdentifier(der: parameters.content) else { return nil }
            outerCurve = curve
        case DERReader.sequence:
            return .explicitCurve
        default:
            return nil
        }
        // RFC 5915's ECPrivateKey: version 1, the key, then optionally [0] its curve and [1] its public key.
        var inner = DERReader(privateKey)
        guard var ecKey = inner.nested(tag: DERReader.sequence), inner.isAtEnd,
              let ecVersion = ecKey.content(tag: DERReader.integer), Array(ecVersion) == [1],
              ecKey.content(tag: DERReader.octetString) != nil
        else { return nil }
        while let field = ecKey.next() {
            guard field.tag == 0xA0 else { continue }
            var wrapped = DERReader(field.content)
            guard let innerParameters = wrapped.next(), wrapped.isAtEnd else { return nil }
            guard innerParameters.tag == DERReader.objectIdentifier else { return .explicitCurve }
            guard let innerCurve = ObjectIdentifier(der: innerParameters.content) else { return nil }
            if innerCurve != outerCurve { return .conflictingCurves }
        }
        return ecKey.isBroken ? nil : .namedCurve(outerCurve)
    }
}

extension PrivateKeyInfo.ObjectIdentifier {
    /// The identifier an OID's content octets encode (X.690 §8.19), or nil when they do not encode one:
    /// empty, a last arc left open, a padded arc, or an arc past 2^64.
    init?(der content: ArraySlice<UInt8>) {
        guard !content.isEmpty, content.count <= 64, let last = content.last, last & 0x80 == 0 else { return nil }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        var startsArc = true
        for byte in content {
            // A leading 0x80 would pad the arc: DER writes each in as few octets as it takes.
            if startsArc && byte == 0x80 { return nil }
            guard value >> 57 == 0 else { return nil }
            value = value << 7 | UInt64(byte & 0x7F)
            startsArc = byte & 0x80 == 0
            if startsArc {
                if arcs.isEmpty {
                    // The first octets hold two arcs: 40 × the first (0, 1 or 2) + the second.
                    let first: UInt64 = value < 40 ? 0 : value < 80 ? 1 : 2
                    arcs += [first, value - first * 40]
                } else {
                    arcs.append(value)
                }
                value = 0
            }
        }
        self.init(arcs)
    }
}

/// Reads DER's tag-length-value items from a slice, each length checked against what is left.
struct DERReader {
    static let integer: UInt8 = 0x02
    static let octetString: UInt8 = 0x04
    static let objectIdentifier: UInt8 = 0x06
    static let sequence: UInt8 = 0x30

    private var remaining: ArraySlice<UInt8>
    /// An item ran past the end or had a length DER does not write: nothing after it is read.
    private(set) var isBroken = false

    init(_ bytes: ArraySlice<UInt8>) {
        remaining = bytes
    }

    var isAtEnd: Bool { remaining.isEmpty && !isBroken }

    /// The next item: its tag (single-octet tags only, which is all PKCS#8 uses) and content.
    mutating func next() -> (tag: UInt8, content: ArraySlice<UInt8>)? {
        guard !isBroken, let tag = remaining.first else { return nil }
        var rest = remaining.dropFirst()
        // A tag of 31 in its low bits continues in further octets: not in anything read here.
        guard tag & 0x1F != 0x1F, let first = rest.first else { return broken() }
        rest = rest.dropFirst()
        var length = 0
        if first & 0x80 == 0 {
            length = Int(first)
        } else {
            let octets = Int(first & 0x7F)
            // At most 3 length octets (16 MiB), none of them a leading zero, and not the short form's range.
            guard (1...3).contains(octets), rest.count >= octets, rest.first != 0 else { return broken() }
            for byte in rest.prefix(octets) { length = length << 8 | Int(byte) }
            rest = rest.dropFirst(octets)
            guard length >= 0x80 else { return broken() }
        }
        guard rest.count >= length else { return broken() }
        remaining = rest.dropFirst(length)
        return (tag, rest.prefix(length))
    }

    /// The next item, to read inside, when it has `tag`; nil (and nothing more read) otherwise.
    mutating func nested(tag: UInt8) -> DERReader? {
        content(tag: tag).map { DERReader($0) }
    }

    /// The next item's content when it has `tag`; nil (and nothing more read) otherwise.
    mutating func content(tag: UInt8) -> ArraySlice<UInt8>? {
        guard let item = next() else { return nil }
        guard item.tag == tag else { return broken() }
        return item.content
    }

    /// The next item as an object identifier.
    mutating func objectIdentifier() -> PrivateKeyInfo.ObjectIdentifier? {
        content(tag: Self.objectIdentifier).flatMap { PrivateKeyInfo.ObjectIdentifier(der: $0) }
    }

    private mutating func broken<T>() -> T? {
        isBroken = true
        remaining = []
        return nil
    }
}
