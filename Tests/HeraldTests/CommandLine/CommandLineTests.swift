import Crypto
import Foundation
import GRDB
import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldMicroHTTPD
@testable import HeraldSQLite
import HeraldStorage
import Logging
import Synchronization
import TestSupport
import Testing

/// The built `herald` binary, run as an operator would. `make test` builds it before the tests.
@Suite("herald command line", .serialized)
struct CommandLineTests {
    static let binary = repositoryRoot.appendingPathComponent(".build/debug/herald")

    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
        var lastWord: String { stdout.split(whereSeparator: \.isWhitespace).last.map(String.init) ?? "" }
    }

    /// Runs `herald arguments` to completion, or stops it after two minutes; `launcher` (a command and its
    /// arguments) runs it, if given.
    static func run(_ arguments: [String], input: String? = nil, launcher: [String] = []) throws -> Output {
        let process = Process()
        launch(process, arguments, launcher: launcher)
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { [weak process] in
            if let process, process.isRunning { process.terminate() }
        }
        process.currentDirectoryURL = repositoryRoot
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    private static func launch(_ process: Process, _ arguments: [String], launcher: [String]) {
        if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = launcher.dropFirst() + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
    }

    /// A running `herald serve` on a free port.
    final class Server {
        let process = Process()
        let port: Int

        /// `log` receives its standard error (by default nothing keeps it).
        init(database: String, arguments: [String] = [], launcher: [String] = [], log: FileHandle = .nullDevice) throws {
            CommandLineTests.launch(process, ["serve", "--db", database, "--port", "0"] + arguments, launcher: launcher)
            process.currentDirectoryURL = repositoryRoot
            let stdout = Pipe()
            process.standardOutput = stdout
            process.standardError = log
            try process.run()
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = stdout.fileHandleForReading.availableData
                if chunk.isEmpty { throw TestFailure("herald serve exited before printing its URL") }
                line.append(chunk)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let match = text.firstMatch(of: /http:\/\/127\.0\.0\.1:(\d+)\//), let port = Int(match.output.1) else {
                throw TestFailure("no URL in: \(text)")
            }
            self.port = port
        }

        /// Stops it with SIGTERM; its exit status, or nil when it had not exited 20 s later (it is killed then).
        func stop() -> Int32? {
            process.terminate()
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return process.terminationReason == .exit ? process.terminationStatus : nil
        }

        deinit {
            if process.isRunning { process.terminate() }
        }
    }

    @Test("Every command has --help")
    func help() throws {
        for command in [[], ["serve"], ["migrate"], ["user", "create"], ["app", "create"], ["app", "origin", "add"], ["app", "origin", "remove"], ["app", "origin", "list"], ["key", "create"], ["device", "add"], ["export"], ["import"], ["demo"], ["simulate"], ["backup"], ["routes"], ["config", "check"]] {
            let output = try Self.run(command + ["--help"])
            #expect(output.status == 0, "\(command)")
            #expect(output.stdout.contains("USAGE"), "\(command)")
        }
    }

    @Test("user, app and key create print what scripts need as the last word")
    func administration() throws {
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("data/herald.sqlite").path
        let latest = try #require(try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("migrations").path)
            .filter { $0.hasSuffix(".sql") }.sorted().last?.dropLast(4))
        #expect(try Self.run(["migrate", "--db", db]).stdout.contains("at migration \(latest) "))

        let user = try Self.run(["user", "create", "--db", db, "--email", "ops@example.com", "--role", "admin", "--password-stdin"],
                                input: "a long enough password\n")
        #expect(user.status == 0, "\(user.stderr)")
        let short = try Self.run(["user", "create", "--db", db, "--email", "x@example.com", "--role", "viewer", "--password-stdin"], input: "short\n")
        #expect(short.status != 0)
        #expect(short.stderr.contains("Use at least 10 characters for the password."))

        let app = try Self.run(["app", "create", "--db", db, "--name", "Shop", "--platform", "ios", "--platform", "android"])
        #expect(app.status == 0, "\(app.stderr)")
        #expect(Int(app.lastWord) != nil)

        let key = try Self.run(["key", "create", "--db", db, "--app", app.lastWord, "--scope", "feed:read", "--scope", "events:write"])
        #expect(key.status == 0, "\(key.stderr)")
        #expect(key.lastWord.hasPrefix("hrld_"))
        let badScope = try Self.run(["key", "create", "--db", db, "--app", app.lastWord, "--scope", "everything"])
        #expect(badScope.status != 0)

        let device = try Self.run(["device", "add", "--db", db, "--app", app.lastWord, "--installation", "iid-42", "--name", "QA phone"])
        #expect(device.status == 0, "\(device.stderr)")
        #expect(device.stdout.contains("QA phone (iid-42)"))
        let again = try Self.run(["device", "add", "--db", db, "--app", app.lastWord, "--installation", "iid-42", "--name", "Again"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already a test device"))

        let routes = try Self.run(["routes", "--db", db])
        #expect(routes.stdout.contains("/users"))
        #expect(routes.stdout.contains("admin"))
    }

    @Test("app push: credentials checked and stored sealed (the key file beside the database, never the secret in it), settings set, mistakes refused")
    func push() throws {
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        let app = try Self.run(["app", "create", "--db", db, "--name", "Shop", "--platform", "ios"]).lastWord
        let key = P256.Signing.PrivateKey().pemRepresentation
        let keyFile = folder.url.appendingPathComponent("AuthKey.p8")
        try Data(key.utf8).write(to: keyFile)

        let set = try Self.run(["app", "push", "--db", db, "--app", app, "--apns-key", keyFile.path, "--apns-key-id", "ABC123DEFG",
                                "--apns-team-id", "DEF123GHIJ", "--apns-topic", "com.example.shop", "--daily-cap", "3", "--refresh-on-change", "on", "--refresh-every", "45"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("key ABC123DEFG of team DEF123GHIJ"))
        #expect(set.stdout.contains("daily cap 3, silent refresh on in-app changes on, at most every 45 min"))
        #expect(FileManager.default.fileExists(atPath: db + ".key"))
        let stored = try Data(contentsOf: URL(fileURLWithPath: db)) + ((try? Data(contentsOf: URL(fileURLWithPath: db + "-wal"))) ?? Data())
        let body = key.split(separator: "\n").dropFirst().first.map(String.init) ?? key
        #expect(stored.range(of: Data(body.utf8)) == nil, "the key is not in the database in the clear")

        let foreignKeyFile = folder.url.appendingPathComponent("secp256k1.p8")
        try Data(OpenSSLKeys.secp256k1.utf8).write(to: foreignKeyFile)
        let everyMistake = ["--apns-key", foreignKeyFile.path, "--apns-key-id", "short", "--apns-team-id", "team", "--apns-topic", " "]
        for (arguments, words) in [(["--apns-key", keyFile.path, "--apns-key-id", "short", "--apns-team-id", "DEF123GHIJ", "--apns-topic", "x"], "not 10 letters"),
                                   (everyMistake, "is on the secp256k1 (1.3.132.0.10) curve"), (everyMistake, "team id “team”"), (everyMistake, "topic is empty"),
                                   (["--apns-key", keyFile.path], "needs all four"), (["--daily-cap", "0"], "1 to 100"), (["--refresh-on-change", "yes"], "on or off"), (["--refresh-every", "0"], "1 to 1440"), (["--refresh-every", "1441"], "1 to 1440"),
                                   (["--fcm-service-account", keyFile.path], "not a JSON object")] {
            let refused = try Self.run(["app", "push", "--db", db, "--app", app] + arguments)
            #expect(refused.status != 0, "\(arguments)")
            #expect(refused.stderr.contains(words), "\(arguments): \(refused.stderr)")
        }
    }

    @Test("app origin add, list and remove: origins stored as browsers write them, mistakes and unknown apps refused with what is wrong")
    func origins() throws {
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        let app = try Self.run(["app", "create", "--db", db, "--name", "Shop", "--platform", "web"]).lastWord

        // Given two origins added as people type them
        let added = try Self.run(["app", "origin", "add", "--db", db, "--app", app, "HTTPS://Shop.Example.com:443/"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("https://shop.example.com"))
        #expect(try Self.run(["app", "origin", "add", "--db", db, "--app", app, "http://localhost:3000"]).status == 0)

        // Then the list prints them one per line, as stored
        let listed = try Self.run(["app", "origin", "list", "--db", db, "--app", app])
        #expect(listed.status == 0)
        #expect(listed.stdout == "http://localhost:3000\nhttps://shop.example.com\n")

        // And mistakes are refused with what is wrong, and nothing is stored
        for (origin, words) in [("http://shop.example.com", "http:// is allowed only for localhost"), ("https://shop.example.com", "already allowed"),
                                ("https://shop.example.com/cart", "no path, query or fragment")] {
            let refused = try Self.run(["app", "origin", "add", "--db", db, "--app", app, origin])
            #expect(refused.status != 0, "\(origin)")
            #expect(refused.stderr.contains(words), "\(origin): \(refused.stderr)")
        }
        let noApp = try Self.run(["app", "origin", "add", "--db", db, "--app", "999", "https://x.example"])
        #expect(noApp.status != 0)
        #expect(noApp.stderr.contains("There is no app with id 999."))

        // When one is removed (named as typed), the list no longer has it; removing it again says so
        let removed = try Self.run(["app", "origin", "remove", "--db", db, "--app", app, "https://SHOP.example.com"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try Self.run(["app", "origin", "list", "--db", db, "--app", app]).stdout == "http://localhost:3000\n")
        let again = try Self.run(["app", "origin", "remove", "--db", db, "--app", app, "https://shop.example.com"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("https://shop.example.com is not an allowed origin of app \(app)."))

        // And each change is in the audit log, made by the command line
        let database = try DatabaseQueue(path: db)
        let lines = try database.read { try Row.fetchAll($0, sql: "SELECT action, actor, details FROM audit_log WHERE action LIKE 'origin.%' ORDER BY id") }
        #expect(lines.map { [$0["action"], $0["actor"], $0["details"]] as [String] } == [
            ["origin.add", "command line", "https://shop.example.com"], ["origin.add", "command line", "http://localhost:3000"],
            ["origin.remove", "command line", "https://shop.example.com"],
        ])
    }

    @Test("backup makes a valid copy while the server runs, and SIGTERM stops the server with exit 0 within 10 s")
    func backupWhileServingAndStop() throws {
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        let server = try Server(database: db)
        #expect(try Self.run(["app", "create", "--db", db, "--name", "Live", "--platform", "web"]).status == 0)

        let copy = folder.url.appendingPathComponent("backup.sqlite").path
        let backup = try Self.run(["backup", "--db", db, "--to", copy])
        #expect(backup.status == 0, "\(backup.stderr)")
        let queue = try DatabaseQueue(path: copy)
        let (integrity, apps) = try queue.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check"), try String.fetchAll(db, sql: "SELECT name FROM apps"))
        }
        #expect(integrity == "ok")
        #expect(apps == ["Live"])

        let health = try RawHTTPConnection(port: UInt16(server.port))
        health.send("GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try health.readReply().status == 200)

        let stopAsked = Date()
        server.process.terminate()
        server.process.waitUntilExit()
        #expect(Date().timeIntervalSince(stopAsked) < 10)
        #expect(server.process.terminationReason == .exit)
        #expect(server.process.terminationStatus == 0)
    }

    /// `source.sqlite` in `folder` with an app made by `herald app create` and `campaigns` of that app stored in
    /// `state`; returns the database's path and the app's id as printed.
    static func database(in folder: TemporaryFolder, state: CampaignState, campaigns: (Int64) -> [Campaign]) throws -> (path: String, app: String) {
        let source = folder.url.appendingPathComponent("source.sqlite").path
        let app = try run(["app", "create", "--db", source, "--name", "Shop", "--platform", "ios"]).lastWord
        let database = try SQLiteAppDatabase(path: source, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try database.migrate()
        for campaign in campaigns(Int64(app) ?? 0) {
            _ = try database.campaigns.create(campaign, state: state, actor: .commandLine, now: Date())
        }
        try database.close()
        return (source, app)
    }

    @Test("herald export then herald import into a fresh database gives the same messages and data")
    func exportImport() throws {
        let folder = try TemporaryFolder()
        let (source, app) = try Self.database(in: folder, state: .published, campaigns: TransferTests.samples)

        let file = folder.url.appendingPathComponent("campaigns.json").path
        let export = try Self.run(["export", "--db", source, "--app", app, "--out", file])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr.contains("Exported 6 campaigns"))

        let target = folder.url.appendingPathComponent("target.sqlite").path
        let targetApp = try Self.run(["app", "create", "--db", target, "--name", "Fresh", "--platform", "web"]).lastWord
        let dryRun = try Self.run(["import", file, "--db", target, "--app", targetApp, "--dry-run"])
        #expect(dryRun.stdout.contains("6 campaigns would be created"))
        let imported = try Self.run(["import", file, "--db", target, "--app", targetApp])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Imported 6 campaigns"))

        let again = try Self.run(["export", "--db", target])
        let before = try CampaignJSON.decoder().decode(CampaignExport.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
        let after = try CampaignJSON.decoder().decode(CampaignExport.self, from: Data(again.stdout.utf8))
        #expect(Set(after.campaigns.map { "\($0.name)|\($0.message)|\($0.data)" }) == Set(before.campaigns.map { "\($0.name)|\($0.message)|\($0.data)" }))
        #expect(after.campaigns.allSatisfy { $0.status == .draft })

        let broken = folder.url.appendingPathComponent("broken.json").path
        try Data(#"[{"app": 1, "name": "x", "message": {"layout": "card", "backgroundColor": "nope"}}]"#.utf8).write(to: URL(fileURLWithPath: broken))
        let refused = try Self.run(["import", broken, "--db", target, "--app", targetApp])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("campaign 1 (x): message.backgroundColor"))
    }

    @Test("herald export, import into a fresh database and export again keep a campaign with language versions byte for byte")
    func versionsByteForByte() throws {
        // Given a draft with versions in six languages
        let folder = try TemporaryFolder()
        let (source, app) = try Self.database(in: folder, state: .draft) { [TransferTests.versioned(app: $0)] }

        // When it is exported, imported into a fresh database's app, and exported from there
        let file = folder.url.appendingPathComponent("campaigns.json").path
        #expect(try Self.run(["export", "--db", source, "--app", app, "--out", file]).status == 0)
        let target = folder.url.appendingPathComponent("target.sqlite").path
        let targetApp = try Self.run(["app", "create", "--db", target, "--name", "Shop", "--platform", "ios"]).lastWord
        let imported = try Self.run(["import", file, "--db", target, "--app", targetApp])
        #expect(imported.status == 0, "\(imported.stderr)")
        let again = try Self.run(["export", "--db", target, "--app", targetApp])

        // Then the campaigns are the same bytes; only the export time differs
        func campaigns(_ text: String) -> Substring { text[(text.range(of: #""campaigns":["#)?.lowerBound ?? text.endIndex)...] }
        let before = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!campaigns(before).isEmpty && campaigns(before).contains("حراج بهاره"))
        #expect(Array(campaigns(again.stdout).utf8) == Array(campaigns(before).utf8))
    }

    @Test("herald demo seeds a published campaign of every layout with days of events")
    func demo() throws {
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        let output = try Self.run(["demo", "--db", db, "--days", "3", "--daily-impressions", "40"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("6 published campaigns"))
        let queue = try DatabaseQueue(path: db)
        let (layouts, types, days, languages) = try queue.read { db in
            (Set(try String.fetchAll(db, sql: "SELECT layout FROM campaigns WHERE state = 'published'")),
             Set(try String.fetchAll(db, sql: "SELECT DISTINCT type FROM event_rollups")),
             try Int.fetchOne(db, sql: "SELECT COUNT(DISTINCT day) FROM event_rollups") ?? 0,
             try Row.fetchAll(db, sql: """
                SELECT c.layout, r.language FROM event_language_rollups r JOIN campaigns c ON c.id = r.campaign_id
                WHERE r.type = 'impression' GROUP BY 1, 2
                """).map { "\($0["layout"] as String) \($0["language"] as String)" })
        }
        #expect(layouts == Set(Message.Layout.allCases.map(\.rawValue)))
        #expect(types == ["impression", "click", "dismiss", "error", "conversion"])
        #expect(days >= 3)
        // The card has Persian, Arabic, German and Japanese versions; its other devices (and every other campaign's) see the default
        #expect(Set(languages) == Set(["card ", "card ar", "card de", "card fa", "card ja"] + Message.Layout.allCases.filter { $0 != .card }.map { "\($0.rawValue) " }))
    }

    /// `herald simulate`'s last line.
    struct SimulationSummary: Decodable {
        let impressions, clicks, dismissals, errors, conversions, pushesReceived, pushOpens, sessions, registrations: Int
        let discards: [String: Int]
    }

    @Test("herald simulate: devices use the full pipeline (images from a local server, one failing; sessions) against a server, whose stats equal the simulator's summary")
    func simulate() throws {
        // Given three published campaigns: "once" on app_launch, "always" on a filtered purchase with an image
        // the image server has, and "always" on level_complete with an image it answers 404 for
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        let app = try Self.run(["app", "create", "--db", db, "--name", "Shop", "--platform", "ios", "--platform", "android"]).lastWord
        let key = try Self.run(["key", "create", "--db", db, "--app", app, "--scope", "feed:read", "--scope", "events:write"]).lastWord
        let setup = try SQLiteAppDatabase(path: db, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try setup.migrate()
        let once = try setup.campaigns.create(
            Campaign(app: Int64(app)!, name: "Welcome", triggers: [Trigger(event: "app_launch")], frequency: Frequency(type: .once),
                     message: Message(layout: .banner, title: .init(text: "Welcome"),
                                      translations: ["fa": .init(title: .init(text: "خوش آمدید")), "ja": .init(title: .init(text: "ようこそ"))])),
            state: .published, actor: .commandLine, now: Date())
        let always = try setup.campaigns.create(
            Campaign(app: Int64(app)!, name: "Big spender", priority: 2,
                     triggers: [Trigger(event: "purchase", filters: [PropertyFilter(property: "value", op: .gte, value: .number(20))])],
                     frequency: Frequency(type: .always),
                     message: Message(layout: .modal, title: .init(text: "Thanks"), imageUrl: "https://img.example/thanks.png",
                                      primaryAction: .init(text: "More", url: "https://example.com"))),
            state: .published, actor: .commandLine, now: Date())
        let broken = try setup.campaigns.create(
            Campaign(app: Int64(app)!, name: "Broken image", priority: 1, triggers: [Trigger(event: "level_complete")],
                     frequency: Frequency(type: .always),
                     message: Message(layout: .imageOnly, imageUrl: "https://img.example/missing.png")),
            state: .published, actor: .commandLine, now: Date())
        try setup.apps.setMinInterval(appID: Int64(app)!, seconds: 1, actor: .commandLine, now: Date())
        try setup.close()
        let server = try Server(database: db)
        let images = try ImageServer(["/thanks.png"])
        defer { images.server.shutdown(gracePeriod: .zero) }

        // When 8 devices use the app for 4 seconds, with sessions that end after 1 s in the background
        let run = try Self.run([
            "simulate", "--url", "http://127.0.0.1:\(server.port)", "--key", key, "--devices", "8", "--seconds", "4",
            "--images-from", "http://127.0.0.1:\(images.server.port)", "--session-timeout", "1",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try JSONDecoder().decode(SimulationSummary.self, from: Data((run.stdout.split(separator: "\n").last ?? "").utf8))

        // Then the server's counts equal what the devices reported
        let database = try SQLiteAppDatabase(path: db, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try database.migrate()
        let counts = try database.events.counts(campaignID: nil, from: "2000-01-01", to: "2100-01-01")
        func total(_ type: EventType) -> Int { counts.rows.filter { $0.type == type }.map(\.count).reduce(0, +) }
        #expect(summary.impressions == total(.impression))
        #expect(summary.clicks == total(.click))
        #expect(summary.dismissals == total(.dismiss))
        #expect(summary.errors == total(.error))
        #expect(summary.conversions == total(.conversion))
        #expect(summary.impressions > 0)
        #expect(summary.sessions >= 8, "every device begins a session when it starts")
        // And without a push campaign no push event was sent, so none was stored against these in-app campaigns
        #expect(summary.pushesReceived == 0 && summary.pushOpens == 0)
        #expect(!counts.rows.contains { $0.type.channel == .push }, "\(counts.rows.filter { $0.type.channel == .push })")
        // And the failing image discarded its messages, each reported as an image_fetch error of its campaign only
        let fetchErrors = counts.rows.filter { $0.type == .error && $0.detail == "image_fetch" }
        #expect((summary.discards["image_fetch"] ?? 0) > 0, "\(summary.discards)")
        #expect(fetchErrors.map(\.count).reduce(0, +) > 0)
        #expect(fetchErrors.allSatisfy { $0.campaignID == broken })
        #expect(!counts.rows.contains { $0.campaignID == broken && $0.type == .impression })
        // And the working image came from the local server, and its campaign showed
        #expect(images.requested.contains("/thanks.png"))
        #expect(counts.rows.contains { $0.campaignID == always && $0.type == .impression })
        // And the "once" campaign showed at most once per device
        let perDevice = try database.pool.read { db in
            try Int.fetchAll(db, sql: "SELECT COUNT(*) FROM events WHERE campaign_id = ? AND type = 'impression' GROUP BY installation_id", arguments: [once])
        }
        #expect(perDevice.allSatisfy { $0 <= 1 })
        // And its devices in Persian and Japanese reported those versions; the others, in languages it has no version for, the default
        let languages = try database.pool.read { db in
            Set(try String?.fetchAll(db, sql: "SELECT DISTINCT language FROM events WHERE campaign_id = ?", arguments: [once]))
        }
        #expect(languages == [nil, "fa", "ja"])
        try database.close()
    }

    @Test("herald simulate registers each device with a token derived from its id, then has a push campaign received by all and opened by the fraction asked")
    func simulatePushes() throws {
        // Given a push campaign, and an in-app campaign that follows it when it is opened
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        let app = try Self.run(["app", "create", "--db", db, "--name", "Shop", "--platform", "ios", "--platform", "android"]).lastWord
        let key = try Self.run(["key", "create", "--db", db, "--app", app, "--scope", "feed:read", "--scope", "events:write"]).lastWord
        let appID = try #require(Int64(app))
        let setup = try SQLiteAppDatabase(path: db, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try setup.migrate()
        let push = try setup.campaigns.create(
            Campaign(app: appID, name: "Sale push", push: PushNotification(title: "Sale")), state: .published, actor: .commandLine, now: Date())
        let followUp = try setup.campaigns.create(
            Campaign(app: appID, name: "After the push",
                     triggers: [Trigger(event: "push_click", filters: [PropertyFilter(property: "campaign_id", op: .eq, value: .number(Double(push)))])],
                     frequency: Frequency(type: .always), message: Message(layout: .modal, title: .init(text: "Welcome back"))),
            state: .published, actor: .commandLine, now: Date())
        try setup.close()
        let server = try Server(database: db)
        let url = "http://127.0.0.1:\(server.port)"
        let database = try SQLiteAppDatabase(path: db, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try database.migrate()
        func pushEvents() throws -> (received: Int, opened: Int) {
            let counts = try database.events.counts(campaignID: push, from: "2000-01-01", to: "2100-01-01")
            let rows = counts.rows
            return (rows.filter { $0.type == .pushReceived }.map(\.count).reduce(0, +), rows.filter { $0.type == .pushOpen }.map(\.count).reduce(0, +))
        }

        // When 10 devices register with APNs
        let registering = try Self.run(["simulate", "--url", url, "--key", key, "--devices", "10", "--seconds", "1", "--seed", "7", "--push-provider", "apns"])
        #expect(registering.status == 0, "\(registering.stderr)")
        let registered = try JSONDecoder().decode(SimulationSummary.self, from: Data((registering.stdout.split(separator: "\n").last ?? "").utf8))
        // Then each is an installation whose token is its id's bytes in hex, padded to an APNs token's 64 digits
        #expect(registered.registrations == 10)
        let page = try database.installations.withTokens(appID: appID, provider: .apns, pageSize: 100).installations
        #expect(Set(page.map(\.installationID)) == Set((0..<10).map { "sim-7-\($0)" }))
        #expect(page.allSatisfy { installation in
            let hex = installation.installationID.utf8.map { String(format: "%02x", $0) }.joined()
            return installation.pushToken == hex + String(repeating: "0", count: 64 - hex.count) && installation.notificationsAllowed
        })
        #expect(Set(page.compactMap(\.timeZone)).count == 6, "devices live in six time zones")
        let before = try pushEvents()

        // When the same devices receive the push campaign and 30 % open it
        let opening = try Self.run([
            "simulate", "--url", url, "--key", key, "--devices", "10", "--seconds", "1", "--seed", "7", "--push-campaign", String(push), "--open-pushes", "0.3",
        ])
        #expect(opening.status == 0, "\(opening.stderr)")
        let opened = try JSONDecoder().decode(SimulationSummary.self, from: Data((opening.stdout.split(separator: "\n").last ?? "").utf8))
        // Then every device reported the push received and exactly three opened it, as the server stored
        #expect(opened.pushesReceived == 10 && opened.pushOpens == 3)
        let after = try pushEvents()
        #expect(after.received - before.received == 10 && after.opened - before.opened == 3)
        #expect(try database.installations.counts(appID: appID).installations == 10, "the second run's devices are the first run's installations")
        // And opening it fired push_click: the follow-up showed (or failed to) on the devices that opened it
        #expect(try database.events.counts(campaignID: followUp, from: "2000-01-01", to: "2100-01-01").rows.contains { $0.type == .impression || $0.type == .error })
        try database.close()

        // And the options are checked
        let refused = try Self.run(["simulate", "--url", url, "--key", key, "--open-pushes", "0.5"])
        #expect(refused.status != 0 && refused.stderr.contains("--open-pushes needs --push-campaign"))
        #expect(try Self.run(["simulate", "--url", url, "--key", key, "--push-campaign", "1", "--open-pushes", "1.5"]).status != 0)
    }

    /// A local image server for `herald simulate --images-from`: a few bytes of PNG for `paths`, 404 for the rest.
    final class ImageServer: Sendable {
        final class Log: Sendable {
            let paths = Mutex<[String]>([])
        }

        let server: HTTPServer
        let log = Log()

        /// The paths asked for, in order.
        var requested: [String] { log.paths.withLock { $0 } }

        init(_ paths: Set<String>) throws {
            var configuration = HTTPServerConfiguration()
            configuration.port = 0
            configuration.threads = 2
            let log = self.log
            server = HTTPServer(configuration: configuration, logger: Logger(label: "images"), handler: { request in
                log.paths.withLock { $0.append(request.path ?? "") }
                guard let path = request.path, paths.contains(path) else { return Response(status: 404) }
                return Response(status: 200, headers: HTTPHeaders([("Content-Type", "image/png")]), body: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            })
            try server.start()
        }
    }

    @Test("A database from a newer Herald is refused with a clear message")
    func newerDatabase() throws {
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        #expect(try Self.run(["migrate", "--db", db]).status == 0)
        let queue = try DatabaseQueue(path: db)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_future')") }
        try queue.close()
        let refused = try Self.run(["serve", "--db", db, "--port", "0"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("migrated by a newer Herald"))
    }
}
