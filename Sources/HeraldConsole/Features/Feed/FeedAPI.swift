import Foundation
import HeraldHTTP
import HeraldStorage

/// `GET /api/v1/feed`: the key's app's feed from `FeedService`'s snapshot, or a 304 for the ETag the client has.
struct FeedHandler: Sendable {
    let feeds: FeedService

    static let sharedCacheControl = "public, max-age=0, s-maxage=\(FeedService.sharedCacheSeconds)"
    static let personalCacheControl = "private, no-cache"

    func feed(_ context: RequestContext, key: APIKey) throws -> Response {
        let installation = context.request.headers["X-Installation-Id"]
        let snapshot: FeedService.Snapshot
        do {
            snapshot = try feeds.snapshot(appID: key.appID, installationID: installation, now: context.now)
        } catch is AppDeleted {
            // The key was checked, then its app was deleted before the feed was read.
            throw HTTPError(401, "This API key's app no longer exists.")
        }
        let (representation, gzipped) = snapshot.representation(acceptEncoding: context.request.headers["Accept-Encoding"])
        var headers = HTTPHeaders([
            ("ETag", representation.etag.description),
            // Devices revalidate every poll (max-age=0); a shared cache may answer for sharedCacheSeconds.
            // A test device's feed is its own, so no shared cache keeps it.
            ("Cache-Control", snapshot.personal ? Self.personalCacheControl : Self.sharedCacheControl),
            ("Vary", "Authorization, X-Installation-Id, Accept-Encoding"),
        ])
        if representation.etag.isMatched(byIfNoneMatch: context.request.headers["If-None-Match"]) {
            RequestMetrics.recordFeed(notModified: true)
            return .notModified(headers: headers)
        }
        headers.add("Content-Type", "application/json")
        if gzipped { headers.add("Content-Encoding", "gzip") }
        RequestMetrics.recordFeed(notModified: false)
        return Response(status: 200, headers: headers, body: representation.body)
    }
}
