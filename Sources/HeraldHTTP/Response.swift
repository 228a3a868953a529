/// An HTTP response to be written by the adapter.
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8] {
        didSet {
            sharedBody = nil
            stream = nil
        }
    }
    /// The same bytes as `body` when they come from a body served many times, so the adapter can
    /// send them without copying; setting `body` drops it.
    public private(set) var sharedBody: SharedBody?
    /// A body made while it is sent, instead of `body` (which is then empty); see `StreamedBody`.
    public private(set) var stream: StreamedBody?

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: SharedBody) {
        self.status = status
        self.headers = headers
        self.body = body.bytes
        self.sharedBody = body
    }

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), stream: StreamedBody) {
        self.status = status
        self.headers = headers
        self.body = []
        self.stream = stream
    }

    /// A `304 Not Modified`: no body, and none declared (the adapter sends no Content-Length).
    public static func notModified(headers: HTTPHeaders) -> Response {
        Response(status: 304, headers: headers)
    }

    /// The body as UTF-8 text (for tests and logs).
    public var text: String { String(decoding: body, as: UTF8.self) }

    public static func html(_ html: String, status: Int = 200) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "text/html; charset=utf-8")]), body: Array(html.utf8))
    }

    public static func text(_ text: String, status: Int = 200) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]), body: Array(text.utf8))
    }

    public static func json(_ body: [UInt8], status: Int = 200) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: body)
    }

    /// A `303 See Other` to `location`, the answer to a successful form POST.
    public static func redirect(to location: String, status: Int = 303) -> Response {
        Response(status: status, headers: HTTPHeaders([("Location", location)]))
    }
}
