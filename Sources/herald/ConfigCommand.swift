import ArgumentParser
import Foundation

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Check Herald's configuration.", subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the configuration herald serve would run with, and where each value comes from; secrets masked.",
            discussion: "Takes the same options as serve. The output is itself a configuration file (HERALD_NAME=value lines). Exits with 64 and the reason when a setting is refused.")

        @OptionGroup var storage: StorageOptions
        @OptionGroup var options: ServeOptions

        func run() throws {
            let settings = try storage.settings()
            _ = try options.resolve(storage: storage, settings: settings)
            if let file = settings.filePath { print("# configuration file: \(file)") }
            print(settings.report())
        }
    }
}
