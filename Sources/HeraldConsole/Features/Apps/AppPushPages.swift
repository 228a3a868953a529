import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldPush
import HeraldStorage

/// The app page's push set-up: APNs and FCM credentials (checked, then stored sealed by the same
/// `PushSetupEditor` as `herald app push`; a stored key or service account is never shown again), their
/// removal after a confirmation page, and the app's push settings (daily cap, silent refresh and its spacing).
struct AppPushPages: Sendable {
    let services: Services

    private var apps: AppPages { AppPages(services: services) }
    private var editor: PushSetupEditor { services.push.editor }

    /// What the panel shows of what is stored: names and addresses, never the secret itself.
    struct APNsSummary: Sendable {
        let keyID: String
        let teamID: String
        let topic: String
        let address: String
    }

    struct FCMSummary: Sendable {
        let projectID: String
        let clientEmail: String
        let address: String
    }

    struct Panel: Sendable {
        let appID: Int64
        let apnsSetup: APNsSummary?
        let fcmSetup: FCMSummary?
        /// "Last changed … by …", when anything was ever set.
        let changed: String?
        let apnsKey: FieldView
        let apnsKeyID: FieldView
        let apnsTeamID: FieldView
        let apnsTopic: FieldView
        let apnsURL: FieldView
        let fcmServiceAccount: FieldView
        let fcmURL: FieldView
        let pushDailyCap: FieldView
        let refreshOnChange: ChoiceView
        let refreshMinutes: FieldView
    }

    /// The panel for `app`, its fields holding what was just sent when a form is shown again.
    func panel(app: App, form: FormData, errors: InputProblems, localizer: Localizer) throws -> Panel {
        let setup = try editor.setup(appID: app.id)
        let settings = try services.database.apps.pushSettings(appID: app.id)
        let sentSettings = form["pushDailyCap"] != nil
        func field(_ name: String, _ key: String, type: String = "text", hint: String? = nil, required: Bool = true) -> FieldView {
            FieldView(name, label: localizer("apps.push." + key), type: type, value: form[name] ?? "",
                      hint: hint.map { localizer("apps.push." + $0) }, required: required, errors: errors)
        }
        /// A key is never sent back to the browser, not even to a form refused for another field: the field
        /// comes back empty, saying to give the key again.
        func secret(_ name: String, _ key: String, hint: String) -> FieldView {
            let given = !(form[name] ?? "").isEmpty
            return FieldView(name, label: localizer("apps.push." + key), hint: localizer("apps.push." + (given ? "secret_again" : hint)), errors: errors)
        }
        return Panel(
            appID: app.id,
            apnsSetup: setup.apnsKeyID.map { keyID in
                APNsSummary(keyID: keyID, teamID: setup.apnsTeamID ?? "", topic: setup.apnsTopic ?? "",
                            address: setup.apnsURL ?? APNsConfiguration.productionURL.absoluteString)
            },
            fcmSetup: setup.fcmProjectID.map { project in
                FCMSummary(projectID: project, clientEmail: setup.fcmClientEmail ?? "",
                           address: setup.fcmURL ?? FCMConfiguration.productionURL.absoluteString)
            },
            changed: setup.updatedAt.map { at in
                localizer("apps.push.changed", ["time": localizer.dateTime(at), "who": Localizer.isolated(setup.updatedBy ?? "")])
            },
            apnsKey: secret("apnsKey", "apns_key", hint: "apns_key_hint"),
            apnsKeyID: field("apnsKeyID", "apns_key_id", hint: "apns_key_id_hint"),
            apnsTeamID: field("apnsTeamID", "apns_team_id", hint: "apns_team_id_hint"),
            apnsTopic: field("apnsTopic", "apns_topic", hint: "apns_topic_hint"),
            apnsURL: field("apnsURL", "address", type: "url", hint: "apns_url_hint", required: false),
            fcmServiceAccount: secret("fcmServiceAccount", "fcm_service_account", hint: "fcm_service_account_hint"),
            fcmURL: field("fcmURL", "address", type: "url", hint: "fcm_url_hint", required: false),
            pushDailyCap: FieldView(
                "pushDailyCap", label: localizer("apps.push.daily_cap"), type: "number",
                value: sentSettings ? form["pushDailyCap"] ?? "" : settings.dailyCap.map(String.init) ?? "",
                hint: localizer("apps.push.daily_cap_hint", ["max": localizer.number(AppPushSettings.dailyCapRange.upperBound)]),
                required: false, errors: errors),
            refreshOnChange: ChoiceView(
                name: "refreshOnChange", value: "on", label: localizer("apps.push.refresh_on_change"),
                hint: localizer("apps.push.refresh_on_change_hint"),
                checked: sentSettings ? form["refreshOnChange"] == "on" : settings.refreshOnChange),
            refreshMinutes: FieldView(
                "refreshMinutes", label: localizer("apps.push.refresh_minutes"), type: "number",
                value: sentSettings ? form["refreshMinutes"] ?? "" : String(settings.refreshMinutes),
                hint: localizer("apps.push.refresh_minutes_hint", ["max": localizer.number(AppPushSettings.refreshMinutesRange.upperBound)]),
                errors: errors))
    }

