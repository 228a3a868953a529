import HeraldStorage

/// CSRF tokens for visitors, who have no stored session (the login and setup pages): the `herald_visitor`
/// cookie holds a random id, and a form's token is that id signed with the server's key. A form posted
/// from another site comes without the token that matches the cookie, which that site cannot read; and a
/// flood of page views stores nothing.
struct VisitorForms: Sendable {
    static let cookie = "herald_visitor"

    let signingKey: [UInt8]

    /// The token the forms of the visitor with this id carry.
    func token(forVisitor id: String) -> String {
        Secret.hmac("visitor-form:" + id, key: signingKey)
    }
}
