import Foundation
import GRDB
import TestSupport
import Testing

/// What an operator meets: the version, the configuration set and its check.
extension CommandLineTests {
    @Test("herald --version prints the number in VERSION and the commit the binary was built from")
    func version() throws {
        let output = try Self.run(["--version"])
        #expect(output.status == 0)
        let number = try String(contentsOf: repositoryRoot.appendingPathComponent("VERSION"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let match = try #require(output.stdout.firstMatch(of: /^herald (\S+) \(commit ([0-9a-f]{40}|unknown)\)\n$/), "\(output.stdout)")
        #expect(String(match.output.1) == number)
        // `make test` builds before it tests, so a checkout's binary names the commit checked out.
        let head = try Self.gitHead()
        #expect(head == nil || String(match.output.2) == head)
    }

    /// `git rev-parse HEAD` of the repository, or nil where git or the repository is missing.
    static func gitHead() throws -> String? {
        let git = try runTool(["git", "-C", repositoryRoot.path, "rev-parse", "HEAD"])
        return git.status == 0 ? String(decoding: git.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }

    @Test("config check: a flag wins over the environment, which wins over the file; the output reads back as a file; passwords masked")
    func configCheck() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("herald.conf")
        try """
            # Herald on the office server
            HERALD_PORT=9090   # the file's
            HERALD_HOST="::1"
            HERALD_THREADS=6
            HERALD_MAX_BODY_BYTES=70000
            HERALD_REGISTRATIONS_PER_ADDRESS=30
            HERALD_DB=postgres://herald:hunter2@db.internal/herald
            HERALD_CONSOLE_HOSTS=Herald.Example.com, console.example.org
            """.write(to: file, atomically: true, encoding: .utf8)
        let output = try Self.run(["config", "check", "--config", file.path, "--threads", "8"], launcher: ["/usr/bin/env", "HERALD_MAX_BODY_BYTES=80000"])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = Set(output.stdout.split(separator: "\n").map(String.init))
        #expect(lines.contains("HERALD_PORT=9090  # configuration file"))
        #expect(lines.contains("HERALD_HOST=::1  # configuration file"))
        #expect(lines.contains("HERALD_THREADS=8  # flag"))
        #expect(lines.contains("HERALD_MAX_BODY_BYTES=80000  # environment"))
        #expect(lines.contains("HERALD_SESSION_LIFETIME=604800  # default"))
        #expect(lines.contains("HERALD_REGISTRATIONS_PER_ADDRESS=30  # configuration file"))
        #expect(lines.contains("HERALD_REGISTRATIONS_PER_KEY=600  # default"))
        #expect(lines.contains("HERALD_DB=postgres://herald:********@db.internal/herald  # configuration file"))
        #expect(lines.contains("HERALD_CONSOLE_HOSTS=\"Herald.Example.com, console.example.org\"  # configuration file"), "\(output.stdout)")
        #expect(!output.stdout.contains("hunter2"))

        // A password holding `@` (and `/`, `:`) unencoded is masked whole, not up to its first `@`.
        let awkward = try Self.run(["config", "check"], launcher: ["/usr/bin/env", "HERALD_DB=postgres://herald:p@ss/w:rd@db.internal/herald"])
        #expect(awkward.status == 0, "\(awkward.stderr)")
        #expect(awkward.stdout.contains("HERALD_DB=postgres://herald:********@db.internal/herald  # environment"), "\(awkward.stdout)")
        #expect(!awkward.stdout.contains("ss/w") && !awkward.stdout.contains("rd@"))

        // What it prints is a configuration file that gives the same configuration.
        let printed = folder.url.appendingPathComponent("printed.conf")
        try output.stdout.replacingOccurrences(of: "********", with: "hunter2").write(to: printed, atomically: true, encoding: .utf8)
        let again = try Self.run(["config", "check", "--config", printed.path])
        #expect(again.status == 0, "\(again.stderr)")
        func values(_ text: String) -> [String] { text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.prefix { $0 != " " }) } }
        #expect(values(again.stdout) == values(output.stdout))
    }

