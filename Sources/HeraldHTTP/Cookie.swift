/// A `Set-Cookie` value: the session and flash cookies are HttpOnly and SameSite=Lax.
public struct SetCookie: Sendable {
    public var name: String
    public var value: String
    public var maxAge: Int?
    public var secure: Bool
    public var path: String = "/"

    public init(name: String, value: String, maxAge: Int? = nil, secure: Bool) {
        self.name = name
        self.value = value
        self.maxAge = maxAge
        self.secure = secure
    }

    /// A cookie that tells the browser to forget `name`.
    public static func expired(_ name: String, secure: Bool) -> SetCookie {
        SetCookie(name: name, value: "", maxAge: 0, secure: secure)
    }

    public var headerValue: String {
        var parts = ["\(name)=\(value)", "Path=\(path)", "HttpOnly", "SameSite=Lax"]
        if let maxAge { parts.append("Max-Age=\(maxAge)") }
        if secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }
}

extension Response {
    public mutating func setCookie(_ cookie: SetCookie) {
        headers.add("Set-Cookie", cookie.headerValue)
    }
}
