import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` (the version from `VERSION` and the commit the sources are at) into the target
/// it is applied to, by running `Tools/build-info.sh`, so `herald --version` and the System page say which
/// build is running. The command runs again when the script, the version file or the checked-out commit
/// changes (the files under `.git` that name it).
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("BuildInfo.swift")
        let versionFile = package.appendingPathComponent("VERSION")
        let script = package.appendingPathComponent("Tools/build-info.sh")
        return [
            .buildCommand(
                displayName: "Writing the version and commit of \(target.name)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [script.path, package.path, output.path],
                inputFiles: [script, versionFile] + GitFiles.naming(package: package),
                outputFiles: [output]
            ),
        ]
    }
}

/// The files whose change means another commit is checked out: `HEAD`, the branch file it points to and
/// `packed-refs`, in the repository's own folder or, for a worktree, the one `.git` names.
enum GitFiles {
    static func naming(package: URL) -> [URL] {
        let dotGit = package.appendingPathComponent(".git")
        var gitFolder = dotGit
        if let link = try? String(contentsOf: dotGit, encoding: .utf8), link.hasPrefix("gitdir:") {
            gitFolder = URL(fileURLWithPath: link.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: package)
        }
        var common = gitFolder
        if let path = try? String(contentsOf: gitFolder.appendingPathComponent("commondir"), encoding: .utf8) {
            common = URL(fileURLWithPath: path.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: gitFolder)
        }
        let head = gitFolder.appendingPathComponent("HEAD")
        var files = [head, common.appendingPathComponent("packed-refs")]
        if let text = try? String(contentsOf: head, encoding: .utf8), text.hasPrefix("ref:") {
            files.append(common.appendingPathComponent(text.dropFirst("ref:".count).trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        return files.filter { FileManager.default.fileExists(atPath: $0.path) }
    }
}
