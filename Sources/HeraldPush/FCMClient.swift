import AsyncHTTPClient
import Foundation
import NIOHTTP1

/// Sends through Firebase Cloud Messaging's HTTP v1 API with an OAuth 2.0 access token obtained from
/// the service account.
public final class FCMClient: PushSender {
    public let configuration: FCMConfiguration
    private let exchange: ProviderExchange
    private let accessTokens: FCMAccessTokens

    public init(configuration: FCMConfiguration, httpClient: HTTPClient) {
        self.configuration = configuration
        exchange = ProviderExchange(httpClient: httpClient)
        accessTokens = FCMAccessTokens(account: configuration.serviceAccount, exchange: exchange)
    }

    public func send(_ request: PushRequest) async -> PushResult {
        let token: String
        switch await accessTokens.token() {
        case .token(let value): token = value
        case .failed(let result): return result
        }
        let first = await post(request, accessToken: token)
        guard case .success(let answer) = first, answer.status == 401 else { return first.pushResult }
        // Once with a new access token: Google may revoke one before it expires.
        await accessTokens.discard(token)
        switch await accessTokens.token() {
        case .token(let fresh): return await post(request, accessToken: fresh).pushResult
        case .failed(let result): return result
        }
    }

    private func post(_ request: PushRequest, accessToken: String) async -> Result<ProviderAnswer, ProviderExchange.ConnectionFailure> {
        var headers = HTTPHeaders()
        headers.add(name: "authorization", value: "Bearer \(accessToken)")
        headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        let path = "/v1/projects/\(configuration.serviceAccount.projectID)/messages:send"
        let url = PushSettingCheck.url(configuration.baseURL, appending: path)
        return await exchange.post(url: url, headers: headers, body: request.body).map { reply in
            ProviderAnswer.fcm(status: reply.status, retryAfter: reply.headers.first(name: "retry-after"), body: reply.body, now: Date())
        }
    }

    private static func result(_ outcome: Result<ProviderAnswer, ProviderExchange.ConnectionFailure>) -> PushResult {
        switch outcome {
        case .success(let answer): answer.result
        case .failure(let failure): failure.result
        }
    }
}

/// The OAuth 2.0 access token for FCM: fetched with the service account's signed assertion (the
/// JWT-bearer grant), kept until a minute before it expires, fetched by one send at a time while the
/// others wait for the same answer.
actor FCMAccessTokens {
    enum Answer: Sendable {
        case token(String)
        /// What the waiting sends return: `.retry` when the endpoint is down or busy, `.rejected` when it
        /// refuses the service account (a revoked key, a wrong email).
        case failed(PushResult)
    }

    /// A token is dropped this long before Google says it expires, so none expires in flight.
    static let expiryMargin: TimeInterval = 60

    private let account: FCMServiceAccount
    private let exchange: ProviderExchange
    private var cached: (token: String, validUntil: Date)?
    private var fetching: Task<TokenEndpointAnswer, Never>?

    init(account: FCMServiceAccount, exchange: ProviderExchange) {
        self.account = account
        self.exchange = exchange
    }

    func token() async -> Answer {
        if let cached, Date() < cached.validUntil { return .token(cached.token) }
        if let fetching { return await fetching.value.answer }
        let fetch = Task { [account, exchange] in await Self.fetch(account, exchange) }
        fetching = fetch
        let fetched = await fetch.value
        fetching = nil
        if case .token(let token, let lifetime) = fetched {
            cached = (token, Date().addingTimeInterval(lifetime - Self.expiryMargin))
        }
        return fetched.answer
    }

    /// Forgets `token` after FCM refused it, unless a newer one already replaced it.
    func discard(_ token: String) {
        if cached?.token == token { cached = nil }
    }

    private static func fetch(_ account: FCMServiceAccount, _ exchange: ProviderExchange) async -> TokenEndpointAnswer {
        let assertion: String
        do {
            assertion = try JSONWebToken.googleAssertion(account, issuedAt: Date())
        } catch {
            return .failed(.retry(after: nil, reason: "the service-account assertion could not be signed"))
        }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        // The assertion is base64url and dots: nothing in it needs escaping in a form.
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        switch await exchange.post(url: account.tokenURI.absoluteString, headers: headers, body: Data(form.utf8)) {
        case .failure(let failure):
            return .failed(.retry(after: nil, reason: "token endpoint: no answer: \(String(describing: failure.error).prefix(200))"))
        case .success(let reply):
            return TokenEndpointAnswer(status: reply.status, retryAfter: reply.headers.first(name: "retry-after"),
                                       body: reply.body, now: Date())
        }
    }
}

/// The OAuth token endpoint's answer: `{"access_token", "expires_in"}`, or `{"error", "error_description"}`.
enum TokenEndpointAnswer: Equatable {
    case token(String, lifetime: TimeInterval)
    case failed(PushResult)

    /// Google's tokens last an hour; a lifetime outside a second to a day is read as unusable or as a day.
    init(status: Int, retryAfter: String?, body: Data?, now: Date) {
        let object = body.flatMap(ProviderAnswer.jsonObject)
        guard (200..<300).contains(status) else {
            let error = [object?["error"], object?["error_description"]].compactMap { $0.flatMap(ProviderAnswer.providerText) }
            let reason = "token endpoint: " + (error.isEmpty ? "HTTP \(status)" : String(error.joined(separator: ": ").prefix(200)))
            self = switch status {
            case 429, 500..<600: .failed(.retry(after: ProviderAnswer.wait(retryAfter, now: now), reason: reason))
            default: .failed(.rejected(reason: reason))
            }
            return
        }
        // The token goes into a header: only the characters of RFC 6750's b64token.
        guard let token = object?["access_token"] as? String, (1...4096).contains(token.utf8.count),
              token.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            self = .failed(.retry(after: nil, reason: "token endpoint: the answer has no usable access_token"))
            return
        }
        let expiresIn = (object?["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        guard expiresIn.isFinite, expiresIn >= 1 else {
            self = .failed(.retry(after: nil, reason: "token endpoint: the access token expires at once"))
            return
        }
        self = .token(token, lifetime: min(expiresIn, 86_400))
    }

    var answer: FCMAccessTokens.Answer {
        switch self {
        case .token(let token, _): .token(token)
        case .failed(let result): .failed(result)
        }
    }
}
