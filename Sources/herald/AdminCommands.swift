import ArgumentParser
import Foundation
import HeraldConsole
import HeraldDomain
import HeraldStorage

extension Role: ExpressibleByArgument {}
extension Platform: ExpressibleByArgument {}
extension APIScope: ExpressibleByArgument {}
extension PushProvider: ExpressibleByArgument {}

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "user", abstract: "Manage console users.", subcommands: [Create.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user; the password is read from standard input.")

        @OptionGroup var storage: StorageOptions

        @Option(help: "The user's email, used to sign in.")
        var email: String

        @Option(help: "The user's name (default: the part of the email before @).")
        var name: String?

        @Option(help: "admin, editor or viewer.")
        var role: Role

        @Flag(help: "Read the password from the first line of standard input.")
        var passwordStdin = false

        func validate() throws {
            guard passwordStdin else { throw ValidationError("Pass --password-stdin and send the password on standard input.") }
        }

        func run() throws {
            guard let password = readLine(strippingNewline: true) else {
                throw ValidationError("No password on standard input.")
            }
            let database = try storage.openDatabase()
            defer { try? database.close() }
            let user = try Accounts(database: database, hasher: PasswordHasher()).create(
                email: email, name: name ?? String(email.prefix { $0 != "@" }), role: role, password: password,
                actor: .commandLine, now: Date())
            print("Created \(user.role.rawValue) \(user.email) with id \(user.id ?? 0)")
        }
    }
}

struct AppCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "app", abstract: "Manage apps.", subcommands: [Create.self, Origin.self, Push.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register an app; prints its id as the last word.")

        @OptionGroup var storage: StorageOptions

        @Option(help: "The app's name.")
        var name: String

        @Option(name: .customLong("platform"), help: "ios, android or web; repeat for several.")
        var platforms: [Platform] = []

        func run() throws {
            let database = try storage.openDatabase()
            defer { try? database.close() }
            let app = try AppRegistry(database: database).createApp(name: name, platforms: platforms, actor: .commandLine, now: Date())
            print("Created app \(app.name) with id \(app.id)")
        }
    }

    struct Origin: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage the web origins whose pages may use the app's keys from visitors' browsers.",
            discussion: "Pages on an allowed origin get CORS on the feed and events; a page on any other origin that sends one of the app's keys is refused with 403. A running server sees a change within 30 seconds.",
            subcommands: [Add.self, Remove.self, List.self])

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Allow an origin, such as https://shop.example.com; prints it as stored.")

            @OptionGroup var storage: StorageOptions

            @Option(help: "The app's id.")
            var app: Int64

            @Argument(help: "scheme://host[:port]: https, or http for localhost, 127.0.0.1 and [::1].")
            var origin: String

            func run() throws {
                let database = try storage.openDatabase()
                defer { try? database.close() }
                let added = try AppRegistry(database: database).addOrigin(appID: app, origin: origin, actor: .commandLine, now: Date())
                print("Pages on \(added.origin) may now use the keys of app \(app) from browsers")
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Stop allowing an origin.")

            @OptionGroup var storage: StorageOptions

            @Option(help: "The app's id.")
            var app: Int64

            @Argument(help: "The origin, as listed (or as typed when it was added).")
            var origin: String

            func run() throws {
                let database = try storage.openDatabase()
                defer { try? database.close() }
                let removed = try AppRegistry(database: database).removeOrigin(appID: app, origin: origin, actor: .commandLine, now: Date())
                print("Pages on \(removed.origin) may no longer use the keys of app \(app)")
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Print the app's allowed origins, one per line.")

            @OptionGroup var storage: StorageOptions

            @Option(help: "The app's id.")
            var app: Int64

            func run() throws {
                let database = try storage.openDatabase()
                defer { try? database.close() }
                for allowed in try AppRegistry(database: database).origins(appID: app) {
                    print(allowed.origin)
                }
            }
        }
    }
}

extension AppCommand {
    struct Push: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an app's push credentials: an APNs token key, an FCM service account, or both; or remove one.")

        @OptionGroup var storage: StorageOptions

        @Option(help: "The app's id.")
        var app: Int64

        @Option(help: "The APNs token signing key, the .p8 file from Apple's developer site.")
        var apnsKey: String?

        @Option(help: "The key's 10-character Key ID.")
        var apnsKeyId: String?

        @Option(help: "Your 10-character Team ID.")
        var apnsTeamId: String?

        @Option(help: "The app's bundle id, sent as apns-topic.")
        var apnsTopic: String?

        @Option(help: "APNs's address (default https://api.push.apple.com; https://api.sandbox.push.apple.com for development builds).")
        var apnsUrl: String?

        @Option(help: "The FCM service-account JSON file from the Firebase console; its token_uri is where access tokens come from.")
        var fcmServiceAccount: String?

        @Option(help: "FCM's address (default https://fcm.googleapis.com).")
        var fcmUrl: String?

        @Option(help: "apns or fcm: remove that provider's credentials.")
        var remove: PushProvider?

        @Option(help: "At most this many push campaigns reach one device of the app in 24 hours (1 to 100), or none.")
        var dailyCap: String?

        @Option(help: "on or off: publishing, pausing or stopping an in-app campaign sends the app's devices a silent push to fetch the feed.")
        var refreshOnChange: String?

        @Option(help: "At most one silent refresh every this many minutes (1 to 1440, default 20); a change in between is carried by the next.")
        var refreshEvery: String?

