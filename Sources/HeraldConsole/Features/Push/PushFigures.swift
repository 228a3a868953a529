import Foundation
import HeraldDomain
import HeraldStorage

/// A push campaign's figures as numbers, for its report (`PushReport`, which words them) and the stats
/// endpoint (`CampaignStats.push`, which writes them as JSON): from the outbox, over the whole send, how many
/// devices were targeted and sent to and how many were not (by reason); from the events its apps report in
/// the range, how many notifications arrived (`push_received`) and were opened (`push_open`), test devices
/// left out; by platform and by day.
struct PushFigures: Sendable, Equatable {
    struct PlatformFigures: Sendable, Equatable {
        var targeted = 0
        var sent = 0
        var delivered = 0
        var opened = 0
    }

    struct DayFigures: Sendable, Equatable {
        let date: String
        var sent = 0
        var delivered = 0
        var opened = 0

        var isEmpty: Bool { sent == 0 && delivered == 0 && opened == 0 }
    }

    /// One kind of notification that did not arrive: its outbox state and the provider's reason (empty when
    /// it has none, as for `unknown`).
    struct NotSent: Sendable, Equatable {
        let state: String
        let reason: String
        let count: Int
    }

    var targeted = 0
    var sent = 0
    /// Failed, unregistered, skipped and unknown together.
    var notSent = 0
    /// The kinds of `notSent`, most first, at most `PushFigures.reasonLimit` of them.
    var notSentByReason: [NotSent] = []
    var delivered = 0
    var opened = 0
    /// Opened per sent, 0 when none was sent, to four decimals as the click-through rate.
    var openRate: Double = 0
    var byPlatform: [String: PlatformFigures] = [:]
    /// Every day of the range, in order.
    var daily: [DayFigures] = []

    /// How many kinds of failure are listed; the rest are only in `notSent`.
    static let reasonLimit = 20

    init() {}

    init(campaignID: Int64, outbox: any PushOutboxStore, counts: EventCounts, range: DayRange) throws {
        let progress = try outbox.progress(campaignID: campaignID)
        let breakdown = try outbox.sentBreakdown(campaignID: campaignID)
        targeted = progress.planned
        sent = progress.sent
        notSent = progress.failed + progress.unregistered + progress.skipped + progress.unknown
        notSentByReason = try outbox.failures(campaignID: campaignID, limit: Self.reasonLimit).map { NotSent(state: $0.state, reason: $0.reason, count: $0.count) }
        for row in breakdown.byPlatform {
            byPlatform[row.platform, default: PlatformFigures()].targeted += row.targeted
            byPlatform[row.platform, default: PlatformFigures()].sent += row.sent
        }
        var days = Dictionary(uniqueKeysWithValues: range.days.map { ($0, DayFigures(date: $0)) })
        for row in breakdown.byDay { days[row.day]?.sent += row.sent }
        for row in counts.rows where !row.test && row.campaignID == campaignID {
            switch row.type {
            case .pushReceived:
                delivered += row.count
                byPlatform[row.platform, default: PlatformFigures()].delivered += row.count
                days[row.day]?.delivered += row.count
            case .pushOpen:
                opened += row.count
                byPlatform[row.platform, default: PlatformFigures()].opened += row.count
                days[row.day]?.opened += row.count
            default:
                break
            }
        }
        daily = range.days.compactMap { days[$0] }
        openRate = sent == 0 ? 0 : (Double(opened) / Double(sent) * 10_000).rounded() / 10_000
    }

    /// The stats endpoint's `push` member (openapi.yaml, `PushStats`), each object's members in the order of
    /// their names' bytes.
    func write(into json: inout JSONWriter) {
        json.object { json in
            json.key("byPlatform")
            json.objectByName(byPlatform) { figures, json in
                json.object { json in
                    json.member("delivered", figures.delivered)
                    json.member("opened", figures.opened)
                    json.member("sent", figures.sent)
                    json.member("targeted", figures.targeted)
                }
            }
            json.key("daily")
            json.array(daily) { day, json in
                json.object { json in
                    json.member("date", day.date)
                    json.member("delivered", day.delivered)
                    json.member("opened", day.opened)
                    json.member("sent", day.sent)
                }
            }
            json.member("delivered", delivered)
            json.member("notSent", notSent)
            json.key("notSentByReason")
            json.array(notSentByReason) { kind, json in
                json.object { json in
                    json.member("count", kind.count)
                    json.member("reason", kind.reason)
                    json.member("state", kind.state)
                }
            }
            json.member("openRate", openRate)
            json.member("opened", opened)
            json.member("sent", sent)
            json.member("targeted", targeted)
        }
    }
}
