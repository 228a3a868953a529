import ArgumentParser
import Foundation
import HeraldConsole
import HeraldStorage
import Logging

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald: a self-hosted console for in-app messaging campaigns.",
        subcommands: [Serve.self, Migrate.self, UserCommand.self, AppCommand.self, KeyCommand.self, DeviceCommand.self, ExportCommand.self, ImportCommand.self, DemoCommand.self, SimulateCommand.self, Backup.self, RoutesCommand.self],
        defaultSubcommand: Serve.self)
}

/// Options every command takes.
struct StorageOptions: ParsableArguments {
    @Option(help: "The SQLite database file (env HERALD_DB; default ./data/herald.sqlite).")
    var db: String?

    @Option(help: "The folder holding Templates/, Public/, Locales/, migrations/ and Clients/web/ (env HERALD_RESOURCES; default: found from the working directory).")
    var resources: String?

    @Option(help: "The file holding the key that seals push credentials in the database, made (mode 0600) when missing; keep it with backups, apart from the database (env HERALD_SECRET_KEY; default: the database's path + .key).")
    var secretKey: String?

    var databasePath: String {
        db ?? ProcessInfo.processInfo.environment["HERALD_DB"] ?? "./data/herald.sqlite"
    }

    /// The box that seals and opens stored push credentials.
    func secretBox() -> SecretBox {
        SecretBox(keyFile: secretKey ?? ProcessInfo.processInfo.environment["HERALD_SECRET_KEY"] ?? databasePath + ".key")
    }

    func resourcesFolder() throws -> URL {
        if let resources { return URL(fileURLWithPath: resources) }
        guard let found = ResourceLocator.locate() else {
            throw ValidationError("Cannot find Herald's Templates/, Public/ and migrations/ folders. Run from the repository, or pass --resources.")
        }
        return found
    }

    /// Opens the database and applies pending migrations.
    func openDatabase() throws -> AppDatabase {
        let database = try AppDatabase(path: databasePath, migrations: try resourcesFolder().appendingPathComponent("migrations"))
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
        print("\(storage.databasePath) is at migration \(applied.last ?? "none") (\(applied.count) applied).")
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
        let database = try storage.openDatabase()
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
