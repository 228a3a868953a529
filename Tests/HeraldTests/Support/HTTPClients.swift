import Foundation
import HeraldHTTP

/// Requests to a running `herald serve`, one connection each, as apps, scripts and browsers send them.
enum HTTP {
    static func call(
        port: UInt16, _ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []
    ) throws -> RawHTTPConnection.Reply {
        let connection = try RawHTTPConnection(port: port, readTimeoutSeconds: 10)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        guard connection.send(Array((head + "\r\n").utf8) + body) else { throw TestFailure("the server closed the connection") }
        return try connection.readReply(expectBody: method != "HEAD")
    }

    /// An app or script with an API key.
    struct API {
        let port: UInt16
        let key: String

        func get(_ target: String, headers: [String: String] = [:]) throws -> RawHTTPConnection.Reply {
            try call(port: port, "GET", target, headers: headers.merging(["Authorization": "Bearer \(key)"]) { $1 })
        }

        func post(_ target: String, json: String?) throws -> RawHTTPConnection.Reply {
            try send("POST", target, json: json, headers: [:])
        }

        func put(_ target: String, ifMatch: String, json: String) throws -> RawHTTPConnection.Reply {
            try send("PUT", target, json: json, headers: ["If-Match": ifMatch])
        }

        /// Posts a batch of `count` impressions with fresh ids; returns the ids and the answer.
        func sendEvents(campaign: Int64, count: Int) throws -> (ids: Set<String>, reply: RawHTTPConnection.Reply) {
            let ids = (0..<count).map { _ in UUID().uuidString.lowercased() }
            let now = ISO8601DateFormatter().string(from: Date())
            let events = ids.map {
                #"{"id":"\#($0)","type":"impression","campaignId":\#(campaign),"occurredAt":"\#(now)","platform":"ios","installationId":"iid-\#($0.prefix(4))"}"#
            }
            return (Set(ids), try post("/api/v1/events", json: #"{"events":[\#(events.joined(separator: ","))]}"#))
        }

        private func send(_ method: String, _ target: String, json: String?, headers: [String: String]) throws -> RawHTTPConnection.Reply {
            var headers = headers
            headers["Authorization"] = "Bearer \(key)"
            if json != nil { headers["Content-Type"] = "application/json" }
            return try call(port: port, method, target, headers: headers, body: Array((json ?? "").utf8))
        }
    }

    /// A browser signed in to the console: its session cookie, sent with every request.
    struct Console {
        let port: UInt16
        let cookie: String

        /// Signs in through the login form, as a person would.
        static func signIn(port: UInt16, email: String, password: String) throws -> Console {
            let (visitor, token) = try openLogin(port: port)
            let answer = try visitor.post("/login", ["csrf_token": token, "email": email, "password": password])
            guard answer.status == 303, let signedIn = cookie("herald_session", in: answer) else { throw TestFailure("sign-in failed: \(answer.status)") }
            return Console(port: port, cookie: signedIn)
        }

        /// A visitor who opened the login page: their visitor cookie, and the form's token.
        static func openLogin(port: UInt16) throws -> (visitor: Console, token: String) {
            let form = try call(port: port, "GET", "/login")
            guard let visitor = cookie("herald_visitor", in: form), let token = TestBrowser.csrfToken(in: form.text) else {
                throw TestFailure("no visitor cookie or form on /login (status \(form.status))")
            }
            return (Console(port: port, cookie: visitor), token)
        }

        /// The same browser talking to another server on the same database.
        func on(port: UInt16) -> Console {
            Console(port: port, cookie: cookie)
        }

        func get(_ target: String) throws -> RawHTTPConnection.Reply {
            try call(port: port, "GET", target, headers: ["Cookie": cookie])
        }

        /// Loads `page` for its CSRF token, then posts `fields` with it to `target`, as the page's form would.
        func submit(_ target: String, from page: String, _ fields: [String: String] = [:]) throws -> RawHTTPConnection.Reply {
            let form = try get(page)
            guard let token = TestBrowser.csrfToken(in: form.text) else { throw TestFailure("no csrf_token on \(page) (status \(form.status))") }
            return try post(target, fields.merging(["csrf_token": token]) { $1 })
        }

        func post(_ target: String, _ fields: [String: String]) throws -> RawHTTPConnection.Reply {
            let body = fields.sorted { $0.key < $1.key }
                .map { "\(PercentEncoding.encode($0.key))=\(PercentEncoding.encode($0.value))" }.joined(separator: "&")
            return try call(port: port, "POST", target, headers: ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"],
                            body: Array(body.utf8))
        }

        /// `name=value` of the cookie `name` that `reply` sets.
        private static func cookie(_ name: String, in reply: RawHTTPConnection.Reply) -> String? {
            reply.setCookies.lazy.map { String($0.split(separator: ";")[0]) }.first { $0.hasPrefix(name + "=") }
        }
    }
}
