import Foundation
import PackagePlugin

/// Writes `EnglishCatalog.swift` (the sentences of `Locales/en.json` a target says in English) into the target
/// it is applied to, by running `Tools/english-catalog.swift`, so English is written only in the catalog. The
/// command runs again when the catalog or the script changes.
@main
struct EnglishCatalog: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EnglishCatalog.swift")
        let catalog = package.appendingPathComponent("Locales/en.json")
        let script = package.appendingPathComponent("Tools/english-catalog.swift")
        return [
            .buildCommand(
                displayName: "Writing the English sentences of \(target.name) from en.json",
                executable: try context.tool(named: "swift").url,
                arguments: [script.path, catalog.path, output.path] + (try Self.sections(of: target)),
                inputFiles: [script, catalog],
                outputFiles: [output]
            ),
        ]
    }

    /// The catalog sections whose sentences `target` says without a catalog at hand: HeraldDomain the
    /// validation problems (`ProblemText`), HeraldConsole also the errors its JSON API and command line
    /// answer (`Phrase`).
    static func sections(of target: Target) throws -> [String] {
        switch target.name {
        case "HeraldDomain": ["validation"]
        case "HeraldConsole": ["errors", "validation"]
        default: throw PluginError.noSections(target: target.name)
        }
    }

    enum PluginError: Error, CustomStringConvertible {
        case noSections(target: String)

        var description: String {
            switch self {
            case .noSections(let target): "EnglishCatalog: no catalog sections are named for the target \(target)"
            }
        }
    }
}
