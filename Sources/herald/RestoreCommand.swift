import ArgumentParser
import Foundation
import HeraldSQLite
import HeraldStorage

/// `herald serve` holds a shared lock on `<database>.lock` while it runs; `herald restore` needs it
/// exclusively, so it refuses while any server uses the database (an idle SQLite file in WAL mode holds
/// no lock of its own that would say so). The kernel drops the lock when a process ends, however it ends.
enum ServingLock {
    static func path(for database: String) -> String { database + ".lock" }

    /// Takes the lock; the descriptor stays open (and the lock held) until the process exits. Where the
    /// lock file cannot be made (a read-only folder, which no restore could write either) the server runs
    /// without it; only a restore in progress stops it.
    static func holdWhileServing(_ database: String) throws {
        try? FileManager.default.createDirectory(
            at: URL(fileURLWithPath: database).deletingLastPathComponent(), withIntermediateDirectories: true)
        let descriptor = open(path(for: database), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else {
            throw ValidationError("herald restore is putting a backup in place of \(database): start the server once it has finished.")
        }
    }

    /// Whether no server holds the database; if so the lock is kept (by the returned descriptor) until closed.
    static func takeExclusively(_ database: String) -> Int32? {
        let descriptor = open(path(for: database), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }
}

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup in place of the database: checked first, the current file kept aside, swapped in one rename.",
        discussion: """
            Stop the server first (systemctl stop herald); restore refuses while one runs on the database. The backup must \
            pass SQLite's integrity check and be a Herald database no newer than this binary. The current database (and its \
            write-ahead log) is moved to <database>.before-restore-<time> rather than deleted. Push credentials in the \
            backup are sealed with the key file that was in use when it was made: keep that key file in place.
            """)

    @OptionGroup var storage: StorageOptions

    @Option(help: "The backup to restore (a file made by herald backup).")
    var from: String

    func run() throws {
        guard try storage.postgresLocation() == nil else {
            throw ValidationError("herald restore puts an SQLite backup in place; for PostgreSQL use its own tools (pg_restore).")
        }
        let target = storage.databasePath
        let migrations = try storage.resourcesFolder().appendingPathComponent("migrations")
        let applied = try SQLiteAppDatabase.checkBackup(path: from, migrations: migrations)
        guard let lock = ServingLock.takeExclusively(target) else {
            throw ValidationError("A server is running on \(target): stop it first (systemctl stop herald), then restore.")
        }
        defer { close(lock) }

        // The copy is written beside the database, so the final rename stays on one file system and is atomic.
        let folder = URL(fileURLWithPath: target).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let staging = target + ".restoring-\(getpid())"
        try? FileManager.default.removeItem(atPath: staging)
        try FileManager.default.copyItem(atPath: from, toPath: staging)
        try Self.sync(staging)

        let stamp = UTCTimeStamp.now()
        var keptAside: [String] = []
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: target + suffix) {
            let aside = target + ".before-restore-\(stamp)" + suffix
            try FileManager.default.moveItem(atPath: target + suffix, toPath: aside)
            keptAside.append(aside)
        }
        guard rename(staging, target) == 0 else {
            throw ValidationError("Could not move the restored copy into place (errno \(errno)); the previous database is at \(keptAside.first ?? "(none)").")
        }
        try Self.sync(folder.path)
        print("Restored \(from) (\(applied) migrations) to \(target)." + (keptAside.isEmpty ? "" : " The previous database is at \(keptAside[0])."))
    }

    /// Flushes a file or folder to disk, so that a crash right after cannot leave a renamed but empty file.
    static func sync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ValidationError("Cannot open \(path) to flush it (errno \(errno)).") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw ValidationError("Cannot flush \(path) to disk (errno \(errno)).") }
    }
}

/// `20261124T111500Z`: a time for file names, sortable and without colons.
enum UTCTimeStamp {
    static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
