import Foundation
import HeraldDomain

/// What became of a feed fetch.
public enum FeedRefresh: Sendable, Equatable {
    case updated, notModified
    /// The last good feed stays in use; the next try waits for the backoff.
    case failed(String)
    /// The server refused the key (401) or its scope (403): nothing more until `resume(apiKey:)`.
    case stopped(Int)
}

extension DeliveryClient {
    /// The campaigns of the last good feed.
    public var campaigns: [FeedCampaign] { cachedFeed?.feed.campaigns ?? [] }

    /// Fetches the feed (with `If-None-Match`). On any failure the last good feed stays in use and the next
    /// fetch waits 1 s, 2 s, 4 s … at most 5 minutes, ±20 %, and never less than the server's `Retry-After`.
    @discardableResult
    public func refreshFeed() async -> FeedRefresh {
        if let stoppedStatus { return .stopped(stoppedStatus) }
        var headers = ["Authorization": "Bearer \(apiKey)", "Accept": "application/json"]
        if let etag = cachedFeed?.etag { headers["If-None-Match"] = etag }
        if automaticDataCollectionEnabled { headers["X-Installation-Id"] = state.installationID }
        let request = TransportRequest(
            method: "GET", url: configuration.serverURL.appendingPathComponent("api/v1/feed"), headers: headers, body: nil)
        let response: TransportResponse
        do {
            response = try await configuration.transport.send(request)
        } catch {
            return feedFailed("\(error)", retryAfter: nil)
        }
        let now = configuration.clock()
        switch response.status {
        case 200:
            let feed: Feed
            do {
                feed = try CampaignJSON.decoder().decode(Feed.self, from: response.body).keepingDrawableCampaigns
            } catch {
                return feedFailed("the feed did not read: \(error)", retryAfter: nil)
            }
            let changed = cachedFeed?.feed.campaigns != feed.campaigns
            let cached = DeviceStore.CachedFeed(feed: feed, etag: response.header("ETag"), fetchedAt: now)
            cachedFeed = cached
            do {
                try store.save(cached)
            } catch {
                storageFailed(.feed, error)
            }
            feedBackoff.reset()
            nextFeedRefresh = now.addingTimeInterval(pollInterval)
            if changed { feedChanged(now: now) }
            return .updated
        case 304:
            feedBackoff.reset()
            nextFeedRefresh = now.addingTimeInterval(pollInterval)
            return .notModified
        case 401, 403:
            stop(status: response.status)
            return .stopped(response.status)
        default:
            return feedFailed("the server answered \(response.status)", retryAfter: RetryAfter.delay(response.header("Retry-After"), now: now))
        }
    }

    /// Refreshes when `pollAfterSeconds` (or the backoff after a failure) has passed since the last answer.
    public func refreshFeedIfDue() async {
        if configuration.clock() >= nextFeedRefresh { await refreshFeed() }
    }

    /// Takes a key again after a 401 or 403 stopped the client, and polls, uploads and registers as soon as asked.
    public func resume(apiKey: String) {
        self.apiKey = apiKey
        stoppedStatus = nil
        feedBackoff.reset()
        uploadBackoff.reset()
        registrationBackoff.reset()
        nextFeedRefresh = .distantPast
        nextUploadAttempt = .distantPast
        nextRegistrationAttempt = .distantPast
    }

    func stop(status: Int) {
        stoppedStatus = status
        delegate?.deliveryStopped(status: status)
    }

    private func feedFailed(_ reason: String, retryAfter: TimeInterval?) -> FeedRefresh {
        let delay = feedBackoff.delayAfterFailure(random: configuration.random(), retryAfter: retryAfter)
        nextFeedRefresh = configuration.clock().addingTimeInterval(delay)
        return .failed(reason)
    }

    /// The server's `pollAfterSeconds`, kept between a second and a day whatever it says.
    private var pollInterval: TimeInterval {
        TimeInterval(min(max(cachedFeed?.feed.pollAfterSeconds ?? 60, 1), 86_400))
    }

    /// A feed that differs from the last: images no campaign uses any more go, failed ones get another
    /// chance, and the images of every campaign eligible here start loading.
    private func feedChanged(now: Date) {
        failedImages.removeAll()
        do {
            try images.keep(only: imagesInUse)
        } catch {
            storageFailed(.images, error)
        }
        prefetchImages(now: now)
    }

    /// The minimum interval between displays: the configuration's, else the app's from the feed, else 30 s.
    var minimumInterval: TimeInterval {
        configuration.minimumInterval ?? TimeInterval(cachedFeed?.feed.app.minIntervalSeconds ?? 30)
    }

    /// The campaign in the current feed with this id.
    func feedCampaign(id: Int64) -> FeedCampaign? {
        campaigns.first { $0.id == id }
    }
}
