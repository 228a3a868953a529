import ArgumentParser
import Foundation
import Synchronization
import HeraldConsole
import HeraldStorage

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Write campaigns as Campaign JSON.")

    @OptionGroup var storage: StorageOptions

    @Option(help: "Only this app's campaigns (default: every app).")
    var app: Int64?

    @Option(help: "The file to write (default: standard output).")
    var out: String?

    func run() throws {
        let database = try storage.openDatabase()
        defer { try? database.close() }
        var query = CampaignQuery()
        query.appID = app
        let exported = Mutex(0)
        let stream = CampaignTransfer(database: database).exportStream(query, now: Date()) { count in exported.withLock { $0 = count } }
        // Written a page at a time, like the console's download: memory stays flat for any number of campaigns.
        let file: FileHandle
        if let out {
            guard FileManager.default.createFile(atPath: out, contents: nil), let opened = FileHandle(forWritingAtPath: out) else {
                throw ValidationError("Cannot write \(out): check that its folder exists and is writable.")
            }
            file = opened
        } else {
            file = FileHandle.standardOutput
        }
        while let piece = try stream.next() { try file.write(contentsOf: piece) }
        if let out {
            try file.close()
            FileHandle.standardError.write(Data("Exported \(exported.withLock { $0 }) campaigns to \(out)\n".utf8))
        }
    }
}

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Create the campaigns of a Campaign JSON file as drafts; all or none.")

    @OptionGroup var storage: StorageOptions

    @Argument(help: "A file written by export (or one campaign, or an array of campaigns).")
    var file: String

    @Option(help: "The app the campaigns are created in.")
    var app: Int64

    @Flag(help: "Only check: list what would be created and every problem.")
    var dryRun = false

    func run() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        let database = try storage.openDatabase()
        defer { try? database.close() }
        let transfer = CampaignTransfer(database: database)
        let plan = try transfer.plan(data, appID: app)
        if let unreadable = plan.unreadable { throw ValidationError(unreadable) }
        guard plan.problems.isEmpty else {
            for problem in plan.problems {
                FileHandle.standardError.write(Data("campaign \(problem.campaign) (\(problem.name)): \(problem.path): \(problem.message)\n".utf8))
            }
            throw ValidationError("Nothing was imported: \(plan.problems.count) problem(s) in \(Set(plan.problems.map(\.campaign)).count) campaign(s).")
        }
        if dryRun {
            for campaign in plan.campaigns { print("would create: \(campaign.name) (\(campaign.message.layout.rawValue))") }
            print("\(plan.campaigns.count) campaigns would be created as drafts of app \(app); nothing was imported.")
            return
        }
        let ids = try transfer.apply(plan, actor: .commandLine, now: Date())
        print("Imported \(ids.count) campaigns as drafts of app \(app): \(ids.map(String.init).joined(separator: ", "))")
    }
}

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Seed a demo app: a published campaign of every layout and days of realistic events.")

    @OptionGroup var storage: StorageOptions

    @Option(help: "How many days of events, ending now.")
    var days = 30

    @Option(help: "About how many impressions a campaign gets on a weekday.")
    var dailyImpressions = 400

    func validate() throws {
        guard (1...366).contains(days) else { throw ValidationError("--days must be from 1 to 366.") }
        guard (1...100_000).contains(dailyImpressions) else { throw ValidationError("--daily-impressions must be from 1 to 100000.") }
    }

    func run() throws {
        let database = try storage.openDatabase()
        defer { try? database.close() }
        let summary = try DemoSeeder(database: database).seed(days: days, dailyImpressions: dailyImpressions)
        print("Seeded app \(summary.appID) with \(summary.campaigns) published campaigns and \(summary.events) events over \(days) days. Open /reports to see them.")
    }
}