    @Test("Generated configuration files (any script, numbers far out of range, quotes, comments, junk lines, bytes that are not UTF-8): config check answers or refuses with exit 64, never traps, and what it prints reads back as the same configuration")
    func generatedConfigFiles() throws {
        let folder = try TemporaryFolder()
        var generator = SystemRandomNumberGenerator()
        let names = ["HERALD_DB", "HERALD_PORT", "HERALD_HOST", "HERALD_RETENTION_DAYS", "HERALD_SESSION_LIFETIME", "HERALD_LOG_LEVEL",
                     "HERALD_LOG_FORMAT", "HERALD_TRUSTED_PROXIES", "HERALD_MAX_BODY_BYTES", "HERALD_THREADS", "HERALD_X", "herald_port", "HERALD-PORT", ""]
        let values = ["", "8080", "4", "1", "0", "-1", "400", "2147483648", "1180591620717411303424", "0001", "9e9", "+5", " 7 ", "مریم.sqlite",
                      "東京/データ.sqlite", "a b", "\"quoted #x\"", "\"open", "x #c", "#", "\t", "🚀", "debug", "json", "::1", "10.0.0.0/8, 127.0.0.1",
                      "a\"b", "\"\"", "'single'", String(repeating: "z", count: 2000), "ünïcödé", "\u{202E}rtl"]
        var answered = 0
        for run in 0..<120 {
            let lines = (0..<Int.random(in: 0...6, using: &generator)).map { _ -> String in
                let name = names.randomElement(using: &generator)!, value = values.randomElement(using: &generator)!
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: return "# \(value)"
                case 1: return ""
                case 2: return "  \(name) =  \(value)  "
                case 3: return name
                case 4: return "=\(value)"
                default: return "\(name)=\(value)"
                }
            }
            let file = folder.url.appendingPathComponent("generated-\(run).conf")
            var bytes = Array(lines.joined(separator: Bool.random(using: &generator) ? "\n" : "\r\n").utf8)
            if run % 20 == 19 { bytes.insert(contentsOf: [0xFF, 0xFE, 0xC3], at: bytes.count / 2) }
            try Data(bytes).write(to: file)
            let input = lines.joined(separator: " | ")
            let output = try Self.run(["config", "check", "--config", file.path])
            #expect(output.status == 0 || output.status == 64, "exit \(output.status) for \(input.prefix(300)): \(output.stderr.prefix(300))")
            guard output.status == 0 else {
                #expect(output.stderr.hasPrefix("Error: "), "\(input.prefix(300)): \(output.stderr.prefix(300))")
                continue
            }
            answered += 1
            // What it prints is a configuration file that gives the same values (its notes say where each came from).
            let printed = folder.url.appendingPathComponent("printed-\(run).conf")
            try output.stdout.write(to: printed, atomically: true, encoding: .utf8)
            let again = try Self.run(["config", "check", "--config", printed.path])
            #expect(again.status == 0, "\(input.prefix(300)) printed \(output.stdout.prefix(600)) which reads back as \(again.stderr.prefix(300))")
            func settings(_ text: String) -> [String] {
                text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
                    String(line[..<(line.range(of: "  # ", options: .backwards)?.lowerBound ?? line.endIndex)])
                }
            }
            #expect(settings(again.stdout) == settings(output.stdout), "\(input.prefix(300))")
        }
        #expect(answered >= 12, "the round trip was tried \(answered) times of 120")
    }

    @Test("config check and serve refuse a misspelt name, a malformed line, a value out of range, each saying where")
    func configRefusals() throws {
        let folder = try TemporaryFolder()
        let cases: [(String, String)] = [
            ("HERALD_PROT=8080", "HERALD_PROT is not a setting of herald serve"),
            ("HERALD_PORT 8080", "line 1: expected HERALD_NAME=value"),
            ("herald_port=8080", "is not a setting name"),
            ("HERALD_PORT=99999", "must be from 0 to 65535, not 99999"),
            ("HERALD_THREADS=many", "HERALD_THREADS must be a whole number"),
            ("HERALD_SESSION_LIFETIME=5", "must be from 60 to 31536000"),
            ("HERALD_REGISTRATIONS_PER_KEY=0", "The installation registrations a minute per key must be from 1 to 1000000, not 0"),
            ("HERALD_SECURE_COOKIES=perhaps", "HERALD_SECURE_COOKIES must be 1 or 0"),
            ("HERALD_HOST=\"::1", "opens a quote and does not close it"),
            ("HERALD_PORT=1\nHERALD_PORT=2", "line 2: HERALD_PORT is set a second time"),
            ("HERALD_PORT=1\r\nHERALD_PORT=2", "line 2: HERALD_PORT is set a second time"),
            ("HERALD_DB=a\u{7}b.sqlite", "the value of HERALD_DB holds the control character U+7"),
            ("HERALD_DB=my \"file\" copy.sqlite", "the value of HERALD_DB holds a double quote"),
            ("HERALD_CONSOLE_HOSTS=herald.example.com, https://herald.example.com", "A console host is a host name such as herald.example.com"),
            ("HERALD_CONSOLE_HOSTS=herald.example.com:8443", "not herald.example.com:8443"),
        ]
        for (index, (text, reason)) in cases.enumerated() {
            let file = folder.url.appendingPathComponent("\(index).conf")
            try text.write(to: file, atomically: true, encoding: .utf8)
            for command in [["config", "check"], ["serve", "--db", folder.url.appendingPathComponent("h.sqlite").path]] {
                let output = try Self.run(command + ["--config", file.path])
                #expect(output.status == 64, "\(command) \(text)")
                #expect(output.stderr.contains(reason), "\(command) \(text): \(output.stderr)")
            }
        }
        let missing = try Self.run(["migrate", "--config", folder.url.appendingPathComponent("none.conf").path])
        #expect(missing.status == 64 && missing.stderr.contains("Cannot read the configuration file"), "\(missing.stderr)")
    }

    @Test("serve runs with what the configuration file says: its body cap refuses a larger body with 413")
    func serveTakesTheFile() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("herald.conf")
        try "HERALD_MAX_BODY_BYTES=65536\n".write(to: file, atomically: true, encoding: .utf8)
        let server = try Server(database: folder.url.appendingPathComponent("h.sqlite").path, arguments: ["--config", file.path])
        defer { _ = server.stop() }
        let big = try RawHTTPConnection(port: UInt16(server.port))
        big.send("POST /api/v1/events HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n")
        #expect(try big.readReply().status == 413)
        let small = try RawHTTPConnection(port: UInt16(server.port))
        small.send("POST /api/v1/events HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n" + String(repeating: " ", count: 60000))
        #expect(try small.readReply().status != 413)
    }
}

