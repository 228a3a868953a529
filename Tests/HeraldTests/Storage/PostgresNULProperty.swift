import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Logging
import TestSupport
import Testing
@testable import HeraldConsole

/// PostgreSQL's text cannot hold U+0000, which SQLite stores like any character: a NUL in the login email
/// was an anonymous 500 on PostgreSQL and a 401 on SQLite. Every text field of the forms and the API gets
/// text with a NUL somewhere (form fields, query parameters, path segments, JSON strings as `\u0000`), and
/// the same request goes to Herald on each engine: PostgreSQL answers as SQLite does, never a 500.
@Suite("Generated inputs: NUL in text on PostgreSQL", .enabled(if: StorageEngine.postgresURL != nil))
struct PostgresNULProperty {
    /// Herald on one engine, with an admin signed in, an app, and a key that may do everything.
    struct Instance {
        let storage: EngineDatabase
        let application: HeraldApplication
        let admin: TestBrowser
        let visitor: TestBrowser
        let appID: Int64
        let key: String

        init(_ engine: StorageEngine) async throws {
            storage = try EngineDatabase(engine)
            let database = try #require(storage.stores as? any HeraldDatabase)
            var configuration = ConsoleConfiguration(resources: repositoryRoot)
            configuration.passwordHasher = TestApp.hasher
            configuration.liftRegistrationLimits()
            application = try await HeraldApplication(
                configuration: configuration, database: database, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            admin = TestBrowser(application: application)
            let password = "correct horse battery"
            let setUp = try admin.submit("/setup", from: "/setup", [
                "name": "Ada Admin", "email": "admin@example.com", "password": password, "password_confirmation": password,
            ])
            #expect(setUp.status == 303, "setup on \(engine): \(setUp.status)")
            visitor = TestBrowser(application: application, address: "10.0.0.2")
            let registry = AppRegistry(database: database)
            let shop = try registry.createApp(name: "Shop", platforms: [.ios, .web], actor: .commandLine, now: Date())
            appID = shop.id
            key = try registry.createKey(appID: appID, name: "all", scopes: APIScope.allCases, actor: .commandLine, now: Date()).secret
        }

        func api(_ method: String, _ target: String, json: Any? = nil) -> Response {
            let body = json.flatMap { try? JSONSerialization.data(withJSONObject: $0) }.map(Array.init) ?? []
            return application.collectedResponse(to: Request(
                method: method, target: target,
                headers: HTTPHeaders([("Authorization", "Bearer \(key)")] + (json == nil ? [] : [("Content-Type", "application/json")])),
                body: body))
        }
    }

    /// Every place text from outside reaches the database.
    enum Place: CaseIterable {
        case loginEmail, loginPassword, setupAgain, newAppName, newUserEmail, newUserName, accountName, keyName
        case consoleSearch, apiSearch, campaignName, campaignDescription, campaignDataValue
        case installationID, installationAppVersion, installationLanguage, installationTimeZone, installationToken, erasedInstallation
        case eventInstallationID, eventType, eventURL, eventLanguage, eventCampaign, feedInstallation
    }

