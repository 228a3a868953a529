import Foundation
import HeraldDomain

extension DeliveryClient {
    /// Image loads at a time; the rest wait their turn, the one a waiting message needs first.
    static let concurrentImageLoads = 4

    /// Where a message's images are.
    enum ImageReadiness: Equatable {
        /// All on disk: the files of `imageUrl` and `landscapeImageUrl`, when the message has them.
        case loaded(image: URL?, landscape: URL?)
        case loading
        case failed
    }

    /// Every image a campaign of the feed (any language version) or a waiting message may need.
    var imagesInUse: Set<String> {
        var urls = Set<String>()
        for campaign in campaigns { urls.formUnion(Self.everyImage(of: campaign.message)) }
        for message in stack + [slot?.message].compactMap({ $0 }) { urls.formUnion(Self.everyImage(of: message.source)) }
        return urls
    }

    private static func everyImage(of message: Message) -> [String] {
        let versions = [message.imageUrl, message.landscapeImageUrl]
            + (message.translations ?? [:]).values.flatMap { [$0.imageUrl, $0.landscapeImageUrl] }
        return versions.compactMap { $0 }
    }

    /// Starts loading the images of every campaign that could show here (schedule not ended, targeting,
    /// frequency), in the version for the device's language, that are neither on disk nor failed.
    func prefetchImages(now: Date) {
        for campaign in campaigns where campaign.test == true || (campaign.schedule.end.map { $0 > now } ?? true) {
            guard targets(campaign, now: now), frequencyAllows(campaign, now: now) else { continue }
            let version = campaign.message.version(for: device.language).message
            for url in InAppMessage.requiredImages(of: version) where images.file(for: url) == nil && !failedImages.contains(url) {
                requestImage(url, urgent: false)
            }
        }
    }

    /// Whether `message` can show with its images, starting the loads it still needs (ahead of prefetching).
    func readiness(of message: InAppMessage) -> ImageReadiness {
        var loading = false
        for url in message.requiredImages where images.file(for: url) == nil {
            if failedImages.contains(url) || !Self.isFetchable(url) { return .failed }
            loading = true
            requestImage(url, urgent: true)
        }
        if loading { return .loading }
        return .loaded(
            image: message.message.imageUrl.flatMap { images.file(for: $0) },
            landscape: message.message.landscapeImageUrl.flatMap { images.file(for: $0) })
    }

    /// Images are https URLs (validation refuses others); http only from a loopback host, so a developer's
    /// own machine can serve test images, as in herald.js. A client does not fetch anything else.
    static func isFetchable(_ url: String) -> Bool {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else { return false }
        if scheme == "https" { return true }
        guard scheme == "http", let host = parsed.host?.lowercased() else { return false }
        return host == "localhost" || host == "::1" || host == "[::1]" || host.wholeMatch(of: /127(\.[0-9]{1,3}){3}/) != nil
    }

    private func requestImage(_ url: String, urgent: Bool) {
        guard imageLoads[url] == nil else { return }
        guard Self.isFetchable(url) else {
            failedImages.insert(url)
            return
        }
        if let queued = imageLoadQueue.firstIndex(of: url) {
            guard urgent else { return }
            imageLoadQueue.remove(at: queued)
        }
        if imageLoads.count < Self.concurrentImageLoads {
            imageLoads[url] = Task { await loadImage(url) }
        } else if urgent {
            imageLoadQueue.insert(url, at: 0)
        } else {
            imageLoadQueue.append(url)
        }
    }

    /// Fetches one image through the transport (no key, no installation id), keeps it on disk, and lets a
    /// message waiting for it go on.
    private func loadImage(_ url: String) async {
        var body: Data?
        if let target = URL(string: url) {
            do {
                let response = try await configuration.transport.send(
                    TransportRequest(
                        method: "GET", url: target, headers: ["Accept": "image/*"], body: nil,
                        maxResponseBytes: configuration.imageBytesLimit))
                if (200..<300).contains(response.status), !response.body.isEmpty { body = response.body }
            } catch {
                body = nil
            }
        }
        imageLoads[url] = nil
        if let body {
            do {
                try images.store(body, for: url)
            } catch is ImageCache.TooLarge {
                failedImages.insert(url)
            } catch {
                failedImages.insert(url)
                storageFailed(.images, error)
            }
        } else {
            failedImages.insert(url)
        }
        while imageLoads.count < Self.concurrentImageLoads, !imageLoadQueue.isEmpty {
            let next = imageLoadQueue.removeFirst()
            imageLoads[next] = Task { await loadImage(next) }
        }
        imagesSettled(now: configuration.clock())
    }

    /// Waits until every image load under way has finished, but those of `urls` (which a test's transport
    /// holds until it lets them go). Loads queued behind held ones cannot start, and are not waited for.
    func waitForImageLoads(except urls: Set<String> = []) async {
        while let load = imageLoads.first(where: { !urls.contains($0.key) }) {
            await load.value.value
        }
    }
}