extension CommandLineTests {
    @Test("A request's id is on its error page, in its X-Request-Id, and on its log line, in logfmt and in JSON", arguments: ["logfmt", "json"])
    func requestIDLeadsToTheLogLine(format: String) throws {
        let folder = try TemporaryFolder()
        let logFile = folder.url.appendingPathComponent("herald.log")
        #expect(FileManager.default.createFile(atPath: logFile.path, contents: nil))
        let log = try FileHandle(forWritingTo: logFile)
        let db = folder.url.appendingPathComponent("h.sqlite").path
        // With a user, pages are pages (before, every page leads to the set-up form).
        #expect(try Self.run(["user", "create", "--db", db, "--email", "ops@example.com", "--role", "admin", "--password-stdin"], input: "correct horse battery\n").status == 0)
        let server = try Server(database: db, arguments: ["--log-format", format], log: log)
        let connection = try RawHTTPConnection(port: UInt16(server.port))
        connection.send("GET /no/such/page HTTP/1.1\r\nHost: t\r\nAccept-Language: de\r\n\r\n")
        let reply = try connection.readReply()
        #expect(reply.status == 404)
        let id = try #require(reply.headers["x-request-id"])
        #expect(reply.text.contains("<code>\(id)</code>"), "the page shows it")
        #expect(server.stop() == 0)  // the log is flushed before the process exits
        let lines = try String(contentsOf: logFile, encoding: .utf8).split(separator: "\n").map(String.init)
        let line = try #require(lines.first { $0.contains(id) }, "\(lines)")
        if format == "json" {
            for each in lines { #expect((try? JSONSerialization.jsonObject(with: Data(each.utf8))) != nil, "\(each)") }
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
            #expect(object["request_id"] == id && object["path"] == "/no/such/page" && object["status"] == "404" && object["level"] == "info")
        } else {
            #expect(line.contains("level=info") && line.contains("path=/no/such/page") && line.contains("status=404") && line.contains("request_id=\(id)"))
        }
    }
}

extension CommandLineTests {
    @Test("herald restore puts a checked backup in place, keeps the replaced file aside, and refuses a damaged or foreign file, a newer database, and a running server")
    func restore() throws {
        let folder = try TemporaryFolder()
        let db = folder.url.appendingPathComponent("herald.sqlite").path
        #expect(try Self.run(["app", "create", "--db", db, "--name", "Before", "--platform", "web"]).status == 0)
        let backup = folder.url.appendingPathComponent("backup.sqlite").path
        #expect(try Self.run(["backup", "--db", db, "--to", backup]).status == 0)
        #expect(try Self.run(["app", "create", "--db", db, "--name", "After", "--platform", "web"]).status == 0)

        // Refused: a file that is no database, an SQLite file that is not Herald's, a newer Herald's, each changing nothing
        let junk = folder.url.appendingPathComponent("junk.sqlite")
        try Data(repeating: 0x42, count: 8192).write(to: junk)
        let foreign = folder.url.appendingPathComponent("foreign.sqlite").path
        try DatabaseQueue(path: foreign).write { try $0.execute(sql: "CREATE TABLE notes (text TEXT)") }
        let newer = folder.url.appendingPathComponent("newer.sqlite").path
        try FileManager.default.copyItem(atPath: backup, toPath: newer)
        try DatabaseQueue(path: newer).write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_future')") }
        for (file, says) in [(junk.path, "not a Herald backup"), (foreign, "not Herald's"), (newer, "9999_future")] {
            let refused = try Self.run(["restore", "--db", db, "--from", file])
            #expect(refused.status != 0 && refused.stderr.contains(says), "\(file): \(refused.stderr)")
        }
        func apps(_ path: String) throws -> [String] {
            try DatabaseQueue(path: path).read { try String.fetchAll($0, sql: "SELECT name FROM apps ORDER BY id") }
        }
        #expect(try apps(db) == ["Before", "After"])

        // Refused while a server runs on the database
        let server = try Server(database: db)
        let busy = try Self.run(["restore", "--db", db, "--from", backup])
        #expect(busy.status != 0 && busy.stderr.contains("A server is running on"), "\(busy.stderr)")
        #expect(server.stop() == 0)

        // Restored once it has stopped: the backup's data, the replaced file kept aside
        let restored = try Self.run(["restore", "--db", db, "--from", backup])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try apps(db) == ["Before"])
        let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).first { $0.hasPrefix("herald.sqlite.before-restore-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") })
        #expect(try apps(folder.url.appendingPathComponent(aside).path) == ["Before", "After"])
        // And a server starts on it
        let again = try Server(database: db)
        #expect(again.stop() == 0)
    }
}