    /// Text with a NUL at a drawn place: alone, at an end, or inside text from every plane.
    static func withNUL(_ draw: inout Draw) -> String {
        var scalars = Array(GeneratedText.valid(&draw, maxPieces: 3, maxCharacters: 30).unicodeScalars)
        if draw.chance(0.1) { scalars = [] }
        scalars.insert("\u{0}", at: draw.int(0...scalars.count))
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    static func send(_ place: Place, _ text: String, to herald: Instance) throws -> Response {
        let encoded = PercentEncoding.encode(text)
        let installation = "/api/v1/installations/"
        switch place {
        case .loginEmail:
            return try herald.visitor.submit("/login", from: "/login", ["email": text, "password": "correct horse battery"])
        case .loginPassword:
            return try herald.visitor.submit("/login", from: "/login", ["email": "admin@example.com", "password": text])
        case .setupAgain:
            return try herald.visitor.submit("/setup", from: "/login", ["name": "Eve", "email": text, "password": "x", "password_confirmation": "x"])
        case .newAppName:
            return try herald.admin.submit("/apps", from: "/apps/new", pairs: [("name", text), ("platforms", "ios")])
        case .newUserEmail, .newUserName:
            let email = place == .newUserEmail ? text : "new@example.com", name = place == .newUserName ? text : "New"
            return try herald.admin.submit("/users", from: "/users/new", ["email": email, "name": name, "role": "editor", "password": "correct horse battery"])
        case .accountName:
            return try herald.admin.submit("/account", from: "/account", ["name": text, "language": "en", "time_zone": "UTC"])
        case .keyName:
            return try herald.admin.submit("/apps/\(herald.appID)/keys", from: "/apps/\(herald.appID)", pairs: [("name", text), ("scopes", "feed:read")])
        case .consoleSearch:
            return herald.admin.get("/campaigns?q=\(encoded)")
        case .apiSearch:
            return herald.api("GET", "/api/v1/campaigns?q=\(encoded)")
        case .campaignName, .campaignDescription, .campaignDataValue:
            var campaign: [String: Any] = ["app": herald.appID, "name": place == .campaignName ? text : "Sale",
                                           "message": ["layout": "banner", "title": ["text": "Hi"]] as [String: Any]]
            if place == .campaignDescription { campaign["description"] = text }
            if place == .campaignDataValue { campaign["data"] = ["coupon": text] }
            return herald.api("POST", "/api/v1/campaigns", json: campaign)
        case .installationID:
            return herald.api("PUT", installation + encoded, json: ["platform": "ios", "notificationsAllowed": true] as [String: Any])
        case .installationAppVersion, .installationLanguage, .installationTimeZone, .installationToken:
            var body: [String: Any] = ["platform": "ios", "notificationsAllowed": true]
            switch place {
            case .installationAppVersion: body["appVersion"] = text
            case .installationLanguage: body["language"] = text
            case .installationTimeZone: body["timeZone"] = text
            default: body["pushProvider"] = "fcm"; body["pushToken"] = text
            }
            return herald.api("PUT", installation + "iid-1", json: body)
        case .erasedInstallation:
            return herald.api("DELETE", installation + encoded)
        case .eventInstallationID, .eventType, .eventURL, .eventLanguage, .eventCampaign:
            var event: [String: Any] = ["id": UUID().uuidString.lowercased(), "type": "impression", "campaignId": 1,
                                        "installationId": "iid-1", "occurredAt": "2026-11-28T10:00:00Z"]
            switch place {
            case .eventInstallationID: event["installationId"] = text
            case .eventType: event["type"] = text
            case .eventURL: event["type"] = "click"; event["action"] = "url"; event["url"] = text
            case .eventLanguage: event["language"] = text
            default: event["campaignId"] = text
            }
            return herald.api("POST", "/api/v1/events", json: ["events": [event]])
        case .feedInstallation:
            return herald.api("GET", "/api/v1/feed?installationId=\(encoded)")
        }
    }

    @Test func postgresAnswersANULAsSQLiteDoes() async throws {
        let sqlite = try await Instance(.sqlite), postgres = try await Instance(.postgres)
        var run = GeneratedRun("NUL in text on both engines", cases: 400)
        run.run(Generated.cases { draw -> (place: Place, text: String) in
            (draw.pick(Place.allCases), Self.withNUL(&draw))
        }) { input, run in
            let expected = try Self.send(input.place, input.text, to: sqlite)
            let answered = try Self.send(input.place, input.text, to: postgres)
            let shown = "\(input.place) \(input.text.debugDescription)"
            run.expect(answered.status != 500 && answered.status == expected.status,
                       "PostgreSQL \(answered.status), SQLite \(expected.status): \(answered.text.prefix(300))", input: shown)
            run.note("\(input.place) \(expected.status)")
        }
        #expect(run.failures == 0)
    }

    @Test("A NUL in the login email is a 401 on PostgreSQL, as on SQLite, and counts against the address")
    func loginEmailWithNUL() async throws {
        for engine in StorageEngine.available {
            let herald = try await Instance(engine)
            let answer = try herald.visitor.submit("/login", from: "/login", ["email": "admin@example.com\u{0}", "password": "correct horse battery"])
            #expect(answer.status == 401, "\(engine): \(answer.status) \(answer.text.prefix(200))")
            let signedIn = try herald.visitor.submit("/login", from: "/login", ["email": "admin@example.com", "password": "correct horse battery"])
            #expect(signedIn.status == 303, "\(engine): \(signedIn.status)")
        }
    }
}
