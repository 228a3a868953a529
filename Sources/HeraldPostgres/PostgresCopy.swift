import Foundation
import HeraldSQLite
import HeraldStorage
import GRDB
import Logging
import NIOCore
import NIOFoundationCompat
import PostgresNIO

/// Moves an SQLite installation into an empty PostgreSQL database (`herald copy`): every row of every
/// table the two schemas share, in one PostgreSQL transaction, so the copy is whole or not there at all.
///
/// The PostgreSQL schema mirrors SQLite's table by table and column by column, which is what lets the
/// copy be written once instead of once per table: each column's value is converted to the type the
/// PostgreSQL column has (SQLite's 0/1 to boolean, its text times to timestamptz, blobs to bytea), and a
/// column or table one side has and the other lacks stops the copy before anything is written.
public enum PostgresCopy {
    /// How many rows each table received, in the order they were copied.
    public struct Report: Sendable, Equatable {
        public var tables: [(name: String, rows: Int)]

        public static func == (lhs: Report, rhs: Report) -> Bool {
            lhs.tables.map(\.name) == rhs.tables.map(\.name) && lhs.tables.map(\.rows) == rhs.tables.map(\.rows)
        }
    }

    public enum CopyError: Error, CustomStringConvertible, Equatable {
        case sourceNotCurrent(applied: Int, known: Int)
        case targetNotEmpty(table: String, rows: Int)
        case schemasDiffer(table: String, detail: String)
        case unreadable(table: String, column: String, value: String)

        public var description: String {
            switch self {
            case .sourceNotCurrent(let applied, let known):
                "copy: the SQLite database has \(applied) of this version's \(known) migrations; run `herald migrate --db FILE` first. Nothing was copied."
            case .targetNotEmpty(let table, let rows):
                "copy: the PostgreSQL database already holds data (\(rows) rows in \(table)); copy into an empty database. Nothing was copied."
            case .schemasDiffer(let table, let detail):
                "copy: the two schemas differ at \(table): \(detail). Nothing was copied."
            case .unreadable(let table, let column, let value):
                "copy: \(table).\(column) holds \"\(value)\", which PostgreSQL's column cannot take. Nothing was copied."
            }
        }
    }

    /// Tables whose rows the target makes for itself when it is migrated, replaced by the source's: the
    /// feed generation's single row, and the signing key (so cookies and form tokens signed before still verify).
    static let replacedOnCopy: Set<String> = ["feed_generation", "server_secrets"]
    /// PostgreSQL's tables that SQLite does not have, each filled from what was copied: `event_ids` decides
    /// once per app which events count, across the monthly partitions SQLite does not have.
    static let derivedOnCopy: [String: PostgresQuery] = [
        "event_ids": "INSERT INTO event_ids (app_id, occurred_at, id, received_at) SELECT app_id, occurred_at, id, received_at FROM events",
    ]
    /// PostgreSQL's tables that SQLite does not have and that end a copy empty: the installations'
    /// count changes its trigger appended as they were copied, which the counts copied already hold.
    static let emptiedOnCopy: Set<String> = ["installation_profile_changes"]
    /// Tables that are not Herald's data.
    static let notCopied: Set<String> = ["herald_migrations", "grdb_migrations", "sqlite_sequence"]

