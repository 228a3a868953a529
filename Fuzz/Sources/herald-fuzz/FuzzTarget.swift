/// Every fuzz target: one hand-written parser each, with the properties its output must have.
/// Its name is the folder of its corpus, `Tests/fuzz/corpus/<name>/`.
enum FuzzTarget: String, CaseIterable {
    case eventBatch = "event-batch"
    case formURLEncoded = "form-urlencoded"
    case multipart
    case cookies
    case percentDecoding = "percent-decoding"
    case requestTarget = "request-target"
    case jsonBody = "json-body"
    case campaignJSON = "campaign-json"
    case utcTime = "utc-time"
    case retryAfter = "retry-after"
    case webOrigin = "web-origin"
    case installationBody = "installation-body"
    case acceptEncoding = "accept-encoding"
    case postgresArray = "postgres-array"
    case apnsKey = "apns-key"
    case entityTag = "entity-tag"

    func run(_ bytes: [UInt8]) {
        switch self {
        case .eventBatch: EventBatchTarget.run(bytes)
        case .formURLEncoded: FormTarget.run(bytes)
        case .multipart: MultipartTarget.run(bytes)
        case .cookies: CookieTarget.run(bytes)
        case .percentDecoding: PercentDecodingTarget.run(bytes)
        case .requestTarget: RequestTargetTarget.run(bytes)
        case .jsonBody: JSONBodyTarget.run(bytes)
        case .campaignJSON: CampaignJSONTarget.run(bytes)
        case .utcTime: UTCTimeTarget.run(bytes)
        case .retryAfter: RetryAfterTarget.run(bytes)
        case .webOrigin: WebOriginTarget.run(bytes)
        case .installationBody: InstallationBodyTarget.run(bytes)
        case .acceptEncoding: AcceptEncodingTarget.run(bytes)
        case .postgresArray: PostgresArrayTarget.run(bytes)
        case .apnsKey: APNsKeyTarget.run(bytes)
        case .entityTag: EntityTagTarget.run(bytes)
        }
    }
}
