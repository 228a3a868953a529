import ArgumentParser
import Foundation
import HeraldConsole
import HeraldPostgres
import HeraldSQLite
import HeraldStorage
import Logging

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald: a self-hosted console for in-app messaging and push campaigns.",
        version: "herald \(HeraldBuild.version) (commit \(HeraldBuild.commit))",
        subcommands: [Serve.self, Migrate.self, UserCommand.self, AppCommand.self, KeyCommand.self, DeviceCommand.self, ExportCommand.self, ImportCommand.self, DemoCommand.self, SimulateCommand.self, Backup.self, RoutesCommand.self, ConfigCommand.self, RestoreCommand.self, CopyCommand.self],
        defaultSubcommand: Serve.self)
}

/// Options every command takes.
struct StorageOptions: ParsableArguments {
    @Option(help: "A configuration file of HERALD_NAME=value lines, the environment variables' names (env HERALD_CONFIG); the environment wins over it, a flag over both. herald config check prints what serve would use.")
    var config: String?

    @Option(help: "The SQLite database file, or a PostgreSQL database as postgres://user:password@host:port/database?sslmode=… (env HERALD_DB; default ./data/herald.sqlite).")
    var db: String?

    @Option(help: "The folder holding Templates/, Public/, Locales/, migrations/ and Clients/web/ (env HERALD_RESOURCES; default: found from the working directory, then beside the executable, then in ../share/herald from it).")
    var resources: String?

    @Option(help: "The file holding the key that seals push credentials in the database, made (mode 0600) when missing; keep it with backups, apart from the database (env HERALD_SECRET_KEY; default: the database's path + .key).")
    var secretKey: String?

    /// A configuration file that cannot be read or is malformed stops every command before it starts.
    func validate() throws {
        _ = try settings()
    }

    /// A reader of this command's settings: flags, environment, configuration file, defaults.
    func settings() throws -> SettingsReader {
        let reader = try SettingsReader(configFile: config)
        let database = reader.text(db, "HERALD_DB", default: Self.defaultDatabase) ?? Self.defaultDatabase
        _ = reader.text(resources, "HERALD_RESOURCES", default: ResourceLocator.locate(explicit: nil)?.path ?? "(not found)")
        // With PostgreSQL there is no file to put the key beside: it must be named (`requireSecretKey`).
        _ = reader.text(secretKey, "HERALD_SECRET_KEY", default: PostgresLocation.isPostgresURL(database) ? "" : database + ".key")
        return reader
    }

    static let defaultDatabase = "./data/herald.sqlite"

    /// The environment with the configuration file under it (checked whole by `validate()` before any
    /// command runs, so reading it again here cannot meet a malformed file unless it changed meanwhile).
    private func lookup(_ name: String) -> String? {
        (try? SettingsReader(configFile: config))?.lookup(name) ?? ProcessInfo.processInfo.environment[name]
    }

    var databasePath: String {
        db ?? lookup("HERALD_DB") ?? Self.defaultDatabase
    }

    /// The PostgreSQL server `--db` names, or nil for an SQLite file.
    func postgresLocation() throws -> PostgresLocation? {
        guard PostgresLocation.isPostgresURL(databasePath) else { return nil }
        do {
            return try PostgresLocation(url: databasePath)
        } catch {
            throw ValidationError("--db / HERALD_DB: \(error)")
        }
    }

    /// Where the data is, for messages: the file's path, or the server's URL without its password.
    var shownDatabase: String {
        (try? postgresLocation())?.map(\.description) ?? databasePath
    }

    /// The box that seals and opens stored push credentials: the named key file, or the one beside an SQLite file.
    func secretBox() -> SecretBox {
        SecretBox(keyFile: namedSecretKey ?? databasePath + ".key")
    }

    private var namedSecretKey: String? {
        (secretKey ?? lookup("HERALD_SECRET_KEY")).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Refuses to go on with PostgreSQL and no key file named: every instance must open what the others
    /// sealed, so none may make a key of its own.
    func requireSecretKey() throws {
        guard namedSecretKey == nil, try postgresLocation() != nil else { return }
        throw ValidationError("With a PostgreSQL database, name the key file that seals push credentials (--secret-key or HERALD_SECRET_KEY): every instance needs the same one.")
    }

    func resourcesFolder() throws -> URL {
        if let resources { return URL(fileURLWithPath: resources) }
        guard let found = ResourceLocator.locate(explicit: lookup("HERALD_RESOURCES")) else {
            throw ValidationError("Cannot find Herald's Templates/, Public/ and migrations/ folders. Run from the repository, or pass --resources.")
        }
        return found
    }

    /// Opens the database (an SQLite file, or PostgreSQL for a postgres:// URL) and applies pending migrations.
    func openDatabase() throws -> any HeraldDatabase {
        let migrations = try resourcesFolder().appendingPathComponent("migrations")
        let database: any HeraldDatabase
        if let location = try postgresLocation() {
            database = try PostgresAppDatabase(location: location, migrations: migrations.appendingPathComponent("postgres"))
        } else {
            database = try SQLiteAppDatabase(path: databasePath, migrations: migrations)
        }
        try database.migrate()
        return database
    }

    /// Opens the SQLite file for a command that works on files only (`backup`, `restore`).
    func openSQLiteDatabase(for command: String) throws -> SQLiteAppDatabase {
        guard try postgresLocation() == nil else {
            throw ValidationError("herald \(command) works on an SQLite file; for PostgreSQL use its own tools (pg_dump, pg_basebackup).")
        }
        let database = try SQLiteAppDatabase(path: databasePath, migrations: try resourcesFolder().appendingPathComponent("migrations"))
        try database.migrate()
        return database
    }
}

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations.")

    @OptionGroup var storage: StorageOptions

    func run() throws {
        let database = try storage.openDatabase()
        let applied = try database.appliedMigrations()
        print("\(storage.shownDatabase) is at migration \(applied.last ?? "none") (\(applied.count) applied).")
        try database.close()
    }
}

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the database to a file with SQLite's online backup; safe while the server runs.")

    @OptionGroup var storage: StorageOptions

    @Option(help: "Where to write the copy. An existing file is replaced.")
    var to: String

    func run() throws {
        let database = try storage.openSQLiteDatabase(for: "backup")
        if FileManager.default.fileExists(atPath: to) { try FileManager.default.removeItem(atPath: to) }
        try database.backup(to: to)
        try database.close()
        print("Backed up \(storage.databasePath) to \(to)")
    }
}

struct RoutesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "routes", abstract: "List every route and who may reach it.")

    @OptionGroup var storage: StorageOptions

    func run() async throws {
        let database = try storage.openDatabase()
        let application = try await HeraldApplication(
            configuration: ConsoleConfiguration(resources: try storage.resourcesFolder()), database: database,
            logger: Logger(label: "herald"))
        for route in application.routeTable {
            let width = application.routeTable.map(\.pattern.count).max() ?? 0
            print(route.method.padding(toLength: 8, withPad: " ", startingAt: 0)
                + route.pattern.padding(toLength: width + 2, withPad: " ", startingAt: 0) + route.access)
        }
        try database.close()
    }
}