    /// Copies `sqlitePath` (migrated to this version's last migration, not changed) into `target`, which is
    /// migrated here and must hold no data. `progress` hears each table as it finishes.
    public static func copy(
        sqlitePath: String, sqliteMigrations: URL, to target: PostgresAppDatabase, progress: (String, Int) -> Void = { _, _ in }
    ) throws -> Report {
        let known = try SQLiteAppDatabase.checkBackup(path: sqlitePath, migrations: sqliteMigrations)
        let knownCount = try FileManager.default.contentsOfDirectory(atPath: sqliteMigrations.path).filter { $0.hasSuffix(".sql") }.count
        guard known == knownCount else { throw CopyError.sourceNotCurrent(applied: known, known: knownCount) }
        try target.migrate()

        var configuration = Configuration()
        configuration.readonly = true
        let source = try DatabaseQueue(path: sqlitePath, configuration: configuration)
        defer { try? source.close() }

        return try source.read { sqlite in
            try target.write { postgres in
                let tables = try copyOrder(postgres)
                for table in tables where !replacedOnCopy.contains(table) {
                    let rows = try postgres.one("SELECT count(*) FROM \(unescaped: quoted(table))", as: Int64.self) ?? 0
                    if rows > 0 { throw CopyError.targetNotEmpty(table: table, rows: Int(rows)) }
                }
                let sqliteTables = Set(try String.fetchAll(sqlite, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
                    .subtracting(notCopied).filter { !$0.hasPrefix("sqlite_") }
                let missing = sqliteTables.subtracting(tables)
                guard missing.isEmpty else {
                    throw CopyError.schemasDiffer(table: missing.sorted().joined(separator: ", "), detail: "in SQLite, not in PostgreSQL")
                }
                let unexplained = Set(tables).subtracting(sqliteTables).subtracting(derivedOnCopy.keys).subtracting(emptiedOnCopy)
                guard unexplained.isEmpty else {
                    throw CopyError.schemasDiffer(table: unexplained.sorted().joined(separator: ", "), detail: "in PostgreSQL, not in SQLite")
                }
                var report = Report(tables: [])
                for table in tables where sqliteTables.contains(table) {
                    if table == "events" { try makeEventPartitions(from: sqlite, in: postgres) }
                    let count = try copy(table: table, from: sqlite, to: postgres)
                    report.tables.append((table, count))
                    progress(table, count)
                }
                for table in tables {
                    guard let fill = derivedOnCopy[table] else { continue }
                    let count = try postgres.changes(fill)
                    report.tables.append((table, count))
                    progress(table, count)
                }
                for table in emptiedOnCopy.sorted() { _ = try postgres.changes("DELETE FROM \(unescaped: quoted(table))") }
                try restartIdentities(tables: tables, in: postgres)
                return report
            }
        }
    }

    /// PostgreSQL's tables, each after the tables it references, partitions left to their parent.
    private static func copyOrder(_ postgres: PostgresSession) throws -> [String] {
        let names = try postgres.all(
            """
            SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
            ORDER BY c.relname
            """, as: String.self
        ).filter { !notCopied.contains($0) }
        let references = try postgres.rows(
            """
            SELECT child.relname::text, parent.relname::text FROM pg_constraint k
            JOIN pg_class child ON child.oid = k.conrelid JOIN pg_class parent ON parent.oid = k.confrelid
            WHERE k.contype = 'f'
            """)
        var needs: [String: Set<String>] = [:]
        for row in references {
            let (child, parent) = try row.decode((String, String).self)
            if child != parent { needs[child, default: []].insert(parent) }
        }
        var ordered: [String] = []
        var placed = Set<String>()
        // Names are few (tens): placing whatever has its references placed, until all are, is plenty.
        while ordered.count < names.count {
            let ready = names.filter { !placed.contains($0) && needs[$0, default: []].isSubset(of: placed) }
            guard !ready.isEmpty else {
                throw CopyError.schemasDiffer(table: names.filter { !placed.contains($0) }.joined(separator: ", "), detail: "references form a cycle")
            }
            ordered += ready
            placed.formUnion(ready)
        }
        return ordered
    }

    /// The monthly partitions of `events` that the copied events go to (the months of their receipt).
    private static func makeEventPartitions(from sqlite: GRDB.Database, in postgres: PostgresSession) throws {
        for month in try String.fetchAll(sqlite, sql: "SELECT DISTINCT substr(received_at, 1, 7) FROM events") {
            guard let start = Date.fromDatabaseValue("\(month)-01 00:00:00.000".databaseValue) else {
                throw CopyError.unreadable(table: "events", column: "received_at", value: month)
            }
            try postgres.execute("SELECT herald_events_partition(\(start))")
        }
    }

    private struct Column {
        let name: String
        /// PostgreSQL's name of the column's type (`int8`, `text`, `timestamptz`, `bool`, `bytea`, `date`, …).
        let type: String
    }

    private static func copy(table: String, from sqlite: GRDB.Database, to postgres: PostgresSession) throws -> Int {
        let columns = try postgres.rows(
            """
            SELECT a.attname::text, t.typname::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
            WHERE a.attrelid = \(quoted(table))::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
            """
        ).map { row in
            let (name, type) = try row.decode((String, String).self)
            return Column(name: name, type: type)
        }
        let sqliteColumns = Set(try sqlite.columns(in: table).map(\.name))
        let postgresColumns = Set(columns.map(\.name))
        guard sqliteColumns == postgresColumns else {
            let onlySQLite = sqliteColumns.subtracting(postgresColumns).sorted(), onlyPostgres = postgresColumns.subtracting(sqliteColumns).sorted()
            throw CopyError.schemasDiffer(
                table: table, detail: "columns only in SQLite: \(onlySQLite.joined(separator: ", ")); only in PostgreSQL: \(onlyPostgres.joined(separator: ", "))")
        }
        if replacedOnCopy.contains(table) { try postgres.execute("DELETE FROM \(unescaped: quoted(table))") }

        // A statement's parameters are limited to 65,535: a batch stays well under that.
        let rowsPerStatement = max(1, 20_000 / columns.count)
        let names = columns.map { quoted($0.name) }.joined(separator: ", ")
        let cursor = try Row.fetchCursor(sqlite, sql: "SELECT \(names) FROM \(quoted(table))")
        var batch: [Row] = []
        var copied = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            var bindings = PostgresBindings(capacity: batch.count * columns.count)
            var tuples: [String] = []
            for row in batch {
                var placeholders: [String] = []
                for (index, column) in columns.enumerated() {
                    try bind(row[index], as: column, of: table, into: &bindings)
                    placeholders.append("$\(bindings.count)::\(column.type)")
                }
                tuples.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            try postgres.execute(
                PostgresQuery(unsafeSQL: "INSERT INTO \(quoted(table)) (\(names)) VALUES \(tuples.joined(separator: ", "))", binds: bindings))
            copied += batch.count
            batch.removeAll(keepingCapacity: true)
        }
        while let row = try cursor.next() {
            batch.append(row.copy())
            if batch.count == rowsPerStatement { try flush() }
        }
        try flush()
        return copied
    }

    /// Binds one SQLite value as the PostgreSQL column's type.
    private static func bind(_ value: DatabaseValue, as column: Column, of table: String, into bindings: inout PostgresBindings) throws {
        func unreadable() -> CopyError { .unreadable(table: table, column: column.name, value: String(describing: value).prefix(80).description) }
        if value.isNull {
            bindings.appendNull()
            return
        }
        switch (column.type, value.storage) {
        case ("bool", .int64(let number)):
            guard number == 0 || number == 1 else { throw unreadable() }
            bindings.append(number == 1)
        case ("int8", .int64(let number)), ("int4", .int64(let number)), ("int2", .int64(let number)):
            bindings.append(number)
        case ("float8", .double(let number)):
            bindings.append(number)
        case ("float8", .int64(let number)):
            bindings.append(Double(number))
        case ("timestamptz", _):
            guard let date = Date.fromDatabaseValue(value) else { throw unreadable() }
            bindings.append(date.storedPrecision)
        case ("bytea", .blob(let data)):
            bindings.append(ByteBuffer(data: data))
        case ("bytea", .string(let text)):
            // Text PostgreSQL keeps as bytes because it may hold NUL (an event's URL).
            bindings.append(ByteBuffer(string: text))
        case ("text", .string(let text)), ("date", .string(let text)):
            // PostgreSQL's text cannot hold NUL, which SQLite's can.
            guard !text.unicodeScalars.contains("\u{0}") else { throw unreadable() }
            bindings.append(text)
        default:
            throw unreadable()
        }
    }

    /// Identity columns continue after the highest copied id, so the next row made on PostgreSQL does not collide.
    private static func restartIdentities(tables: [String], in postgres: PostgresSession) throws {
        for table in tables {
            let hasID = try postgres.one(
                "SELECT count(*) FROM pg_attribute WHERE attrelid = \(quoted(table))::regclass AND attname = 'id' AND NOT attisdropped",
                as: Int64.self) == 1
            guard hasID, let sequence = try postgres.one("SELECT pg_get_serial_sequence(\(quoted(table)), 'id')", as: String?.self) ?? nil
            else { continue }
            try postgres.execute(
                "SELECT setval(\(sequence)::regclass, coalesce((SELECT max(id) FROM \(unescaped: quoted(table))), 0) + 1, false)")
        }
    }

    /// A table or column name as an SQL identifier, whatever it holds (names come from the catalogs).
    private static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
