/// Text PostgreSQL refuses to hold: U+0000 (NUL), in a `text` value or a `jsonb` string, which SQLite
/// stores as any other character. Entry points refuse control characters in what is kept and look up
/// nothing by text no record can hold (an email with a control character is no account's); a NUL that
/// still reaches the server is this error, rolled back with its transaction like any other, and the
/// console answers it as a 400 rather than an anonymous 500.
public struct UnstorableText: Error, Sendable, CustomStringConvertible {
    /// The server's answer: 22021 (a NUL in text) or 22P05 (`\u0000` in JSON it was to read as `jsonb`).
    public let state: String

    /// `error` as this one when PostgreSQL refused text for holding NUL; nil for any other error.
    public init?(_ error: any Error) {
        guard let state = (error as? any EngineFailure)?.unstorableTextState else { return nil }
        self.state = state
    }

    public var description: String { "PostgreSQL refused text holding U+0000 (SQLSTATE \(state))" }
}
