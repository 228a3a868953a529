import Crypto
import Foundation
import HeraldStorage

/// How the console behaves; the CLI fills it from flags and `HERALD_*` environment variables.
public struct ConsoleConfiguration: Sendable {
    /// The folder holding `Templates/`, `Public/`, `Locales/` and `migrations/` (and `Clients/web/`).
    public var resources: URL
    /// Adds `Secure` to cookies; set it when Herald is served over https.
    public var secureCookies = false
    /// A signed-in session ends this long after login, whatever happens.
    public var sessionLifetime: TimeInterval = 7 * 24 * 3600
    /// A session unused this long ends.
    public var sessionIdleTimeout: TimeInterval = 2 * 3600
    public var passwordHasher = PasswordHasher()
    public var loginThrottle = LoginThrottle.Policy()
    /// Installation registrations a minute per API key and per client address.
    public var registrationLimits = RegistrationLimitPolicy()
    /// Reverse proxies whose `X-Forwarded-For` names the client (for login throttling) and whose
    /// `X-Forwarded-Proto` / `X-Forwarded-Host` name the origin browsers reached (Herald's own pages are
    /// not another origin); empty trusts none.
    public var trustedProxies: [AddressRange] = []
    /// Host names (no port) the console's pages answer at besides `localhost` and IP literals, such as
    /// `herald.example.com`; requests naming another host get a 421 there (`ConsoleHosts`). The API answers any.
    public var consoleHosts: [String] = []
    /// Offers the pseudo-language `en-XA` (every English string marked), for the test that finds text
    /// which did not come from a catalog.
    public var pseudoLocale = false
    /// Seals push credentials in the database; the command line gives one whose key is in a file.
    /// The default's key lives only as long as the process (tests).
    public var secretBox = SecretBox(key: SymmetricKey(size: .bits256))
    /// How pushes are sent.
    public var push = PushSettings()
    /// Days raw events, and installations that stopped registering, are kept before the background retention deletes them; 0 keeps them forever.
    public var retentionDays = Retention.defaultDays
    /// `host:port` of the metrics listener when there is one, for the System page.
    public var metricsAddress: String?
    /// The current time; tests inject their own.
    public var clock: @Sendable () -> Date = { Date() }

    public init(resources: URL) {
        self.resources = resources
    }

    /// The folder holding the web delivery client's source, `herald.js`, served at `/sdk/v1/`: by default
    /// `Clients/web/` beside the other resources. Optional: without it the scripts answer 404.
    public var webClientFolder: URL {
        get { chosenWebClientFolder ?? resources.appendingPathComponent("Clients/web") }
        set { chosenWebClientFolder = newValue }
    }
    private var chosenWebClientFolder: URL?

    public var templatesFolder: URL { resources.appendingPathComponent("Templates") }
    public var publicFolder: URL { resources.appendingPathComponent("Public") }
    public var localesFolder: URL { resources.appendingPathComponent("Locales") }
}

/// Finds the folder with `Templates/`, `Public/`, `Locales/` and `migrations/`.
public enum ResourceLocator {
    /// `explicit` (`--resources`, `HERALD_RESOURCES`) if set; otherwise the first folder, walking up from the working directory
    /// and then from the executable, that holds all four; otherwise `share/herald` beside the executable's
    /// `bin/`, where `make install` and the Debian package put them.
    public static func locate(explicit: String?) -> URL? {
        if let explicit { return URL(fileURLWithPath: explicit) }
        let starts = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent(),
        ]
        for start in starts {
            var folder = start.standardizedFileURL
            while true {
                if holdsResources(folder) { return folder }
                let parent = folder.deletingLastPathComponent()
                if parent.path == folder.path { break }
                folder = parent
            }
        }
        let installed = starts[1].deletingLastPathComponent().appendingPathComponent("share/herald")
        return holdsResources(installed) ? installed : nil
    }

    static func holdsResources(_ folder: URL) -> Bool {
        ["Templates", "Public", "Locales", "migrations"].allSatisfy {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path, isDirectory: &isFolder)
                && isFolder.boolValue
        }
    }
}