        func validate() throws {
            let apns = [apnsKey, apnsKeyId, apnsTeamId, apnsTopic]
            if apns.contains(where: { $0 != nil }) && apns.contains(where: { $0 == nil }) {
                throw ValidationError("APNs needs all four of --apns-key, --apns-key-id, --apns-team-id and --apns-topic.")
            }
            if apnsUrl != nil && apnsKey == nil { throw ValidationError("--apns-url goes with --apns-key.") }
            if fcmUrl != nil && fcmServiceAccount == nil { throw ValidationError("--fcm-url goes with --fcm-service-account.") }
            if apnsKey == nil && fcmServiceAccount == nil && remove == nil && dailyCap == nil && refreshOnChange == nil && refreshEvery == nil {
                throw ValidationError(
                    "Give --apns-key (with its id, team and topic), --fcm-service-account, --remove apns|fcm, --daily-cap, --refresh-on-change or --refresh-every.")
            }
            _ = try settings(AppPushSettings())
        }

        /// `current` with --daily-cap and --refresh-on-change applied.
        func settings(_ current: AppPushSettings) throws -> AppPushSettings {
            var settings = current
            if let dailyCap {
                if dailyCap == "none" {
                    settings.dailyCap = nil
                } else if let cap = Int(dailyCap), AppPushSettings.dailyCapRange.contains(cap) {
                    settings.dailyCap = cap
                } else {
                    throw ValidationError("--daily-cap is a number from 1 to 100, or none; not \(dailyCap).")
                }
            }
            if let refreshOnChange {
                guard ["on", "off"].contains(refreshOnChange) else { throw ValidationError("--refresh-on-change is on or off; not \(refreshOnChange).") }
                settings.refreshOnChange = refreshOnChange == "on"
            }
            if let refreshEvery {
                let range = AppPushSettings.refreshMinutesRange
                guard let minutes = Int(refreshEvery), range.contains(minutes) else {
                    throw ValidationError("--refresh-every is whole minutes from \(range.lowerBound) to \(range.upperBound); not \(refreshEvery).")
                }
                settings.refreshMinutes = minutes
            }
            return settings
        }

        func run() throws {
            let database = try storage.openDatabase()
            defer { try? database.close() }
            let editor = PushSetupEditor(database: database, box: try { try storage.requireSecretKey(); return storage.secretBox() }())
            do {
                if let remove {
                    try editor.remove(remove, appID: app, actor: .commandLine, now: Date())
                    print("Removed the \(remove.title) credentials of app \(app)")
                }
                if let apnsKey, let apnsKeyId, let apnsTeamId, let apnsTopic {
                    let key = try String(contentsOfFile: apnsKey, encoding: .utf8)
                    try editor.setAPNs(appID: app, keyPEM: key, keyID: apnsKeyId, teamID: apnsTeamId, topic: apnsTopic, url: apnsUrl, actor: .commandLine, now: Date())
                    print("App \(app) sends through APNs with key \(apnsKeyId) of team \(apnsTeamId), topic \(apnsTopic)")
                }
                if dailyCap != nil || refreshOnChange != nil || refreshEvery != nil {
                    guard try database.apps.find(id: app) != nil else { throw ValidationError("There is no app with id \(app).") }
                    let settings = try settings(try database.apps.pushSettings(appID: app))
                    try database.apps.setPushSettings(settings, appID: app, actor: .commandLine, now: Date())
                    print("App \(app): daily cap \(settings.dailyCap.map(String.init) ?? "none"), silent refresh on in-app changes "
                          + "\(settings.refreshOnChange ? "on" : "off"), at most every \(settings.refreshMinutes) min")
                }
                if let fcmServiceAccount {
                    let file = try Data(contentsOf: URL(fileURLWithPath: fcmServiceAccount))
                    try editor.setFCM(appID: app, serviceAccountJSON: file, url: fcmUrl, actor: .commandLine, now: Date())
                    let setup = try editor.setup(appID: app)
                    print("App \(app) sends through FCM as \(setup.fcmClientEmail ?? "") in project \(setup.fcmProjectID ?? "")")
                }
            } catch let errors as InputProblems {
                throw ValidationError(errors.description)
            } catch let error as SecretBoxError {
                throw ValidationError(error.description)
            }
        }
    }
}


struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "key", abstract: "Manage API keys.", subcommands: [Create.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an API key; prints the secret, shown only this once, as the last word.")

        @OptionGroup var storage: StorageOptions

        @Option(help: "The app's id.")
        var app: Int64

        @Option(help: "The key's name (default: \"command line\").")
        var name = "command line"

        @Option(name: .customLong("scope"), help: "feed:read, events:write, campaigns:read or campaigns:write; repeat for several.")
        var scopes: [APIScope] = []

        func run() throws {
            let database = try storage.openDatabase()
            defer { try? database.close() }
            let created = try AppRegistry(database: database).createKey(
                appID: app, name: name, scopes: scopes, actor: .commandLine, now: Date())
            print("Created key \(created.key.name) for app \(app) with scopes \(scopes.map(\.rawValue).joined(separator: " ")); its secret is shown only now:")
            print(created.secret)
        }
    }
}

struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "device", abstract: "Manage test devices.", subcommands: [Add.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a test device: it sees the app's \"test on device\" campaigns at once.")

        @OptionGroup var storage: StorageOptions

        @Option(help: "The app's id.")
        var app: Int64

        @Option(help: "The installation ID the device's delivery client reports.")
        var installation: String

        @Option(help: "A name people recognize, such as \"Sara's iPhone\".")
        var name: String

        func run() throws {
            let database = try storage.openDatabase()
            defer { try? database.close() }
            let device = try AppRegistry(database: database).addTestDevice(
                appID: app, installationID: installation, name: name, actor: .commandLine, now: Date())
            print("Added test device \(device.name) (\(device.installationID)) to app \(app) with id \(device.id)")
        }
    }
}
