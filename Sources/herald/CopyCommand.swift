import ArgumentParser
import Foundation
import HeraldConsole
import HeraldPostgres
import HeraldStorage

struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy an SQLite installation into an empty PostgreSQL database.",
        discussion: """
            Every row of every table, in one PostgreSQL transaction: the copy is whole or not made. The SQLite file is only \
            read; stop the server on it first so that nothing changes while it is copied. Push credentials stay sealed with \
            the same key file: give every instance that key (--secret-key). Afterwards serve with --db set to the URL.
            """)

    @Option(help: "The SQLite database to copy (migrated to this version: run herald migrate on it first).")
    var from: String

    @Option(help: "The PostgreSQL database to copy into, postgres://user:password@host:port/database?sslmode=…; it must hold no data.")
    var to: String

    @Option(help: "The folder holding migrations/ (env HERALD_RESOURCES; default: found as herald serve finds it).")
    var resources: String?

    func run() throws {
        let location: PostgresLocation
        do {
            location = try PostgresLocation(url: to)
        } catch {
            throw ValidationError("--to: \(error)")
        }
        guard let folder = resources.map({ URL(fileURLWithPath: $0) })
            ?? ResourceLocator.locate(explicit: ProcessInfo.processInfo.environment["HERALD_RESOURCES"]) else {
            throw ValidationError("Cannot find Herald's migrations/ folder. Run from the repository, or pass --resources.")
        }
        let migrations = folder.appendingPathComponent("migrations")
        let target = try PostgresAppDatabase(location: location, migrations: migrations.appendingPathComponent("postgres"), connections: 2)
        defer { target.close() }
        let report = try PostgresCopy.copy(sqlitePath: from, sqliteMigrations: migrations, to: target) { table, rows in
            print("\(table): \(rows) rows")
        }
        let total = report.tables.map(\.rows).reduce(0, +)
        print("Copied \(total) rows in \(report.tables.count) tables from \(from) to \(location). Serve with --db \(location).")
    }
}
