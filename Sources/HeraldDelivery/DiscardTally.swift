import Foundation
import HeraldDomain

/// The discards waiting to be uploaded (`DiscardCount`): one count per campaign, reason and UTC day, kept in
/// a JSON file beside the event queue, so they survive a restart as events do, and rewritten whole on each
/// change (it holds at most `limit` counts, a few kilobytes).
///
/// A count goes up until an upload takes it; from then on it is `sent` and never changes, so a retry sends
/// it again under the same id and Herald adds it once; a later discard starts a new count. When `limit`
/// counts wait, the oldest is dropped to make room and its discards are counted in `dropped`.
struct DiscardTally {
    /// One count as kept on the device.
    struct Entry: Codable, Equatable {
        var id: String
        var campaignId: Int64
        var reason: DiscardReason
        /// The UTC day, `YYYY-MM-DD`.
        var day: String
        var count: Int
        /// Data collection was on when the count started: only then may it carry the installation id.
        var identified: Bool
        /// An upload took it: its count is fixed.
        var sent: Bool
    }

    let file: URL
    let limit: Int
    private(set) var entries: [Entry]
    /// Discards dropped with counts that made room, since this client started.
    private(set) var dropped = 0

    init(file: URL, limit: Int) {
        self.file = file
        self.limit = max(1, limit)
        // A file cut short by a crash does not decode: its counts are lost, the next write replaces it.
        let stored = (try? Data(contentsOf: file)).flatMap { try? CampaignJSON.decoder().decode([Entry].self, from: $0) } ?? []
        entries = Array(stored.suffix(self.limit))
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Counts one discard of `campaignID` for `reason` on the UTC day of `now`. The count is in memory even
    /// when the write fails.
    mutating func add(campaignID: Int64, reason: DiscardReason, now: Date, identified: Bool) throws {
        let day = UTCTime.day(now)
        if let open = entries.firstIndex(where: {
            !$0.sent && $0.campaignId == campaignID && $0.reason == reason && $0.day == day && $0.identified == identified
                && $0.count < DiscardCount.maxCount
        }) {
            entries[open].count += 1
        } else {
            entries.append(Entry(
                id: TimeOrderedUUID.make(at: now).uuidString.lowercased(), campaignId: campaignID, reason: reason, day: day, count: 1,
                identified: identified, sent: false))
            while entries.count > limit { dropped += entries.removeFirst().count }
        }
        try save()
    }

    /// Marks the counts an upload takes (at most `DiscardCount.maxPerBatch`, oldest first) as sent, and returns
    /// them. They are taken even when the write fails (`saveFailed` hears why): this upload sends them, and
    /// their counts stay fixed while the client runs.
    mutating func takeForUpload(saveFailed: (any Error) -> Void) -> [Entry] {
        let taken = entries.prefix(DiscardCount.maxPerBatch).indices
        guard !taken.isEmpty else { return [] }
        for index in taken { entries[index].sent = true }
        do {
            try save()
        } catch {
            saveFailed(error)
        }
        return Array(entries[taken])
    }

    /// Removes the counts the server answered for (stored, or refused for good).
    mutating func remove(ids: Set<String>) throws {
        entries.removeAll { ids.contains($0.id) }
        try save()
    }

    private func save() throws {
        try CampaignJSON.encoder().encode(entries).write(to: file, options: .atomic)
    }
}

/// A discard count as the events endpoint takes it, in the batch's `discards`.
public struct OutgoingDiscard: Codable, Sendable, Equatable {
    public var id: String
    public var campaignId: Int64
    public var reason: DiscardReason
    public var day: String
    public var count: Int
    public var installationId: String?
}
