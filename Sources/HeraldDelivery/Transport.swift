import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange with Herald (or with a campaign's image host). Apps use `URLSessionTransport`;
/// tests may bring their own. A transport honours `maxResponseBytes`: it stops reading once the body
/// passes it and throws `TransportError.responseTooLarge`, so no answer costs more memory than that.
public protocol DeliveryTransport: Sendable {
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

public struct TransportRequest: Sendable, Equatable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    /// The most body bytes the caller will take (images); nil for Herald's own answers.
    public var maxResponseBytes: Int? = nil
}

public enum TransportError: Error, Equatable {
    /// The answer's body is longer than the request's `maxResponseBytes`.
    case responseTooLarge(limit: Int)
}

public struct TransportResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A header by name, case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// The transport over `URLSession`.
public struct URLSessionTransport: DeliveryTransport {
    private let session: URLSession

    public init(timeout: TimeInterval = 30) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let limit = request.maxResponseBytes {
            return try await BoundedRead(limit: limit).send(urlRequest, configuration: session.configuration)
        }
        let (data, response) = try await session.data(for: urlRequest)
        return try Self.response(response, body: data)
    }

    fileprivate static func response(_ response: URLResponse?, body: Data) throws -> TransportResponse {
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: body)
    }
}

/// One exchange whose body is read piece by piece and given up on as soon as it passes `limit` (a
/// `Content-Length` over it is refused before any body arrives). `URLSession.data(for:)` would hold any
/// length in memory first; an image host that answers with a gigabyte must not take the app down.
///
/// `@unchecked Sendable`: its session calls it on the session's own serial delegate queue, one call at a
/// time, and `continuation` is set before the task starts.
private final class BoundedRead: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let limit: Int
    private var received = Data()
    private var response: URLResponse?
    private var tooLarge = false
    private var continuation: CheckedContinuation<TransportResponse, Error>?

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    func send(_ request: URLRequest, configuration: URLSessionConfiguration) async throws -> TransportResponse {
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        return try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            session.dataTask(with: request).resume()
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        self.response = response
        if response.expectedContentLength > Int64(limit) {
            tooLarge = true
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard !tooLarge else { return }
        if data.count > limit - received.count {
            tooLarge = true
            dataTask.cancel()
        } else {
            received.append(data)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        session.finishTasksAndInvalidate()
        let continuation = self.continuation
        self.continuation = nil
        if tooLarge {
            continuation?.resume(throwing: TransportError.responseTooLarge(limit: limit))
        } else if let error {
            continuation?.resume(throwing: error)
        } else {
            continuation?.resume(with: Result { try URLSessionTransport.response(response, body: received) })
        }
    }
}
