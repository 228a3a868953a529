import Foundation

/// Where a PostgreSQL database is, read from a `postgres://user:password@host:port/database?sslmode=…` URL
/// (`--db`, `HERALD_DB`). Every part is checked here, so a typo is an error that names the part, not a
/// connection that fails later.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// How the connection is encrypted, as libpq's `sslmode` names it.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Never encrypted: loopback and private networks only.
        case disable
        /// Encrypted when the server offers it, its certificate not verified (libpq's default).
        case prefer
        /// Always encrypted, the certificate not verified.
        case require
        /// Always encrypted, the certificate verified against the system's roots and the host name.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    public init(host: String, port: Int = 5432, user: String, password: String? = nil, database: String, tls: TLSMode = .prefer) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Whether `text` names PostgreSQL rather than an SQLite file.
    public static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case notAURL
        case missing(String)
        case invalid(part: String, reason: String)

        public var description: String {
            switch self {
            case .notAURL: "the database URL is not a postgres:// URL"
            case .missing(let part): "the database URL has no \(part)"
            case .invalid(let part, let reason): "the database URL's \(part) \(reason)"
            }
        }
    }

    public init(url text: String) throws(ParseError) {
        guard Self.isPostgresURL(text), let url = URLComponents(string: text) else { throw .notAURL }
        guard let host = url.host, !host.isEmpty else { throw .missing("host") }
        guard let user = url.user, !user.isEmpty else { throw .missing("user name") }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        guard !database.isEmpty else { throw .missing("database name (the path after the host)") }
        guard !database.contains("/") else { throw .invalid(part: "database name", reason: "contains a slash") }
        var port = 5432
        if let given = url.port {
            guard (1...65_535).contains(given) else { throw .invalid(part: "port", reason: "is not between 1 and 65535") }
            port = given
        }
        var tls = TLSMode.prefer
        for item in url.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    let known = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw .invalid(part: "sslmode", reason: "is not one of \(known)")
                }
                tls = mode
            default:
                throw .invalid(part: "option \(item.name)", reason: "is not known (only sslmode is)")
            }
        }
        // URLComponents gives back user, password and path percent-decoded.
        self.init(host: host, port: port, user: user, password: url.password, database: database, tls: tls)
    }

    /// `text` with the password of a `scheme://user:password@host…` URL in it replaced by `********`, for
    /// `herald config check`, which shows settings as they were written: everything from the first `:` after
    /// the user to the last `@`, so a password holding `@`, `/`, `:` or `?` unencoded is masked whole (a
    /// database name holding `@` is masked with it: shown too little, never a password shown).
    public static func maskingPassword(in text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@"),
              let colon = text[scheme.upperBound..<at].firstIndex(of: ":") else { return text }
        return text[..<text.index(after: colon)] + "********" + text[at...]
    }

    /// The URL without its password, for logs and the System page.
    public var description: String {
        var url = URLComponents()
        url.scheme = "postgres"
        url.host = host
        url.port = port
        url.user = user
        url.path = "/" + database
        url.queryItems = [URLQueryItem(name: "sslmode", value: tls.rawValue)]
        return url.string ?? "postgres://\(host):\(port)/\(database)"
    }
}
