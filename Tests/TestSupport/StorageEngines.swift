import Foundation
import HeraldDomain
import HeraldPostgres
import HeraldSQLite
import HeraldStorage
import PostgresNIO
import Synchronization

/// The database engines the storage contract runs on: SQLite always; PostgreSQL when
/// `HERALD_TEST_POSTGRES_URL` names a server whose user may create databases (`make test` starts one with
/// Tools/with-postgres.sh).
package enum StorageEngine: String, CaseIterable, Sendable {
    case sqlite
    case postgres

    package static let postgresURL = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// Every engine this run can reach.
    package static var available: [StorageEngine] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }
}

/// One test's database on one engine: made empty and migrated, removed when released. `open()` gives
/// another handle on the same database, as a second process (or instance) would have.
package final class EngineDatabase: Sendable {
    package let engine: StorageEngine
    private let folder: TemporaryFolder
    private let postgresName: String
    package let stores: any Stores
    private let others = Mutex<[any Stores]>([])

    package init(_ engine: StorageEngine) throws {
        self.engine = engine
        folder = try TemporaryFolder()
        postgresName = "herald_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        if engine == .postgres {
            try Self.administer("CREATE DATABASE \(postgresName)")
        }
        stores = try Self.open(engine, folder: folder, postgresName: postgresName)
    }

    /// Another connection pool or file handle on the same database, migrated again (which changes nothing).
    package func open() throws -> any Stores {
        let other = try Self.open(engine, folder: folder, postgresName: postgresName)
        others.withLock { $0.append(other) }
        return other
    }

    private static func open(_ engine: StorageEngine, folder: TemporaryFolder, postgresName: String) throws -> any Stores {
        switch engine {
        case .sqlite:
            let database = try SQLiteAppDatabase(
                path: folder.url.appendingPathComponent("herald.sqlite").path, migrations: repositoryRoot.appendingPathComponent("migrations"))
            try database.migrate()
            return database
        case .postgres:
            var location = try administration()
            location.database = postgresName
            let database = try PostgresAppDatabase(location: location, migrations: postgresMigrations, connections: 8)
            try database.migrate()
            return database
        }
    }

    package static let postgresMigrations = repositoryRoot.appendingPathComponent("migrations/postgres")

    private static func administration() throws -> PostgresLocation {
        guard let url = StorageEngine.postgresURL else { throw PostgresUnavailable() }
        return try PostgresLocation(url: url)
    }

    /// A statement run in the server's own database, where databases are made and dropped.
    private static func administer(_ sql: String) throws {
        let admin = try PostgresAppDatabase(location: administration(), migrations: postgresMigrations, connections: 1)
        defer { admin.close() }
        try admin.read { try $0.execute(PostgresQuery(unsafeSQL: sql)) }
    }

    deinit {
        for handle in others.withLock({ $0 }) + [stores] { (handle as? PostgresAppDatabase)?.close() }
        if engine == .postgres {
            try? Self.administer("DROP DATABASE IF EXISTS \(postgresName) WITH (FORCE)")
        }
    }
}

package struct PostgresUnavailable: Error, CustomStringConvertible {
    package init() {}

    package var description: String { "HERALD_TEST_POSTGRES_URL is not set: run the tests through Tools/with-postgres.sh (make test does)" }
}

/// Values as both engines keep them, for comparing what was stored with what reads back: instants in whole
/// milliseconds (SQLite's text times parse back to a Double a few ulps from the one written).
package protocol StoredComparable {
    var asStored: Self { get }
}

extension Date: StoredComparable {
    package var asStored: Date { Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded() / 1000) }
}

extension Optional: StoredComparable where Wrapped: StoredComparable {
    package var asStored: Self { map(\.asStored) }
}

extension Array: StoredComparable where Element: StoredComparable {
    package var asStored: Self { map(\.asStored) }
}

extension User: StoredComparable {
    package var asStored: User {
        var user = self
        user.createdAt = createdAt.asStored
        user.updatedAt = updatedAt.asStored
        return user
    }
}

extension Session: StoredComparable {
    package var asStored: Session {
        var session = self
        session.createdAt = createdAt.asStored
        session.lastSeenAt = lastSeenAt.asStored
        session.expiresAt = expiresAt.asStored
        return session
    }
}

extension LoginFailures: StoredComparable {
    package var asStored: LoginFailures { LoginFailures(count: count, first: first.asStored, last: last.asStored) }
}

extension Dictionary: StoredComparable where Value: StoredComparable {
    package var asStored: Self { mapValues(\.asStored) }
}

extension CampaignSummary: StoredComparable {
    package var asStored: CampaignSummary {
        var summary = self
        summary.startAt = startAt.asStored
        summary.endAt = endAt.asStored
        summary.updatedAt = updatedAt.asStored
        return summary
    }
}

extension Installation: StoredComparable {
    package var asStored: Installation {
        var installation = self
        installation.tokenRemovedAt = tokenRemovedAt.asStored
        installation.createdAt = createdAt.asStored
        installation.updatedAt = updatedAt.asStored
        installation.registeredAt = registeredAt.asStored
        return installation
    }
}

/// The repository root, where Templates/, Public/ and migrations/ live: the nearest folder above this
/// file that holds Package.swift, so that moving the tests between folders never changes it.
package let repositoryRoot: URL = {
    var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    var steps = 0
    while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
        steps += 1
        precondition(steps < 16, "no Package.swift in the folders above \(#filePath)")
        folder = folder.deletingLastPathComponent()
    }
    return folder
}()

/// A fresh temporary folder, removed when the value is released.
package final class TemporaryFolder: Sendable {
    package let url: URL

    package init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
