import Foundation
import GRDB
import HeraldDomain

/// A registered app: campaigns, API keys and test devices belong to one.
public struct App: Sendable, Equatable, Identifiable {
    public var id: Int64
    public var name: String
    public var platforms: [Platform]
    public var createdAt: Date
}

extension App: FetchableRecord {
    public init(row: Row) throws {
        id = row["id"]
        name = row["name"]
        let stored: String = row["platforms"]
        platforms = stored.split(separator: ",").compactMap { Platform(rawValue: String($0)) }
        createdAt = row["created_at"]
    }
}

/// The `apps` table.
public struct AppStore: Sendable {
    let pool: DatabasePool

    public func create(name: String, platforms: [Platform], now: Date) throws -> App {
        try pool.write { db in
            if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM apps WHERE name = ? COLLATE NOCASE", arguments: [name])! > 0 {
                throw AppStoreError.nameTaken
            }
            try db.execute(
                sql: "INSERT INTO apps (name, platforms, created_at) VALUES (?, ?, ?)",
                arguments: [name, platforms.map(\.rawValue).joined(separator: ","), now])
            return App(id: db.lastInsertedRowID, name: name, platforms: platforms, createdAt: now)
        }
    }

    public func find(id: Int64) throws -> App? {
        try pool.read { try App.fetchOne($0, sql: "SELECT * FROM apps WHERE id = ?", arguments: [id]) }
    }

    public func all() throws -> [App] {
        try pool.read { try App.fetchAll($0, sql: "SELECT * FROM apps ORDER BY name COLLATE NOCASE") }
    }
}

public enum AppStoreError: Error, Equatable {
    case nameTaken
}
