/// An entity tag (RFC 9110 §8.8.3): an opaque string in double quotes, weak when written with `W/`.
public struct EntityTag: Sendable, Hashable, CustomStringConvertible {
    /// The text between the quotes.
    public let opaqueTag: String
    public let isWeak: Bool
    /// The tag as an `ETag` header writes it (`"r3"`, `W/"r3"`), kept because the feed compares it on every poll.
    public let description: String

    /// A tag Herald makes; `opaqueTag` must hold only the characters RFC 9110 allows there (visible
    /// ASCII but `"`, and non-ASCII), which hashes and revision numbers always do.
    public init(_ opaqueTag: String, weak: Bool = false) {
        precondition(opaqueTag.utf8.allSatisfy(Self.isTagByte), "an entity tag holds no quote, space or control character")
        self.opaqueTag = opaqueTag
        self.isWeak = weak
        self.description = (weak ? "W/\"" : "\"") + opaqueTag + "\""
    }

    /// RFC 9110 §8.8.3.2: the same opaque tag, and neither weak. For `If-Match`, where a change is let through.
    public func matchesStrongly(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaqueTag == other.opaqueTag
    }

    /// RFC 9110 §8.8.3.2: the same opaque tag, weak or not. For `If-None-Match`, where a copy is reused.
    public func matchesWeakly(_ other: EntityTag) -> Bool {
        opaqueTag == other.opaqueTag
    }

    /// Whether a GET carrying this `If-None-Match` value is answered 304 for the representation tagged
    /// `self` (RFC 9110 §13.1.2: `*`, or a listed tag that matches weakly). A value that is neither `*`
    /// nor a list of tags is ignored, as if it were not sent.
    public func isMatched(byIfNoneMatch value: String?) -> Bool {
        guard let value else { return false }
        // Clients send back the one tag they got: compare whole before reading a list.
        if value == description { return true }
        return EntityTagCondition(value)?.matchesWeakly(self) ?? false
    }

    /// etagc: `!`, `#` to `~`, and obs-text (any byte of a non-ASCII character).
    static func isTagByte(_ byte: UInt8) -> Bool {
        byte == 0x21 || (byte >= 0x23 && byte != 0x7F)
    }
}

/// The value of an `If-Match` or `If-None-Match` header (RFC 9110 §13.1.1, §13.1.2): `*`, or a list of
/// entity tags.
public enum EntityTagCondition: Sendable, Equatable {
    /// `*`: any current representation.
    case any
    /// At least one tag, in the order sent.
    case tags([EntityTag])

    /// The condition in a header's value; nil when it is neither `*` nor a list of at least one tag. Blanks
    /// around elements and empty elements are ignored, as RFC 9110 §5.6.1 asks; a tag may hold commas, so
    /// the list is read tag by tag, not split.
    public init?(_ value: String) {
        let bytes = Array(value.utf8)
        var position = 0
        func skipBlanks() {
            while position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t") { position += 1 }
        }
        skipBlanks()
        if position < bytes.count, bytes[position] == UInt8(ascii: "*") {
            position += 1
            skipBlanks()
            guard position == bytes.count else { return nil }
            self = .any
            return
        }
        let quote = UInt8(ascii: "\"")
        var tags: [EntityTag] = []
        while true {
            skipBlanks()
            if position < bytes.count, bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard position < bytes.count else { break }
            var weak = false
            if bytes[position...].starts(with: "W/".utf8) {
                weak = true
                position += 2
            }
            guard position < bytes.count, bytes[position] == quote else { return nil }
            position += 1
            let start = position
            while position < bytes.count, EntityTag.isTagByte(bytes[position]) { position += 1 }
            guard position < bytes.count, bytes[position] == quote else { return nil }
            tags.append(EntityTag(String(decoding: bytes[start..<position], as: UTF8.self), weak: weak))
            position += 1
            skipBlanks()
            guard position == bytes.count || bytes[position] == UInt8(ascii: ",") else { return nil }
        }
        guard !tags.isEmpty else { return nil }
        self = .tags(tags)
    }

    /// For `If-Match`: `*`, or a tag that matches `current` strongly.
    public func matchesStrongly(_ current: EntityTag) -> Bool {
        switch self {
        case .any: true
        case .tags(let tags): tags.contains { $0.matchesStrongly(current) }
        }
    }

    /// For `If-None-Match`: `*`, or a tag that matches `current` weakly.
    public func matchesWeakly(_ current: EntityTag) -> Bool {
        switch self {
        case .any: true
        case .tags(let tags): tags.contains { $0.matchesWeakly(current) }
        }
    }
}
