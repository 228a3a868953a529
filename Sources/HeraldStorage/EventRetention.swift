import Foundation
import Synchronization

/// Deletes raw events older than the retention period in small steps, so that ingestion's group
/// commits wait at most one step for the write lock, and hands the freed pages back to the file system.
/// Reports are unchanged: they read the rollups and the device bitmaps, which stay.
public final class EventRetention: Sendable {
    /// What one run did, for the System page.
    public struct Run: Sendable, Equatable {
        public let finishedAt: Date
        public let deleted: Int
        public let steps: Int
    }

    /// The default retention period: a year and a month, so a year-over-year comparison still has its raw events.
    public static let defaultDays = 400
    /// The longest retention period accepted (a century); 0 keeps raw events forever.
    public static let allowedDays = 0...36_500

    /// Days raw events are kept; 0 keeps them forever.
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

    /// Deletes the raw events received more than `days` before `now`, step by step with a pause
    /// between steps, reclaiming the freed pages after each. Nothing when raw events are kept forever.
    @discardableResult
    public func run(now: Date) throws -> Run? {
        guard days > 0 else { return nil }
        let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
        var deleted = 0
        var steps = 0
        while steps < maximumSteps {
            let step = try database.events.deleteRawEvents(receivedBefore: cutoff, limit: rowsPerStep)
            steps += 1
            deleted += step
            // A deleted event frees well under a page; this returns what the step freed without a long write.
            try database.reclaimFreePages(atMost: rowsPerStep)
            if step < rowsPerStep { break }
            Thread.sleep(forTimeInterval: Double(pauseBetweenSteps.components.seconds)
                + Double(pauseBetweenSteps.components.attoseconds) / 1e18)
        }
        let run = Run(finishedAt: now, deleted: deleted, steps: steps)
        lastRun.withLock { $0 = run }
        return run
    }
}
