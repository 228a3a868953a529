import Foundation
import HeraldHTTP
import HeraldStorage

/// A push campaign's sending on its page: a progress bar and the counts by state, which the console's
/// script refreshes from `GET /campaigns/{id}/push-progress` while the send goes on.
struct PushProgressView: Sendable {
    struct Count: Sendable {
        let state: String
        let label: String
        let value: String
    }

    struct Failure: Sendable {
        let reason: String
        let count: String
    }

    let id: Int64
    /// Rows that reached an end, of those planned: the bar's value and maximum.
    let finished: Int
    let planned: Int
    let done: Bool
    let summary: String
    let counts: [Count]
    let failures: [Failure]

    init(campaignID: Int64, progress: PushProgress, failures: [(state: String, reason: String, count: Int)], localizer l: Localizer) {
        id = campaignID
        finished = progress.finished
        planned = max(progress.planned, 1)
        done = progress.isDone
        summary = progress.isDone
            ? l("campaigns.push.done", ["sent": l.number(progress.sent), "planned": l.number(progress.planned)])
            : l("campaigns.push.sending", ["finished": l.number(progress.finished), "planned": l.number(progress.planned)])
        counts = Self.states(progress).map { Count(state: $0.state, label: l("campaigns.push.state." + $0.state), value: l.number($0.count)) }
        self.failures = Self.failures(failures, l)
    }

    /// Rows that did not arrive, each named by the provider's reason, or by its state when it has none.
    static func failures(_ rows: [(state: String, reason: String, count: Int)], _ l: Localizer) -> [Failure] {
        rows.map { Failure(reason: $0.reason.isEmpty ? l("campaigns.push.state." + $0.state) : $0.reason, count: l.number($0.count)) }
    }

    /// The counts in the order the page and the JSON give them.
    static func states(_ progress: PushProgress) -> [(state: String, count: Int)] {
        [("planned", progress.planned), ("sent", progress.sent), ("pending", progress.pending), ("sending", progress.sending),
         ("failed", progress.failed), ("unregistered", progress.unregistered), ("skipped", progress.skipped), ("unknown", progress.unknown)]
    }
}

/// `GET /campaigns/{id}/push-progress`: the counts as JSON, for the page's script.
struct PushProgressPages: Sendable {
    let services: Services

    func progress(_ context: RequestContext) throws -> Response {
        let id = try context.id("id")
        guard let stored = try services.database.campaigns.find(id: id), stored.campaign.channel == .push else { throw HTTPError.notFound }
        let progress = try services.database.pushOutbox.progress(campaignID: id)
        var object: [String: Any] = Dictionary(uniqueKeysWithValues: PushProgressView.states(progress).map { ($0.state, $0.count) })
        object["finished"] = progress.finished
        object["done"] = progress.isDone
        let body = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        var response = Response.json(Array(body))
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
