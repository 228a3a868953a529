/// Errors from the storage layer, worded for the operator who reads them.
public enum StorageError: Error, CustomStringConvertible, Equatable {
    case databaseIsNewer(unknownMigrations: [String])
    case noMigrations(folder: String)
    case cannotOpen(path: String, cause: StorageUnavailable)
    case notABackup(path: String, reason: String)
    /// The PostgreSQL database could not be opened: `location` without its password, `reason` as the
    /// server or the network said it.
    case cannotReach(location: String, reason: String)
    /// The PostgreSQL database opened, but a migration failed there (nothing of that migration was kept).
    case migrationFailed(location: String, reason: String)

    public var description: String {
        switch self {
        case .databaseIsNewer(let unknown):
            "store: this database was migrated by a newer Herald (unknown migrations: \(unknown.joined(separator: ", "))). "
                + "Run the newer herald binary, or restore a backup made with this version."
        case .noMigrations(let folder):
            "store: no migrations found in \(folder); point --resources at the folder that holds migrations/"
        case .cannotReach(let location, let reason):
            "store: cannot open the PostgreSQL database \(location): \(reason). Check that the server runs and that the URL's host, "
                + "port, user, password, database and sslmode are right and let this host in, then start again."
        case .migrationFailed(let location, let reason):
            "store: a migration failed on the PostgreSQL database \(location): \(reason). Nothing of it was kept; the user in "
                + "the URL needs to create tables, functions and triggers in the database."
        case .notABackup(let path, let reason):
            "store: \(path) is not a Herald backup: \(reason). Nothing was changed."
        case .cannotOpen(let path, let cause):
            "store: cannot open \(path) for writing"
                + (cause == .readOnly ? ": the file or its folder is read-only" : " (\(cause.reason))")
                + ". Herald writes the database and the -wal and -shm files beside it: give it write permission on the file "
                + "and its folder (or a writable volume), then start again."
        }
    }
}
