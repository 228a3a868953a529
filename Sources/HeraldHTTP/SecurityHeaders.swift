/// The headers on every answer, the console's and the HTTP adapter's own: no script or style but
/// our own, no framing, no sniffing, no address sent to other sites.
public enum SecurityHeaders {
    /// The policy's directives, each `name sources`, for pages that loosen one of them.
    public static let policyDirectives = [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' https: data:",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
    ]

    public static let contentSecurityPolicy = policyDirectives.joined(separator: "; ")

    /// Sets the headers a handler did not set itself (a page may set its own policy and framing, as the
    /// console's message preview does).
    public static func apply(to response: inout Response) {
        if response.headers["Content-Security-Policy"] == nil {
            response.headers.set("Content-Security-Policy", contentSecurityPolicy)
            response.headers.set("X-Frame-Options", "DENY")
        }
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("Referrer-Policy", "same-origin")
    }
}
