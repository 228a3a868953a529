import Foundation
import HeraldDomain

/// A value in an audit line, kept so the audit page can write the line in its reader's language.
public enum AuditArgument: Sendable, Equatable {
    /// What someone typed or a system made (a name, an email, an id, a time zone): shown as it is, isolated.
    case text(String)
    /// Written in the reader's digits.
    case number(Int)
    /// A console word, by its catalog key (`roles.editor`, `common.state.draft`).
    case term(String)
    /// Console words, by their catalog keys, joined in the reader's list style.
    case terms([String])
}

/// One line of the audit log, made once per action (the same on every engine): its action code, its subject
/// and details in English, which the table keeps as it always has (for whoever reads it with SQL), and the
/// arguments the audit page writes them from in its reader's language: the subject from
/// `audit.lines.subjects.<subjectKind>`, the details from `audit.lines.details.<detailsKind>`, each filled with
/// `arguments`. Lines written before arguments were kept show their English.
public struct AuditLine: Sendable, Equatable {
    public let action: String
    /// What kind of thing the line is about (`campaign`, `user`, …): the catalog key of its subject.
    public let subjectKind: String
    /// The catalog key of the details' sentence; nil when there are no details.
    public let detailsKind: String?
    public let subject: String
    public let details: String
    public let arguments: [String: AuditArgument]

    public init(
        action: String, subjectKind: String, subject: String, detailsKind: String? = nil, details: String = "",
        arguments: [String: AuditArgument] = [:]
    ) {
        self.action = action
        self.subjectKind = subjectKind
        self.subject = subject
        self.detailsKind = detailsKind
        self.details = details
        self.arguments = arguments
    }

    // MARK: Stored

    /// How `audit_log.arguments` holds a line's arguments: JSON,
    /// `{"subject": kind, "details": kind, "values": {name: {"text" | "number" | "term" | "terms": …}}}`.
    private struct Stored: Codable {
        struct Value: Codable {
            var text: String?
            var number: Int?
            var term: String?
            var terms: [String]?
        }

