import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `GET /api/v1/campaigns/{id}/stats?from=&to=`.
struct StatsAPI: Sendable {
    let services: Services

    func stats(_ context: RequestContext, key: APIKey) throws -> Response {
        let stored = try services.campaign(addressedBy: context, key: key)
        let range: DayRange
        do {
            range = try DayRange.parse(from: context.request.query["from"], to: context.request.query["to"], now: context.now)
        } catch {
            throw HTTPError(400, error.message)
        }
        let counts = try services.database.events.counts(campaignID: stored.id, from: range.from, to: range.to)
        var stats = CampaignStats(counts: counts, range: range)
        if stored.campaign.channel == .push {
            stats.push = try PushFigures(campaignID: stored.id, outbox: services.database.pushOutbox, counts: counts, range: range)
        }
        return .json(stats.json)
    }
}
