import Foundation
import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldMicroHTTPD
@testable import HeraldSQLite
import HeraldStorage
import Logging
import TestSupport
import Synchronization

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_790_000_000)) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(_ seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// The real application on a real SQLite file in a temporary folder, called without a socket.
struct TestApp {
    let folder: TemporaryFolder
    let database: SQLiteAppDatabase
    let application: HeraldApplication
    let clock: TestClock

    /// Cheap scrypt parameters: the format and code path are the production ones, only faster.
    static let hasher = PasswordHasher(logRounds: 8)

    /// `configure` changes the configuration before the application is built (the clock and hasher are set
    /// already); `logger` receives what the application logs (by default nothing is kept).
    init(logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
         configure: (inout ConsoleConfiguration) -> Void = { _ in }) async throws {
        folder = try TemporaryFolder()
        clock = TestClock()
        database = try SQLiteAppDatabase(
            path: folder.url.appendingPathComponent("herald.sqlite").path,
            migrations: repositoryRoot.appendingPathComponent("migrations"))
        try database.migrate()
        var configuration = ConsoleConfiguration(resources: repositoryRoot)
        configuration.passwordHasher = Self.hasher
        let clock = clock
        configuration.clock = { clock.now }
        configure(&configuration)
        application = try await HeraldApplication(configuration: configuration, database: database, logger: logger)
    }

    /// The answer as a client receives it: a streamed body is read to its end, as the adapter sends it.
    func respond(_ request: Request) -> Response {
        application.collectedResponse(to: request)
    }

    /// The application behind a real HTTP server on a free loopback port, started; the caller shuts it down.
    func serveOnLoopback() throws -> HTTPServer {
        let application = application
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 2
        let server = HTTPServer(configuration: configuration, logger: Logger(label: "test"), handler: { application.respond(to: $0) })
        try server.start()
        return server
    }

    /// A database in `folder` migrated only as far as the migration files whose names sort before `first`
    /// (such as "0010"): what an earlier Herald left, for tests of the migrations after it.
    static func database(migratedBefore first: String, in folder: TemporaryFolder) throws -> (database: SQLiteAppDatabase, path: String) {
        let old = folder.url.appendingPathComponent("migrations")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        for file in try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("migrations").path) where file < first {
            try FileManager.default.copyItem(at: repositoryRoot.appendingPathComponent("migrations/\(file)"), to: old.appendingPathComponent(file))
        }
        let path = folder.url.appendingPathComponent("herald.sqlite").path
        let database = try SQLiteAppDatabase(path: path, migrations: old)
        try database.migrate()
        return (database, path)
    }

    /// An app written as the earliest schema holds it, for a database of `database(migratedBefore:in:)`:
    /// today's stores write columns an earlier schema does not have yet (the audit lines' arguments, 0022).
    static func insertApp(named name: String, platforms: String = "ios", now: Date, in database: SQLiteAppDatabase) throws -> Int64 {
        try database.pool.write { db in
            try db.execute(sql: "INSERT INTO apps (name, platforms, created_at) VALUES (?, ?, ?)", arguments: [name, platforms, now])
            return db.lastInsertedRowID
        }
    }

    /// A published campaign written as the earliest schema holds it (see `insertApp`), its document today's encoding.
    static func insertCampaign(_ campaign: Campaign, now: Date, in database: SQLiteAppDatabase) throws -> Int64 {
        let document = String(decoding: try CampaignJSON.encoder().encode(campaign), as: UTF8.self)
        return try database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO campaigns (app_id, name, state, layout, priority, started_at, document, revision, created_at, updated_at, updated_by)
                    VALUES (?, ?, 'published', ?, ?, ?, ?, 1, ?, ?, 'command line')
                    """,
                arguments: [campaign.app, campaign.name, campaign.listedLayout, campaign.priority, now, document, now, now])
            return db.lastInsertedRowID
        }
    }

    /// A browser with its own cookie jar.
    func browser(address: String = "10.0.0.1") -> TestBrowser {
        TestBrowser(app: self, address: address)
    }

    /// An app with an admin already set up; returns the signed-in admin's browser.
    static func withAdmin(
        email: String = "admin@example.com", password: String = "correct horse battery",
        configure: (inout ConsoleConfiguration) -> Void = { _ in }
    ) async throws -> (TestApp, TestBrowser) {
        let app = try await TestApp(configure: configure)
        let browser = app.browser()
        let response = try browser.submit(
            "/setup", from: "/setup",
            ["name": "Ada Admin", "email": email, "password": password, "password_confirmation": password])
        precondition(response.status == 303, "setup failed: \(response.status) \(response.text)")
        return (app, browser)
    }

    /// Creates a user directly, with the test hasher.
    func createUser(email: String, role: Role, password: String = "correct horse battery") throws {
        _ = try Accounts(database: database, hasher: Self.hasher).create(
            email: email, name: email, role: role, password: password, actor: .commandLine, now: clock.now)
    }
}

extension HeraldApplication {
    /// The answer as a client receives it: a streamed body is read to its end, as the adapter sends it.
    func collectedResponse(to request: Request) -> Response {
        var response = respond(to: request)
        if let stream = response.stream {
            do {
                response.body = try stream.collect()
            } catch {
                response.body = Array("(the stream failed: \(error))".utf8)
            }
        }
        return response
    }
}

/// Keeps cookies like a browser and knows how to fill a form's CSRF token.
final class TestBrowser: @unchecked Sendable {
    private let application: HeraldApplication
    let address: String
    private(set) var cookies: [String: String] = [:]

    convenience init(app: TestApp, address: String) {
        self.init(application: app.application, address: address)
    }

    /// A browser of an application on any storage engine.
    init(application: HeraldApplication, address: String = "10.0.0.1") {
        self.application = application
        self.address = address
    }

    @discardableResult
    func get(_ target: String, headers: [(String, String)] = []) -> Response {
        send(Request(method: "GET", target: target, headers: HTTPHeaders(headers)))
    }

    /// POSTs `fields` urlencoded, with no CSRF token added.
    @discardableResult
    func post(_ target: String, _ fields: [(String, String)]) -> Response {
        send(Request(
            method: "POST", target: target,
            headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")]),
            body: Array(FormData(fields).urlencoded.utf8)))
    }

    /// Loads `page`, takes its CSRF token, then POSTs `fields` to `target` as the form would.
    func submit(_ target: String, from page: String, _ fields: [String: String]) throws -> Response {
        try submit(target, from: page, pairs: fields.sorted { $0.key < $1.key })
    }

    /// Like `submit`, with repeated names (checkbox groups).
    func submit(_ target: String, from page: String, pairs: [(String, String)]) throws -> Response {
        let form = get(page)
        guard let token = Self.csrfToken(in: form.text) else {
            throw TestFailure("no csrf_token on \(page) (status \(form.status))")
        }
        return post(target, [("csrf_token", token)] + pairs)
    }

    func send(_ request: Request) -> Response {
        var request = request
        request.remoteAddress = address
        if !cookies.isEmpty {
            request.headers.add("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        let response = application.collectedResponse(to: request)
        for header in response.headers.values("Set-Cookie") {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
            if header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return response
    }

    /// Puts a cookie in the jar, as another site or a script on a shared domain could.
    func setCookie(_ name: String, _ value: String) {
        cookies[name] = value
    }

    static func csrfToken(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf_token" value="([^"]+)""#, options: .regularExpression) else { return nil }
        return String(html[range].split(separator: "\"")[3])
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a tool found on the PATH (`/usr/bin/env arguments…`) in the repository to completion; its status
/// and standard output (standard error is dropped).
func runTool(_ arguments: [String]) throws -> (status: Int32, output: Data) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = repositoryRoot
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, data)
}

extension ConsoleConfiguration {
    /// For tests that register hundreds of installations from one address within a minute: the registration
    /// limits are `InstallationTests`' and `RateLimitProperty`'s subject, not theirs.
    mutating func liftRegistrationLimits() {
        registrationLimits.perKey = RegistrationLimitPolicy.allowedLimits.upperBound
        registrationLimits.perAddress = RegistrationLimitPolicy.allowedLimits.upperBound
    }
}
