import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/apps`: register apps, issue and revoke their API keys, name their test devices; the app page also lists
/// its allowed web origins (changed by `AppOriginPages`).
struct AppPages: Sendable {
    let services: Services

    private var registry: AppRegistry { AppRegistry(database: services.database) }

    struct AppRow: Sendable {
        let id: Int64
        let name: String
        let platforms: String
        let created: String
        let createdISO: String
    }

    struct AppList: Sendable {
        let apps: [AppRow]
    }

    func index(_ context: RequestContext) throws -> Response {
        let localizer = context.localizer
        let rows = try services.database.apps.all().map {
            AppRow(id: $0.id, name: $0.name, platforms: Self.platforms($0.platforms, localizer),
                   created: localizer.date($0.createdAt), createdISO: UTCTime.rfc3339($0.createdAt))
        }
        return try services.page(.apps, title: localizer("apps.index.title"), model: AppList(apps: rows), context: context)
    }

    struct NewAppForm: Sendable {
        let name: FieldView
        let platforms: [ChoiceView]
        let platformsError: String?
        let errors: [ErrorSummaryItem]
    }

    func new(_ context: RequestContext) throws -> Response {
        try renderNew(context, form: FormData(), errors: InputProblems())
    }

    func create(_ context: RequestContext) throws -> Response {
        let platforms = context.form.values("platforms").compactMap(Platform.init(rawValue:))
        do {
            let app = try registry.createApp(name: context.form["name"] ?? "", platforms: platforms, actor: context.actor, now: context.now)
            try services.flash(context, .success, context.localizer("apps.flash.registered", ["name": Localizer.isolated(app.name)]))
            return .redirect(to: "/apps/\(app.id)")
        } catch let problems as InputProblems {
            return try renderNew(context, form: context.form, errors: problems, status: 422)
        }
    }

    private func renderNew(_ context: RequestContext, form: FormData, errors: InputProblems, status: Int = 200) throws -> Response {
        let localizer = context.localizer
        let errors = errors.localized(by: localizer)
        let chosen = Set(form.values("platforms"))
        let model = NewAppForm(
            name: FieldView("name", label: localizer("apps.new.name"), value: form["name"] ?? "", errors: errors),
            platforms: Platform.allCases.map {
                ChoiceView(name: "platforms", value: $0.rawValue, label: localizer("apps.platforms." + $0.rawValue),
                           checked: chosen.contains($0.rawValue))
            },
            platformsError: errors.message(for: "platforms"),
            errors: errors.summary)
        return try services.page(.newApp, title: localizer("apps.new.title"), model: model, context: context, status: status)
    }

    struct KeyRow: Sendable {
        let id: Int64
        let appID: Int64
        let name: String
        let prefix: String
        let scopes: [String]
        let created: String
        let createdISO: String
        let lastUsed: String
        let lastUsedISO: String?
        let revoked: String?
        let revokedISO: String?
    }

    struct DeviceRow: Sendable {
        let id: Int64
        let appID: Int64
        let name: String
        let installationID: String
        let added: String
        let addedISO: String
    }

    struct OriginRow: Sendable {
        let id: Int64
        let appID: Int64
        let origin: String
        let added: String
        let addedISO: String
    }

    struct AppDetail: Sendable {
        let id: Int64
        let name: String
        let platforms: String
        let created: String
        let createdISO: String
        let minInterval: FieldView
        let push: AppPushPages.Panel
        let origins: [OriginRow]
        let originsCaption: String
        let origin: FieldView
        let devices: [DeviceRow]
        let devicesCaption: String
        let deviceName: FieldView
        let installationID: FieldView
        let keys: [KeyRow]
        let keysCaption: String
        let keyName: FieldView
        let scopes: [ChoiceView]
        let scopesError: String?
        let errors: [ErrorSummaryItem]
    }

    func show(_ context: RequestContext) throws -> Response {
        try renderShow(context, app: try app(context), form: FormData(), errors: InputProblems())
    }

    func saveSettings(_ context: RequestContext) throws -> Response {
        let app = try app(context)
        guard let seconds = context.form["minIntervalSeconds"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }),
              (0...86_400).contains(seconds) else {
            let problem = Phrase("apps.errors.min_interval", ["max": .number(86_400)])
            return try renderShow(context, app: app, form: context.form, errors: InputProblems("minIntervalSeconds", problem), status: 422)
        }
        try services.database.apps.setMinInterval(appID: app.id, seconds: seconds, actor: context.actor, now: context.now)
        try services.flash(context, .success, context.localizer.plural(
            "apps.flash.min_interval", count: seconds, ["name": Localizer.isolated(app.name)]))
        return .redirect(to: "/apps/\(app.id)")
    }

    func addDevice(_ context: RequestContext) throws -> Response {
        let app = try app(context)
        do {
            let device = try registry.addTestDevice(
                appID: app.id, installationID: context.form["installationId"] ?? "", name: context.form["deviceName"] ?? "",
                actor: context.actor, now: context.now)
            try services.flash(context, .success, context.localizer("apps.flash.device_added", ["name": Localizer.isolated(device.name)]))
            return .redirect(to: "/apps/\(app.id)")
        } catch let problems as InputProblems {
            return try renderShow(context, app: app, form: context.form, errors: problems, status: 422)
        }
    }

    func removeDevice(_ context: RequestContext) throws -> Response {
        let app = try app(context)
        try services.database.apps.removeTestDevice(id: try context.id("deviceID"), appID: app.id, actor: context.actor, now: context.now)
        try services.flash(context, .success, context.localizer("apps.flash.device_removed"))
        return .redirect(to: "/apps/\(app.id)")
    }

    struct KeyCreated: Sendable {
        let appID: Int64
        /// "The key … for … has the scopes", followed by the scopes.
        let scopesSentence: String
        let secret: String
        let scopes: [String]
    }

    func createKey(_ context: RequestContext) throws -> Response {
        let app = try app(context)
        let scopes = context.form.values("scopes").compactMap(APIScope.init(rawValue:))
        do {
            let created = try registry.createKey(
                appID: app.id, name: context.form["name"] ?? "", scopes: scopes, actor: context.actor, now: context.now)
            // The secret exists only in this response: it is not stored and cannot be shown again.
            let model = KeyCreated(
                appID: app.id,
                scopesSentence: context.localizer("apps.key_created.scopes", [
                    "key": Localizer.isolated(created.key.name), "app": Localizer.isolated(app.name),
                ]),
                secret: created.secret, scopes: created.key.scopes.map(\.rawValue))
            return try services.page(.keyCreated, title: context.localizer("apps.key_created.title"), model: model, context: context, status: 201)
        } catch let problems as InputProblems {
            return try renderShow(context, app: app, form: context.form, errors: problems, status: 422)
        }
    }

    /// A page that says what a change to the app will do, with the button that makes it and a way back.
    struct Confirmation: Sendable {
        let heading: String
        let explanation: String
        /// Where the button posts.
        let action: String
        let submit: String
        /// The app's page, and the words of the link back to it.
        let back: String
        let keep: String
    }

    func confirmRevoke(_ context: RequestContext) throws -> Response {
        let (app, key) = try appAndKey(context)
        let localizer = context.localizer
        let title = localizer("apps.revoke.title", ["name": Localizer.isolated(key.name)])
        let model = Confirmation(
            heading: title,
            explanation: localizer("apps.revoke.explanation", ["prefix": Localizer.isolated(key.prefix + "…"), "app": Localizer.isolated(app.name)]),
            action: "/apps/\(app.id)/keys/\(key.id)/revoke", submit: localizer("apps.revoke.submit"),
            back: "/apps/\(app.id)", keep: localizer("apps.revoke.keep"))
        return try services.page(.confirmAppChange, title: title, model: model, context: context)
    }

    func revoke(_ context: RequestContext) throws -> Response {
        let (app, key) = try appAndKey(context)
        try registry.revokeKey(key, actor: context.actor, now: context.now)
        try services.flash(context, .success, context.localizer("apps.flash.key_revoked", ["name": Localizer.isolated(key.name)]))
        return .redirect(to: "/apps/\(app.id)")
    }

    func app(_ context: RequestContext) throws -> App {
        guard let app = try services.database.apps.find(id: try context.id("id")) else { throw HTTPError.notFound }
        return app
    }

    private func appAndKey(_ context: RequestContext) throws -> (App, APIKey) {
        let app = try app(context)
        guard let key = try services.database.apiKeys.find(id: try context.id("keyID")), key.appID == app.id else {
            throw HTTPError.notFound
        }
        return (app, key)
    }

    func renderShow(_ context: RequestContext, app: App, form: FormData, errors: InputProblems, status: Int = 200) throws -> Response {
        let localizer = context.localizer
        let errors = errors.localized(by: localizer)
        let keys = try services.database.apiKeys.all(appID: app.id).map {
            KeyRow(id: $0.id, appID: app.id, name: $0.name, prefix: $0.prefix, scopes: $0.scopes.map(\.rawValue),
                   created: localizer.date($0.createdAt), createdISO: UTCTime.rfc3339($0.createdAt),
                   lastUsed: $0.lastUsedAt.map { localizer.dateTime($0) } ?? localizer("apps.show.never_used"),
                   lastUsedISO: $0.lastUsedAt.map(UTCTime.rfc3339),
                   revoked: $0.revokedAt.map { localizer("apps.show.revoked_at", ["time": localizer.dateTime($0)]) },
                   revokedISO: $0.revokedAt.map(UTCTime.rfc3339))
        }
        let chosen = Set(form.values("scopes"))
        let devices = try services.database.apps.testDevices(appID: app.id).map {
            DeviceRow(id: $0.id, appID: app.id, name: $0.name, installationID: $0.installationID,
                      added: localizer.date($0.createdAt), addedISO: UTCTime.rfc3339($0.createdAt))
        }
        let origins = try services.database.apps.origins(appID: app.id).map {
            OriginRow(id: $0.id, appID: app.id, origin: $0.origin, added: localizer.date($0.createdAt), addedISO: UTCTime.rfc3339($0.createdAt))
        }
        let model = AppDetail(
            id: app.id, name: app.name, platforms: Self.platforms(app.platforms, localizer),
            created: localizer.date(app.createdAt), createdISO: UTCTime.rfc3339(app.createdAt),
            minInterval: FieldView("minIntervalSeconds", label: localizer("apps.show.min_interval"), type: "number",
                                   value: form["minIntervalSeconds"] ?? String(app.minIntervalSeconds),
                                   hint: localizer("apps.show.min_interval_hint", ["default": localizer.number(30)]),
                                   errors: errors),
            push: try AppPushPages(services: services).panel(app: app, form: form, errors: errors, localizer: localizer),
            origins: origins,
            originsCaption: localizer("apps.show.origins_caption", ["name": Localizer.isolated(app.name)]),
            origin: FieldView("origin", label: localizer("apps.show.origin"), type: "url", value: form["origin"] ?? "",
                              hint: localizer("apps.show.origin_hint"), errors: errors),
            devices: devices,
            devicesCaption: localizer("apps.show.devices_caption", ["name": Localizer.isolated(app.name)]),
            deviceName: FieldView("deviceName", label: localizer("apps.show.device_name"), value: form["deviceName"] ?? "", errors: errors),
            installationID: FieldView("installationId", label: localizer("apps.show.installation_id"), value: form["installationId"] ?? "",
                                      hint: localizer("apps.show.installation_id_hint"), errors: errors),
            keys: keys,
            keysCaption: localizer("apps.show.keys_caption", ["name": Localizer.isolated(app.name)]),
            keyName: FieldView("name", label: localizer("apps.show.key_name"), value: form["name"] ?? "",
                               hint: localizer("apps.show.key_name_hint"), errors: errors),
            scopes: APIScope.allCases.map {
                ChoiceView(name: "scopes", value: $0.rawValue, label: $0.rawValue, hint: localizer(Self.scopeKey($0)),
                           checked: chosen.contains($0.rawValue))
            },
            scopesError: errors.message(for: "scopes"),
            errors: errors.summary)
        return try services.page(.app, title: app.name, model: model, context: context, status: status)
    }

    /// The platforms' names, in the language's list style.
    static func platforms(_ platforms: [Platform], _ localizer: Localizer) -> String {
        platforms.map { localizer("apps.platforms." + $0.rawValue) }.joined(separator: localizer("layout.list_separator"))
    }

    /// `apps.scopes.feed_read` for `feed:read`.
    static func scopeKey(_ scope: APIScope) -> String {
        "apps.scopes." + scope.rawValue.replacingOccurrences(of: ":", with: "_")
    }
}
