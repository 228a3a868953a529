import Foundation

/// What login throttling counts failures for.
public struct LoginThrottleKey: Hashable, Sendable {
    public enum Kind: String, Sendable {
        /// An email typed into the login form, known or not (so a refusal says nothing about who exists).
        case account
        /// The client's address (an IPv6 client's /64 network).
        case address
        /// A browser where the account signed in before.
        case browser
        /// A signed-in session checking its user's current password (to change it).
        case session
    }

    public let kind: Kind
    public let subject: String

    public init(_ kind: Kind, _ subject: String) {
        self.kind = kind
        self.subject = subject
    }
}

/// The failures counted for one key.
public struct LoginFailures: Sendable, Equatable {
    public var count: Int
    public var first: Date
    public var last: Date

    public init(count: Int, first: Date, last: Date) {
        self.count = count
        self.first = first
        self.last = last
    }
}

/// Login failures counted per key: the `login_throttles` table on either engine.
public protocol LoginThrottleStore: Sendable {
    /// Reads the failures of `keys`, lets `decide` change them, and saves what it changed (nil or a zero count
    /// deletes), atomically: racing attempts, on any thread or in any process, each see what the one before
    /// left. Rows whose last failure is before `forgetBefore` are swept first.
    func update<Decision>(
        _ keys: [LoginThrottleKey], forgetBefore: Date, _ decide: (inout [LoginThrottleKey: LoginFailures]) throws -> Decision
    ) throws -> Decision
}
