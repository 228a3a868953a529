import Foundation

/// One request as the mock received it: names of headers in lowercase, whether it came over HTTP/2 or 1.1.
struct MockRequest: Sendable {
    var method: String
    /// The path without its query.
    var path: String
    /// What follows `?` in the target, if anything.
    var query = ""
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    var receivedAt: Date
    /// "2" over HTTP/2, "1.1" over HTTP/1.1.
    var httpVersion = "2"

    func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// Which provider the request is for, by its path.
    var provider: String {
        if path.hasPrefix("/3/device/") { return "apns" }
        if path == "/token" { return "oauth" }
        if path.hasPrefix("/v1/projects/") { return "fcm" }
        return "other"
    }
}

/// What the mock answers.
struct MockResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []

    /// A JSON answer; the object is made of strings, numbers, arrays and dictionaries only.
    static func json(_ status: Int, _ object: Any, headers: [(name: String, value: String)] = []) -> MockResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return MockResponse(status: status, headers: headers + [("content-type", "application/json")], body: Array(data))
    }
}

/// A request as the control port serves it.
public struct RecordedRequest: Codable, Sendable, Equatable {
    /// `apns`, `fcm`, `oauth` (the FCM token endpoint) or `other`.
    public var provider: String
    public var method: String
    public var path: String
    /// Header names in lowercase; a repeated header's values joined with ", ".
    public var headers: [String: String]
    /// The body as text (at most 64 KB of it kept).
    public var body: String
    /// Seconds since 1970.
    public var receivedAt: Double
    /// "2" over HTTP/2, "1.1" over HTTP/1.1.
    public var httpVersion: String
    /// The status answered; nil while the request is held.
    public var status: Int?

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Counts since start or the last reset.
public struct MockStats: Codable, Sendable, Equatable {
    public var received = 0
    public var recorded = 0
    /// Requests past the record limit: counted, not kept.
    public var notRecorded = 0
    /// Requests waiting for `release`.
    public var held = 0
    public var holding = false
    /// Answers by status ("200", "410", …).
    public var byStatus: [String: Int] = [:]
    /// Requests by provider ("apns", "fcm", "oauth", "other").
    public var byProvider: [String: Int] = [:]
}
