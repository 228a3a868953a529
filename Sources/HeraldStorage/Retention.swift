import Foundation
import Synchronization

/// Deletes what is older than the retention period, in small steps, so that ingestion's and
/// registration's group commits wait at most one step for the write lock, and hands the freed pages back
/// to the file system: raw events received before the period, and installations that have not registered
/// during it (a phone thrown away, or a token registered once by someone else, leaves the push audience).
/// Reports are unchanged: they read the rollups and the device bitmaps, which stay.
public final class Retention: Sendable {
    /// What one run did, for the System page.
    public struct Run: Sendable, Equatable {
        public let finishedAt: Date
        public let eventsDeleted: Int
        public let installationsDeleted: Int
        public let steps: Int
    }

    /// The default retention period: a year and a month, so a year-over-year comparison still has its raw events.
    public static let defaultDays = 400
    /// The longest retention period accepted (a century); 0 keeps raw events and installations forever.
    public static let allowedDays = 0...36_500

    /// Days raw events and unregistered installations are kept; 0 keeps them forever.
    public let days: Int
    private let database: any Stores
    private let rowsPerStep: Int
    private let pauseBetweenSteps: Duration
    /// Bounds one run; a backlog larger than this is finished by the next runs.
    private let maximumSteps: Int
    private let lastRun = Mutex<Run?>(nil)

    public init(
        database: any Stores, days: Int, rowsPerStep: Int = 2000, pauseBetweenSteps: Duration = .milliseconds(50),
        maximumSteps: Int = 5000
    ) {
        self.database = database
        self.days = min(max(days, Self.allowedDays.lowerBound), Self.allowedDays.upperBound)
        self.rowsPerStep = max(1, rowsPerStep)
        self.pauseBetweenSteps = pauseBetweenSteps
        self.maximumSteps = max(1, maximumSteps)
    }

    /// The last run's outcome since this process started, nil before the first.
    public var latestRun: Run? { lastRun.withLock { $0 } }

    /// Deletes the raw events received more than `days` before `now`, then the installations that last
    /// registered before then, step by step with a pause between steps, reclaiming the freed pages after
    /// each; nil when they are kept forever. First, whatever the period, the installations' grouped counts
    /// are brought up to date (`foldProfileChanges`), the same hourly upkeep of what would otherwise grow.
    @discardableResult
    public func run(now: Date) throws -> Run? {
        try database.installations.foldProfileChanges()
        guard days > 0 else { return nil }
        let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
        var steps = 0
        let eventsDeleted = try deleteInSteps(&steps) { limit in
            try database.events.deleteRawEvents(receivedBefore: cutoff, limit: limit)
        }
        let installationsDeleted = try deleteInSteps(&steps) { limit in
            try database.installations.deleteUnregistered(since: cutoff, limit: limit)
        }
        let run = Run(finishedAt: now, eventsDeleted: eventsDeleted, installationsDeleted: installationsDeleted, steps: steps)
        lastRun.withLock { $0 = run }
        return run
    }

    /// Calls `step` with `rowsPerStep` until it deletes fewer (nothing is left) or the run has taken
    /// `maximumSteps` in all; returns how many rows the steps deleted.
    private func deleteInSteps(_ steps: inout Int, _ step: (Int) throws -> Int) throws -> Int {
        var deleted = 0
        while steps < maximumSteps {
            let rows = try step(rowsPerStep)
            steps += 1
            deleted += rows
            // A deleted row frees well under a page; this returns what the step freed without a long write.
            try database.reclaimFreePages(atMost: rowsPerStep)
            if rows < rowsPerStep { break }
            Thread.sleep(forTimeInterval: Double(pauseBetweenSteps.components.seconds)
                + Double(pauseBetweenSteps.components.attoseconds) / 1e18)
        }
        return deleted
    }
}
