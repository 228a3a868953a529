import Foundation
import HeraldDomain

/// The events waiting to be uploaded, oldest first, kept in a JSON Lines file: each new event is one
/// line appended to it, so recording an event costs one short write, not a rewrite of the queue.
///
/// At most `limit` events wait; when full, the oldest is dropped and counted. The file is rewritten
/// (compacted) only when an upload is acknowledged, or when the dropped lines at its start make it
/// twice the limit; reading it back takes its last `limit` events, so those lines never return.
struct EventQueue {
    let file: URL
    let limit: Int
    private(set) var events: [OutgoingEvent]
    /// Events dropped because the queue was full, since this client started.
    private(set) var dropped = 0
    /// How many times the file was rewritten (a test looks: recording must only append).
    private(set) var rewrites = 0
    private var linesOnDisk: Int
    /// A write failed, so the file no longer matches `events`: the next write rewrites it whole.
    private var outOfStep = false

    init(file: URL, limit: Int) {
        self.file = file
        self.limit = max(1, limit)
        let data = (try? Data(contentsOf: file)) ?? Data()
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        let decoder = CampaignJSON.decoder()
        // A line cut short by a crash does not decode: it is skipped, and the next write rewrites the file.
        let decoded = lines.compactMap { try? decoder.decode(OutgoingEvent.self, from: Data($0)) }
        events = Array(decoded.suffix(self.limit))
        linesOnDisk = lines.count
        outOfStep = decoded.count != lines.count || (!data.isEmpty && data.last != UInt8(ascii: "\n"))
    }

    var isEmpty: Bool { events.isEmpty }

    /// Adds `event` at the end (dropping the oldest when full) and appends its line to the file.
    /// The event is queued in memory even when the write fails.
    mutating func append(_ event: OutgoingEvent) throws {
        events.append(event)
        if events.count > limit {
            events.removeFirst(events.count - limit)
            dropped += 1
        }
        if outOfStep || linesOnDisk + 1 > 2 * limit {
            try compact()
            return
        }
        var line = try CampaignJSON.encoder().encode(event)
        line.append(UInt8(ascii: "\n"))
        do {
            try appendToFile(line)
            linesOnDisk += 1
        } catch {
            outOfStep = true
            throw error
        }
    }

    /// Removes the events the server acknowledged (stored, or refused for good) and rewrites the file.
    mutating func remove(ids: Set<String>) throws {
        events.removeAll { ids.contains($0.id) }
        try compact()
    }

    private mutating func compact() throws {
        let encoder = CampaignJSON.encoder()
        var data = Data()
        for event in events {
            data.append(try encoder.encode(event))
            data.append(UInt8(ascii: "\n"))
        }
        rewrites += 1
        do {
            try data.write(to: file, options: .atomic)
            linesOnDisk = events.count
            outOfStep = false
        } catch {
            outOfStep = true
            throw error
        }
    }

    private func appendToFile(_ line: Data) throws {
        if !FileManager.default.fileExists(atPath: file.path) {
            try Data().write(to: file)
        }
        let handle = try FileHandle(forWritingTo: file)
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: line)
        } catch {
            // The write's error is the one to report; the handle goes either way.
            try? handle.close()
            throw error
        }
        try handle.close()
    }
}

/// An event as the events endpoint takes it; its id is made once, so a retried upload counts once.
public struct OutgoingEvent: Codable, Sendable, Equatable {
    public var id: String
    public var type: EventType
    public var campaignId: Int64
    public var occurredAt: Date
    public var platform: String
    public var installationId: String?
    public var action: ClickAction?
    public var url: String?
    public var dismissType: DismissType?
    public var errorCode: DisplayErrorCode?
    public var event: String?
    /// The language version the display showed (`InAppMessage.language`); absent for the default version.
    public var language: String?
}
