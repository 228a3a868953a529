import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/account`: each signed-in user's own console language and time zone.
struct SettingsPages: Sendable {
    let services: Services

    struct Option: Sendable {
        let value: String
        let label: String
        /// The option's own language, so screen readers read "فارسی" as Persian.
        let lang: String?
        let selected: Bool
    }

    struct Model: Sendable {
        let languages: [Option]
        let timeZones: [Option]
        let timeZoneError: String?
        let browserLanguage: String
    }

    func form(_ context: RequestContext) throws -> Response {
        guard let user = context.user else { throw HTTPError.forbidden }
        return try render(context, language: user.language ?? "", timeZone: user.timeZone ?? "UTC", timeZoneError: nil)
    }

    func save(_ context: RequestContext) throws -> Response {
        guard var user = context.user else { throw HTTPError.forbidden }
        let localizer = context.localizer
        let language = context.form["language"] ?? ""
        let timeZone = context.form["time_zone"] ?? ""
        guard language.isEmpty || services.localization.languages.contains(where: { $0.rawValue == language }) else {
            throw HTTPError(422, localizer("settings.errors.language"))
        }
        guard let zone = Self.timeZoneName(timeZone) else {
            return try render(context, language: language, timeZone: timeZone,
                              timeZoneError: localizer("settings.errors.time_zone"), status: 422)
        }
        user.language = language.isEmpty ? nil : language
        user.timeZone = zone
        user.updatedAt = context.now
        try services.database.users.update(
            user, ending: .none, line: .userSettings(email: user.email, language: user.language, timeZone: zone), actor: context.actor, now: context.now)
        // The message is in the language just chosen.
        let chosen = services.localization.localizer(for: context.request, user: user)
        try services.flash(context, .success, chosen("settings.saved"))
        return .redirect(to: "/account")
    }

    /// `name` when it is a time zone's IANA name (`Asia/Tehran`) or `UTC`, else nil: a user picks from the
    /// list of known zones, so offsets and abbreviations Foundation would also read (`GMT+3`) are refused.
    /// The name is what is kept, as chosen: Foundation calls UTC "GMT", and the list would not find it.
    static func timeZoneName(_ name: String) -> String? {
        guard name.utf8.count <= TimeZoneName.maximumLength,
              name == "UTC" || TimeZone.knownTimeZoneIdentifiers.contains(name), TimeZoneName.zone(name) != nil else { return nil }
        return name
    }

    private func render(
        _ context: RequestContext, language: String, timeZone: String, timeZoneError: String?, status: Int = 200
    ) throws -> Response {
        let localizer = context.localizer
        let browser = Option(value: "", label: localizer("settings.language_browser"), lang: nil, selected: language.isEmpty)
        let languages = [browser] + services.localization.languages.map {
            Option(value: $0.rawValue, label: $0.nativeName, lang: $0.rawValue, selected: $0.rawValue == language)
        }
        let zones = (["UTC"] + TimeZone.knownTimeZoneIdentifiers.sorted()).map {
            Option(value: $0, label: $0, lang: nil, selected: $0 == timeZone)
        }
        let model = Model(languages: languages, timeZones: zones, timeZoneError: timeZoneError, browserLanguage: localizer.language.nativeName)
        return try services.page(.settings, title: localizer("settings.title"), model: model, context: context, status: status)
    }
}