        var subject: String
        var details: String?
        var values: [String: Value]
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The `audit_log.arguments` text.
    public var storedArguments: String {
        let values = arguments.mapValues { argument in
            switch argument {
            case .text(let text): Stored.Value(text: text)
            case .number(let number): Stored.Value(number: number)
            case .term(let key): Stored.Value(term: key)
            case .terms(let keys): Stored.Value(terms: keys)
            }
        }
        // Strings, numbers and lists of them always encode.
        let data = (try? Self.encoder.encode(Stored(subject: subjectKind, details: detailsKind, values: values))) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// What a stored `arguments` text holds, or nil for a line without (older) or one this version cannot read.
    public static func stored(_ text: String?) -> (subjectKind: String, detailsKind: String?, arguments: [String: AuditArgument])? {
        guard let text, let stored = try? JSONDecoder().decode(Stored.self, from: Data(text.utf8)) else { return nil }
        var arguments: [String: AuditArgument] = [:]
        for (name, value) in stored.values {
            switch (value.text, value.number, value.term, value.terms) {
            case (let text?, nil, nil, nil): arguments[name] = .text(text)
            case (nil, let number?, nil, nil): arguments[name] = .number(number)
            case (nil, nil, let key?, nil): arguments[name] = .term(key)
            case (nil, nil, nil, let keys?): arguments[name] = .terms(keys)
            default: return nil
            }
        }
        return (stored.subject, stored.details, arguments)
    }

    // MARK: Subjects

    private static func app(_ id: Int64, name: String) -> (kind: String, subject: String, arguments: [String: AuditArgument]) {
        ("app", "app \(id) \(name)", ["app": .number(Int(clamping: id)), "name": .text(name)])
    }

    private static func appNumber(_ id: Int64) -> (kind: String, subject: String, arguments: [String: AuditArgument]) {
        ("app_number", "app \(id)", ["app": .number(Int(clamping: id))])
    }

    /// A line about `subject`; its details' words are `audit.lines.details.<detailsKind>` (by default the action,
    /// dots as underscores) when it has any.
    private static func line(
        _ action: String, _ subject: (kind: String, subject: String, arguments: [String: AuditArgument]), detailsKind: String? = nil,
        details: String = "", _ arguments: [String: AuditArgument] = [:]
    ) -> AuditLine {
        AuditLine(
            action: action, subjectKind: subject.kind, subject: subject.subject,
            detailsKind: details.isEmpty ? nil : detailsKind ?? action.replacingOccurrences(of: ".", with: "_"), details: details,
            arguments: subject.arguments.merging(arguments) { subject, _ in subject })
    }

    // MARK: Apps, their test devices, origins and push settings

    public static func appCreated(id: Int64, name: String, platforms: [Platform]) -> AuditLine {
        line("app.create", app(id, name: name), details: platforms.map(\.rawValue).joined(separator: ", "),
             ["platforms": .terms(platforms.map { "common.platform." + $0.rawValue })])
    }

    public static func appMinimumInterval(appID: Int64, seconds: Int) -> AuditLine {
        line("app.settings", appNumber(appID), details: "minimum interval \(seconds) s", ["count": .number(seconds)])
    }

    public static func appPushSettings(appID: Int64, _ settings: AppPushSettings) -> AuditLine {
        line(
            "app.push.settings", appNumber(appID),
            details: "daily cap \(settings.dailyCap.map(String.init) ?? "none"), refresh on change \(settings.refreshOnChange), at most every \(settings.refreshMinutes) min",
            ["cap": settings.dailyCap.map { .number($0) } ?? .term("audit.lines.values.no_cap"),
             "refresh": .term(settings.refreshOnChange ? "audit.lines.values.yes" : "audit.lines.values.no"),
             "minutes": .number(settings.refreshMinutes)])
    }

    public static func testDevice(added: Bool, name: String, appID: Int64, installationID: String) -> AuditLine {
        AuditLine(
            action: added ? "device.add" : "device.remove", subjectKind: "test_device", subject: "test device \(name) of app \(appID)",
            detailsKind: "installation", details: installationID, arguments: ["name": .text(name), "app": .number(Int(clamping: appID)), "installation": .text(installationID)])
    }

    public static func origin(added: Bool, appID: Int64, origin: String) -> AuditLine {
        AuditLine(
            action: added ? "origin.add" : "origin.remove", subjectKind: "origin", subject: "web origin of app \(appID)",
            detailsKind: "origin", details: origin,
            arguments: ["app": .number(Int(clamping: appID)), "origin": .text(origin)])
    }

    package static func apns(appID: Int64, _ credentials: APNsCredentials?) -> AuditLine {
        guard let credentials else { return line("app.push.apns.remove", appNumber(appID)) }
        return line(
            "app.push.apns.set", appNumber(appID), details: "key \(credentials.keyID), team \(credentials.teamID), topic \(credentials.topic)",
            ["key": .text(credentials.keyID), "team": .text(credentials.teamID), "topic": .text(credentials.topic)])
    }

    package static func fcm(appID: Int64, _ credentials: FCMCredentials?) -> AuditLine {
        guard let credentials else { return line("app.push.fcm.remove", appNumber(appID)) }
        return line(
            "app.push.fcm.set", appNumber(appID), details: "project \(credentials.projectID), \(credentials.clientEmail)",
            ["project": .text(credentials.projectID), "email": .text(credentials.clientEmail)])
    }

    // MARK: Keys

    public static func keyCreated(prefix: String, appID: Int64, scopes: [APIScope]) -> AuditLine {
        let list = scopes.map(\.rawValue).joined(separator: " ")
        return AuditLine(
            action: "key.create", subjectKind: "key", subject: "key \(prefix)… of app \(appID)", detailsKind: "scopes", details: list,
            arguments: ["prefix": .text(prefix), "app": .number(Int(clamping: appID)), "scopes": .text(list)])
    }

    public static func keyRevoked(prefix: String, appID: Int64) -> AuditLine {
        AuditLine(
            action: "key.revoke", subjectKind: "key", subject: "key \(prefix)… of app \(appID)",
            arguments: ["prefix": .text(prefix), "app": .number(Int(clamping: appID))])
    }

    // MARK: Users

    private static func user(_ email: String) -> (kind: String, subject: String, arguments: [String: AuditArgument]) {
        ("user", "user \(email)", ["email": .text(email)])
    }

    /// A user made by an admin or the command line, or the first admin at setup.
    public static func userCreated(email: String, role: Role, atSetup: Bool) -> AuditLine {
        line("user.create", user(email), detailsKind: atSetup ? "user_create_first" : "user_create",
             details: "role \(role.rawValue)" + (atSetup ? ", first user, at setup" : ""), ["role": .term("roles." + role.rawValue)])
    }

    public static func userRoleChanged(email: String, from previous: Role, to role: Role) -> AuditLine {
        line("user.role_change", user(email), details: "\(previous.rawValue) → \(role.rawValue)",
             ["from": .term("roles." + previous.rawValue), "to": .term("roles." + role.rawValue)])
    }

    /// A change with nothing more to say than what it is: `user.activate`, `user.deactivate`,
    /// `user.password_reset`, `user.password_change`.
    public static func userChanged(_ action: String, email: String) -> AuditLine {
        line(action, user(email))
    }

    /// A user's language and time zone, chosen on the settings page (`language` nil: the browser's).
    public static func userSettings(email: String, language: String?, timeZone: String) -> AuditLine {
        line("user.settings", user(email), details: "language \(language ?? "browser's"), time zone \(timeZone)",
             ["language": language.map { .text($0) } ?? .term("audit.lines.values.browser_language"), "zone": .text(timeZone)])
    }

    /// The time zone a user's browser reported at their first sign-in, kept for them.
    public static func userZoneFromBrowser(email: String, timeZone: String) -> AuditLine {
        line("user.settings", user(email), detailsKind: "user_settings_browser", details: "time zone \(timeZone) from the browser",
             ["zone": .text(timeZone)])
    }

    // MARK: Campaigns

    static func campaign(_ id: Int64, name: String) -> (kind: String, subject: String, arguments: [String: AuditArgument]) {
        ("campaign", "campaign \(id) \(name)", ["campaign": .number(Int(clamping: id)), "name": .text(name)])
    }

    static func campaignCreated(id: Int64, name: String, state: CampaignState) -> AuditLine {
        line("campaign.create", campaign(id, name: name), details: state.rawValue, ["state": .term("common.state." + state.rawValue)])
    }

    /// A saved revision: an edit (`campaign.update`) or a change of state (`campaign.publish`, …).
    static func campaignRevised(_ action: String, id: Int64, name: String, revision: Int) -> AuditLine {
        line(action, campaign(id, name: name), detailsKind: "campaign_revision", details: "revision \(revision)", ["revision": .number(revision)])
    }

    package static func campaignDeleted(id: Int64, name: String) -> AuditLine {
        line("campaign.delete", campaign(id, name: name))
    }

    /// Revision `revision` sent as a test to the test devices named `devices`.
    package static func campaignTestSent(id: Int64, name: String, revision: Int, devices: [String]) -> AuditLine {
        let list = devices.joined(separator: ", ")
        return line(
            "campaign.test_send", campaign(id, name: name), details: "revision \(revision) to \(devices.count) test devices: \(list)",
            ["revision": .number(revision), "count": .number(devices.count), "devices": .text(list)])
    }

    // MARK: Installations

    static func installationErased(_ installationID: String, appID: Int64, events: Int, registration: Bool) -> AuditLine {
        AuditLine(
            action: "installation.erase", subjectKind: "installation", subject: "installation \(installationID) of app \(appID)",
            detailsKind: registration ? "installation_erase_with_registration" : "installation_erase",
            details: "\(events) events" + (registration ? " and its registration" : ""),
            arguments: ["installation": .text(installationID), "app": .number(Int(clamping: appID)), "count": .number(events)])
    }
}
