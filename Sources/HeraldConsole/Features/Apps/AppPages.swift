import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/apps`: register apps, issue and revoke their API keys.
struct AppPages: Sendable {
    let services: Services

    private var registry: AppRegistry { AppRegistry(database: services.database) }

    struct AppRow: Sendable {
        let id: Int64
        let name: String
        let platforms: String
        let created: String
    }

    struct AppList: Sendable {
        let apps: [AppRow]
    }

    func index(_ context: RequestContext) throws -> Response {
        let rows = try services.database.apps.all().map {
            AppRow(id: $0.id, name: $0.name, platforms: $0.platforms.map(\.title).joined(separator: ", "),
                   created: DisplayTime.date($0.createdAt))
        }
        return try services.page(.apps, title: "Apps", model: AppList(apps: rows), context: context)
    }

    struct NewAppForm: Sendable {
        let name: FieldView
        let platforms: [ChoiceView]
        let platformsError: String?
        let errors: [ErrorSummaryItem]
    }

    func new(_ context: RequestContext) throws -> Response {
        try renderNew(context, form: FormData(), errors: FormErrors())
    }

    func create(_ context: RequestContext) throws -> Response {
        let platforms = context.form.values("platforms").compactMap(Platform.init(rawValue:))
        do {
            let app = try registry.createApp(name: context.form["name"] ?? "", platforms: platforms, actor: context.actor, now: context.now)
            try services.flash(context, .success, "\(app.name) is registered. Create an API key for its delivery component.")
            return .redirect(to: "/apps/\(app.id)")
        } catch let problems as FormErrors {
            return try renderNew(context, form: context.form, errors: problems, status: 422)
        }
    }

    private func renderNew(_ context: RequestContext, form: FormData, errors: FormErrors, status: Int = 200) throws -> Response {
        let chosen = Set(form.values("platforms"))
        let model = NewAppForm(
            name: FieldView("name", label: "App name", value: form["name"] ?? "", errors: errors),
            platforms: Platform.allCases.map {
                ChoiceView(name: "platforms", value: $0.rawValue, label: $0.title, checked: chosen.contains($0.rawValue))
            },
            platformsError: errors.message(for: "platforms"),
            errors: errors.summary)
        return try services.page(.newApp, title: "Register an app", model: model, context: context, status: status)
    }

    struct KeyRow: Sendable {
        let id: Int64
        let appID: Int64
        let name: String
        let prefix: String
        let scopes: [String]
        let created: String
        let lastUsed: String
        let revoked: String?
    }

    struct DeviceRow: Sendable {
        let id: Int64
        let appID: Int64
        let name: String
        let installationID: String
        let added: String
    }

    struct AppDetail: Sendable {
        let id: Int64
        let name: String
        let platforms: String
        let created: String
        let minInterval: FieldView
        let devices: [DeviceRow]
        let deviceName: FieldView
        let installationID: FieldView
        let keys: [KeyRow]
        let keyName: FieldView
        let scopes: [ChoiceView]
        let scopesError: String?
        let errors: [ErrorSummaryItem]
    }

    func show(_ context: RequestContext) throws -> Response {
        try renderShow(context, app: try app(context), form: FormData(), errors: FormErrors())
    }

    func saveSettings(_ context: RequestContext) throws -> Response {
        let app = try app(context)
        guard let seconds = context.form["minIntervalSeconds"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }),
              (0...86_400).contains(seconds) else {
            return try renderShow(context, app: app, form: context.form,
                                  errors: FormErrors("minIntervalSeconds", "Enter whole seconds from 0 to 86400 (one day)."), status: 422)
        }
        try services.database.apps.setMinInterval(appID: app.id, seconds: seconds, actor: context.actor, now: context.now)
        try services.flash(context, .success, "Devices now wait at least \(seconds) s between two messages of \(app.name).")
        return .redirect(to: "/apps/\(app.id)")
    }

    func addDevice(_ context: RequestContext) throws -> Response {
        let app = try app(context)
        do {
            let device = try registry.addTestDevice(
                appID: app.id, installationID: context.form["installationId"] ?? "", name: context.form["deviceName"] ?? "",
                actor: context.actor, now: context.now)
            try services.flash(context, .success, "“\(device.name)” is a test device: campaigns marked “test on device” reach it at once.")
            return .redirect(to: "/apps/\(app.id)")
        } catch let problems as FormErrors {
            return try renderShow(context, app: app, form: context.form, errors: problems, status: 422)
        }
    }

    func removeDevice(_ context: RequestContext) throws -> Response {
        let app = try app(context)
        try services.database.apps.removeTestDevice(id: try context.id("deviceID"), appID: app.id, actor: context.actor, now: context.now)
        try services.flash(context, .success, "The test device is removed.")
        return .redirect(to: "/apps/\(app.id)")
    }

    struct KeyCreated: Sendable {
        let appID: Int64
        let appName: String
        let keyName: String
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
                appID: app.id, appName: app.name, keyName: created.key.name, secret: created.secret,
                scopes: created.key.scopes.map(\.rawValue))
            return try services.page(.keyCreated, title: "Copy your new key", model: model, context: context, status: 201)
        } catch let problems as FormErrors {
            return try renderShow(context, app: app, form: context.form, errors: problems, status: 422)
        }
    }

    struct RevokeConfirmation: Sendable {
        let appID: Int64
        let appName: String
        let keyID: Int64
        let keyName: String
        let prefix: String
    }

    func confirmRevoke(_ context: RequestContext) throws -> Response {
        let (app, key) = try appAndKey(context)
        let model = RevokeConfirmation(appID: app.id, appName: app.name, keyID: key.id, keyName: key.name, prefix: key.prefix)
        return try services.page(.revokeKey, title: "Revoke \(key.name)?", model: model, context: context)
    }

    func revoke(_ context: RequestContext) throws -> Response {
        let (app, key) = try appAndKey(context)
        try registry.revokeKey(key, actor: context.actor, now: context.now)
        try services.flash(context, .success, "The key “\(key.name)” is revoked: requests with it now get 401.")
        return .redirect(to: "/apps/\(app.id)")
    }

    private func app(_ context: RequestContext) throws -> App {
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

    private func renderShow(_ context: RequestContext, app: App, form: FormData, errors: FormErrors, status: Int = 200) throws -> Response {
        let keys = try services.database.apiKeys.all(appID: app.id).map {
            KeyRow(id: $0.id, appID: app.id, name: $0.name, prefix: $0.prefix, scopes: $0.scopes.map(\.rawValue),
                   created: DisplayTime.date($0.createdAt), lastUsed: $0.lastUsedAt.map(DisplayTime.dateTime) ?? "never",
                   revoked: $0.revokedAt.map(DisplayTime.dateTime))
        }
        let chosen = Set(form.values("scopes"))
        let devices = try services.database.apps.testDevices(appID: app.id).map {
            DeviceRow(id: $0.id, appID: app.id, name: $0.name, installationID: $0.installationID, added: DisplayTime.date($0.createdAt))
        }
        let model = AppDetail(
            id: app.id, name: app.name, platforms: app.platforms.map(\.title).joined(separator: ", "),
            created: DisplayTime.date(app.createdAt),
            minInterval: FieldView("minIntervalSeconds", label: "Minimum seconds between two messages on a device", type: "number",
                                   value: form["minIntervalSeconds"] ?? String(app.minIntervalSeconds),
                                   hint: "Delivery clients wait this long after showing a message before showing another. Default 30.",
                                   errors: errors),
            devices: devices,
            deviceName: FieldView("deviceName", label: "Device name", value: form["deviceName"] ?? "", errors: errors),
            installationID: FieldView("installationId", label: "Installation ID", value: form["installationId"] ?? "",
                                      hint: "The ID the delivery client reports as X-Installation-Id.", errors: errors),
            keys: keys,
            keyName: FieldView("name", label: "Key name", value: form["name"] ?? "",
                               hint: "Where the key will be used, such as “iOS app” or “CI script”.", errors: errors),
            scopes: APIScope.allCases.map {
                ChoiceView(name: "scopes", value: $0.rawValue, label: $0.rawValue, hint: $0.summary, checked: chosen.contains($0.rawValue))
            },
            scopesError: errors.message(for: "scopes"),
            errors: errors.summary)
        return try services.page(.app, title: app.name, model: model, context: context, status: status)
    }
}
