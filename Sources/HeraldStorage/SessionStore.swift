import Foundation

/// A signed-in browser session, made at sign-in. The token itself is only in the cookie.
public struct Session: Sendable, Equatable, Codable {
    public var tokenHash: String
    public var userID: Int64
    public var csrfToken: String
    public var flashKind: String?
    public var flashMessage: String?
    public var createdAt: Date
    public var lastSeenAt: Date
    public var expiresAt: Date

    package init(
        tokenHash: String, userID: Int64, csrfToken: String, flashKind: String? = nil, flashMessage: String? = nil,
        createdAt: Date, lastSeenAt: Date, expiresAt: Date
    ) {
        self.tokenHash = tokenHash
        self.userID = userID
        self.csrfToken = csrfToken
        self.flashKind = flashKind
        self.flashMessage = flashMessage
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case tokenHash = "token_hash"
        case userID = "user_id"
        case csrfToken = "csrf_token"
        case flashKind = "flash_kind"
        case flashMessage = "flash_message"
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
        case expiresAt = "expires_at"
    }
}

extension Session {
    /// A new session for `userID` and its token, which only the cookie keeps: the row stores its hash.
    package static func new(userID: Int64, now: Date, lifetime: TimeInterval) -> (token: String, session: Session) {
        let token = Secret.random()
        let session = Session(
            tokenHash: Secret.sha256(token), userID: userID, csrfToken: Secret.random(),
            flashKind: nil, flashMessage: nil, createdAt: now.storedPrecision, lastSeenAt: now.storedPrecision,
            expiresAt: now.addingTimeInterval(lifetime).storedPrecision)
        return (token, session)
    }
}

/// A session with its user, read together: every signed-in page starts with both.
public struct SessionWithUser: Sendable {
    public var session: Session
    public var user: User

    package init(session: Session, user: User) {
        self.session = session
        self.user = user
    }
}

/// Signed-in browser sessions: the `sessions` table on either engine.
public protocol SessionStore: Sendable {
    /// Creates a session and returns its token (to put in the cookie) with the stored row; sweeps expired ones.
    func create(userID: Int64, now: Date, lifetime: TimeInterval) throws -> (token: String, session: Session)
    /// The session `token` names with its user (active or not), whatever its times; nil when there is none.
    func find(token: String) throws -> SessionWithUser?
    func save(_ session: Session) throws
    func delete(tokenHash: String) throws
}