    func setAPNs(_ context: RequestContext) throws -> Response {
        let app = try apps.app(context)
        let form = context.form
        return try saving(context, app: app, flash: "apps.push.flash.apns_set") {
            try editor.setAPNs(
                appID: app.id, keyPEM: form["apnsKey"] ?? "", keyID: (form["apnsKeyID"] ?? "").trimmingCharacters(in: .whitespaces),
                teamID: (form["apnsTeamID"] ?? "").trimmingCharacters(in: .whitespaces),
                topic: (form["apnsTopic"] ?? "").trimmingCharacters(in: .whitespaces),
                url: form["apnsURL"]?.trimmingCharacters(in: .whitespaces), actor: context.actor, now: context.now)
        }
    }

    func setFCM(_ context: RequestContext) throws -> Response {
        let app = try apps.app(context)
        let form = context.form
        return try saving(context, app: app, flash: "apps.push.flash.fcm_set") {
            try editor.setFCM(
                appID: app.id, serviceAccountJSON: Data((form["fcmServiceAccount"] ?? "").utf8),
                url: form["fcmURL"]?.trimmingCharacters(in: .whitespaces), actor: context.actor, now: context.now)
        }
    }

    func saveSettings(_ context: RequestContext) throws -> Response {
        let app = try apps.app(context)
        let capText = (context.form["pushDailyCap"] ?? "").trimmingCharacters(in: .whitespaces)
        let minutesText = (context.form["refreshMinutes"] ?? "").trimmingCharacters(in: .whitespaces)
        return try saving(context, app: app, flash: "apps.push.flash.settings") {
            var settings = AppPushSettings(refreshOnChange: context.form["refreshOnChange"] == "on")
            var errors = InputProblems()
            /// A whole number typed in `field`, or its mistake added to `errors` (the range in the reader's digits).
            func number(_ text: String, _ field: String, in range: ClosedRange<Int>, _ key: String) -> Int? {
                if let number = Self.wholeNumber(text, in: range) { return number }
                errors.add(field, Phrase(key, ["min": .number(range.lowerBound), "max": .number(range.upperBound)]))
                return nil
            }
            if !capText.isEmpty {
                settings.dailyCap = number(capText, "pushDailyCap", in: AppPushSettings.dailyCapRange, "apps.push.errors.daily_cap")
            }
            settings.refreshMinutes = number(minutesText, "refreshMinutes", in: AppPushSettings.refreshMinutesRange, "apps.push.errors.refresh_minutes")
                ?? settings.refreshMinutes
            guard errors.isEmpty else { throw errors }
            try services.database.apps.setPushSettings(settings, appID: app.id, actor: context.actor, now: context.now)
        }
    }

    /// `text` as a number inside `range`: ASCII digits only, no more than the range's largest has, so whatever
    /// else was typed is refused, never converted.
    static func wholeNumber(_ text: String, in range: ClosedRange<Int>) -> Int? {
        guard !text.isEmpty, text.utf8.count <= String(range.upperBound).utf8.count, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let number = Int(text), range.contains(number) else { return nil }
        return number
    }

    /// Runs `change`; then the app page with `flash`, or the page again with the form's problems (422).
    private func saving(_ context: RequestContext, app: App, flash: String, _ change: () throws -> Void) throws -> Response {
        do {
            try change()
        } catch let problems as InputProblems {
            return try apps.renderShow(context, app: app, form: context.form, errors: problems, status: 422)
        }
        try services.flash(context, .success, context.localizer(flash, ["name": Localizer.isolated(app.name)]))
        return .redirect(to: "/apps/\(app.id)#push")
    }

    func confirmRemove(_ context: RequestContext) throws -> Response {
        let (app, provider) = try appAndProvider(context)
        let localizer = context.localizer
        let title = localizer("apps.push.remove.title_\(provider.rawValue)", ["name": Localizer.isolated(app.name)])
        let model = AppPages.Confirmation(
            heading: title,
            explanation: localizer("apps.push.remove.explanation_\(provider.rawValue)", ["name": Localizer.isolated(app.name)]),
            action: "/apps/\(app.id)/push/\(provider.rawValue)/remove", submit: localizer("apps.push.remove.submit"),
            back: "/apps/\(app.id)#push", keep: localizer("apps.push.remove.keep"))
        return try services.page(.confirmAppChange, title: title, model: model, context: context)
    }

    func remove(_ context: RequestContext) throws -> Response {
        let (app, provider) = try appAndProvider(context)
        try editor.remove(provider, appID: app.id, actor: context.actor, now: context.now)
        try services.flash(context, .success, context.localizer("apps.push.flash.removed_\(provider.rawValue)", ["name": Localizer.isolated(app.name)]))
        return .redirect(to: "/apps/\(app.id)#push")
    }

    /// The app and the provider named in the path; a provider that is not set up has nothing to remove (404).
    private func appAndProvider(_ context: RequestContext) throws -> (App, PushProvider) {
        let app = try apps.app(context)
        guard let provider = context.parameters["provider"].flatMap(PushProvider.init(rawValue:)) else { throw HTTPError.notFound }
        let setup = try editor.setup(appID: app.id)
        guard provider == .apns ? setup.hasAPNs : setup.hasFCM else { throw HTTPError.notFound }
        return (app, provider)
    }
}
