import Foundation
import HeraldDomain
@testable import HeraldPostgres
@testable import HeraldSQLite
@testable import HeraldStorage
import PostgresNIO
import Synchronization
import Testing

/// The database engines the storage contract runs on: SQLite always; PostgreSQL when
/// `HERALD_TEST_POSTGRES_URL` names a server whose user may create databases (`make test` starts one with
/// Tools/with-postgres.sh).
enum StorageEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static let postgresURL = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// Every engine this run can reach.
    static var available: [StorageEngine] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    var testDescription: String { rawValue }
}

/// One test's database on one engine: made empty and migrated, removed when released. `open()` gives
/// another handle on the same database, as a second process (or instance) would have.
final class EngineDatabase: Sendable {
    let engine: StorageEngine
    private let folder: TemporaryFolder
    private let postgresName: String
    let stores: any Stores
    private let others = Mutex<[any Stores]>([])

    init(_ engine: StorageEngine) throws {
        self.engine = engine
        folder = try TemporaryFolder()
        postgresName = "herald_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        if engine == .postgres {
            try Self.administer("CREATE DATABASE \(postgresName)")
        }
        stores = try Self.open(engine, folder: folder, postgresName: postgresName)
    }

    /// Another connection pool or file handle on the same database, migrated again (which changes nothing).
    func open() throws -> any Stores {
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

    static let postgresMigrations = repositoryRoot.appendingPathComponent("migrations/postgres")

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

struct PostgresUnavailable: Error, CustomStringConvertible {
    var description: String { "HERALD_TEST_POSTGRES_URL is not set: run the tests through Tools/with-postgres.sh (make test does)" }
}

/// Values as both engines keep them, for comparing what was stored with what reads back: instants in whole
/// milliseconds (SQLite's text times parse back to a Double a few ulps from the one written).
protocol StoredComparable {
    var asStored: Self { get }
}

extension Date: StoredComparable {
    var asStored: Date { Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded() / 1000) }
}

extension Optional: StoredComparable where Wrapped: StoredComparable {
    var asStored: Self { map(\.asStored) }
}

extension Array: StoredComparable where Element: StoredComparable {
    var asStored: Self { map(\.asStored) }
}

extension User: StoredComparable {
    var asStored: User {
        var user = self
        user.createdAt = createdAt.asStored
        user.updatedAt = updatedAt.asStored
        return user
    }
}

extension Session: StoredComparable {
    var asStored: Session {
        var session = self
        session.createdAt = createdAt.asStored
        session.lastSeenAt = lastSeenAt.asStored
        session.expiresAt = expiresAt.asStored
        return session
    }
}

extension LoginFailures: StoredComparable {
    var asStored: LoginFailures { LoginFailures(count: count, first: first.asStored, last: last.asStored) }
}

extension Dictionary: StoredComparable where Value: StoredComparable {
    var asStored: Self { mapValues(\.asStored) }
}

extension CampaignSummary: StoredComparable {
    var asStored: CampaignSummary {
        var summary = self
        summary.startAt = startAt.asStored
        summary.endAt = endAt.asStored
        summary.updatedAt = updatedAt.asStored
        return summary
    }
}

extension Installation: StoredComparable {
    var asStored: Installation {
        var installation = self
        installation.tokenRemovedAt = tokenRemovedAt.asStored
        installation.createdAt = createdAt.asStored
        installation.updatedAt = updatedAt.asStored
        installation.registeredAt = registeredAt.asStored
        return installation
    }
}

extension EngineDatabase {
    /// A published campaign of `appID`, for the event contract.
    func makeCampaign(appID: Int64, name: String, now: Date = StorageContractTests.start) throws -> Int64 {
        try stores.campaigns.create(
            Campaign(app: appID, name: name, message: Message(layout: .modal, title: .init(text: name))),
            state: .published, actor: .commandLine, now: now)
    }
}
