import ArgumentParser
import Foundation
import PushMock

/// `herald-push-mock`: mock APNs and FCM servers for Herald's Python tests and benchmark.
@main
struct HeraldPushMock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-push-mock",
        abstract: "Mock APNs and FCM HTTP v1 servers (HTTP/2 over TLS) with a control port, for tests.",
        subcommands: [Keys.self, Serve.self])
}

/// Prints one JSON object on a line of its own, at once (a test reads it through a pipe).
func printLine(_ object: [String: Any]) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write test credentials: apns.p8 (P-256, PKCS#8) and fcm-service-account.json (RSA-2048, Google's format).")

    @Option(help: "The folder to write apns.p8 and fcm-service-account.json into.")
    var out: String

    @Option(help: "The service account's token_uri: the mock's https://127.0.0.1:PORT/token.")
    var tokenURI: String

    @Option(help: "The APNs key id to expect (10 of A-Z, 0-9).")
    var apnsKeyID = MockCredentials.defaultAPNsKeyID

    @Option(help: "The APNs team id to expect (10 of A-Z, 0-9).")
    var apnsTeamID = MockCredentials.defaultAPNsTeamID

    func run() throws {
        let credentials = try MockCredentials.generate(tokenURI: tokenURI, apnsKeyID: apnsKeyID, apnsTeamID: apnsTeamID)
        try credentials.write(to: URL(fileURLWithPath: out))
        try printLine(credentials.summary)
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve mock APNs and FCM until killed; prints one JSON line with the ports when ready.",
        discussion: """
            Give the credentials written by `keys` (--apns-key, --fcm-service-account), or --keys-out DIR to have \
            fresh ones written there once the port is known (their token_uri then names it, which a port of 0 needs).
            Control port (plain HTTP, 127.0.0.1): GET /requests[?format=jsonl], GET /stats, POST /reset, \
            POST /hold, POST /release, POST /revoke-tokens.
            """)

    @Option(help: "The .p8 key whose public half checks APNs provider tokens.")
    var apnsKey: String?

    @Option(help: "The service-account JSON whose public key checks OAuth assertions.")
    var fcmServiceAccount: String?

    @Option(help: "Write fresh credentials into this folder once the port is known.")
    var keysOut: String?

    @Option(help: "The APNs key id to expect.")
    var apnsKeyID = MockCredentials.defaultAPNsKeyID

    @Option(help: "The APNs team id to expect.")
    var apnsTeamID = MockCredentials.defaultAPNsTeamID

    @Option(help: "The TLS port for APNs and FCM (0: any free port).")
    var port = 0

    @Option(help: "The plain-HTTP control port on 127.0.0.1 (0: any free port).")
    var controlPort = 0

    @Option(help: "Write the self-signed certificate (PEM) here, for clients to trust.")
    var certOut: String

    @Option(help: "Keep at most this many requests; count the rest.")
    var recordLimit = 200_000

    @Option(help: "Seconds an FCM access token lasts.")
    var accessTokenLifetime = 3599

    func validate() throws {
        guard (apnsKey == nil) == (fcmServiceAccount == nil) else {
            throw ValidationError("Give both --apns-key and --fcm-service-account, or neither with --keys-out.")
        }
        guard apnsKey != nil || keysOut != nil else {
            throw ValidationError("Give --apns-key and --fcm-service-account (from `keys`), or --keys-out DIR for fresh ones.")
        }
        guard (0...65_535).contains(port), (0...65_535).contains(controlPort) else { throw ValidationError("Ports are 0 to 65535.") }
        guard recordLimit >= 0, (1...86_400).contains(accessTokenLifetime) else {
            throw ValidationError("--record-limit is 0 or more; --access-token-lifetime is 1 to 86400 seconds.")
        }
    }

    func run() async throws {
        var options = MockProviders.Options()
        if let apnsKey, let fcmServiceAccount {
            options.credentials = try MockCredentials(
                apnsKeyPEM: String(decoding: try Data(contentsOf: URL(fileURLWithPath: apnsKey)), as: UTF8.self),
                apnsKeyID: apnsKeyID, apnsTeamID: apnsTeamID,
                fcmServiceAccountJSON: try Data(contentsOf: URL(fileURLWithPath: fcmServiceAccount)))
        }
        options.port = port
        options.controlPort = controlPort
        options.recordLimit = recordLimit
        options.accessTokenLifetime = accessTokenLifetime
        options.certificateFile = URL(fileURLWithPath: certOut)
        let mock = try await MockProviders.start(options)
        if let keysOut, apnsKey == nil { try mock.credentials.write(to: URL(fileURLWithPath: keysOut)) }
        var ready: [String: Any] = mock.credentials.summary
        ready["port"] = mock.port
        ready["controlPort"] = mock.controlPort
        ready["baseURL"] = mock.baseURL.absoluteString
        ready["controlURL"] = mock.controlURL.absoluteString
        ready["certificate"] = certOut
        if let keysOut { ready["keys"] = keysOut }
        try printLine(ready)
        // Runs until killed: the tests stop it with a signal.
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
