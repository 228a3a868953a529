import Dispatch
import Foundation
import HeraldStorage
import GRDB
import GRDBSQLite
import Metrics
import Synchronization

/// Copies the write-ahead log into the database file from a thread of its own. SQLite's automatic
/// checkpoint runs inside the commit that crosses 1000 pages of log, so whichever group commit of event
/// batches that is waits for the checkpoint's reads, writes and the database file's fsync. Once started,
/// the writer's automatic checkpoint is off and this thread checkpoints passively (never waiting for, or
/// holding up, the writer or readers) every `interval`; a log that still grows past `truncateAbove`
/// frames (long readers kept a passive checkpoint from finishing) is checkpointed and truncated.
public final class BackgroundCheckpoints: Sendable {
    private let path: String
    private let stopSignal = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    init(path: String) {
        self.path = path
    }

    /// Starts checkpointing in the background; nothing if already started.
    func start(pool: DatabasePool, interval: Duration, truncateAbove: Int32) throws {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var opened: OpaquePointer?
        do {
            guard sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let opened else {
                throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "cannot open \(path) for checkpoints: \(Self.message(opened))")
            }
            // A truncating checkpoint waits for readers to leave the log; a second is enough for reports.
            sqlite3_busy_timeout(opened, 1000)
            // A connection opens the log with its first read; until then it has nothing to checkpoint (and
            // says so with -1 frames).
            guard sqlite3_exec(opened, "SELECT COUNT(*) FROM sqlite_schema", nil, nil, nil) == SQLITE_OK else {
                throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "cannot read \(path) for checkpoints: \(Self.message(opened))")
            }
            try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        } catch {
            // Nothing started: a later start may try again.
            sqlite3_close(opened)
            running.store(false, ordering: .releasing)
            throw error
        }
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        // Used by that thread alone, from here until it closes it.
        nonisolated(unsafe) let connection = opened
        let stopSignal = stopSignal, stopped = stopped
        let duration = Timer(label: "herald_database_checkpoint_duration_seconds")
        Thread.detachNewThread {
            while stopSignal.wait(timeout: .now() + seconds) == .timedOut {
                let started = ContinuousClock.now
                var logFrames: Int32 = 0, copied: Int32 = 0
                let code = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied)
                if code == SQLITE_OK, logFrames > truncateAbove {
                    sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
                }
                if copied > 0 { duration.record(duration: ContinuousClock.now - started) }
            }
            sqlite3_close(connection)
            stopped.signal()
        }
    }

    private static func message(_ connection: OpaquePointer?) -> String {
        connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
    }

    /// Stops the thread and closes its connection; returns once it has.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopSignal.signal()
        stopped.wait()
    }
}
