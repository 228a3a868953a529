import Foundation
import HeraldHTTP
import HeraldStorage

/// The app page's web origins: pages there may use the app's keys from visitors' browsers (CORS on the
/// feed and events). Added with a form, removed after a confirmation page.
struct AppOriginPages: Sendable {
    let services: Services

    private var apps: AppPages { AppPages(services: services) }

    func add(_ context: RequestContext) throws -> Response {
        let app = try apps.app(context)
        do {
            let added = try AppRegistry(database: services.database).addOrigin(
                appID: app.id, origin: context.form["origin"] ?? "", actor: context.actor, now: context.now)
            try services.flash(context, .success, context.localizer("apps.flash.origin_added", [
                "origin": Localizer.isolated(added.origin), "name": Localizer.isolated(app.name),
            ]))
            return .redirect(to: "/apps/\(app.id)")
        } catch let problems as InputProblems {
            return try apps.renderShow(context, app: app, form: context.form, errors: problems, status: 422)
        }
    }

    func confirmRemove(_ context: RequestContext) throws -> Response {
        let (app, allowed) = try appAndOrigin(context)
        let localizer = context.localizer
        let title = localizer("apps.remove_origin.title", ["origin": Localizer.isolated(allowed.origin)])
        let model = AppPages.Confirmation(
            heading: title,
            explanation: localizer("apps.remove_origin.explanation", [
                "origin": Localizer.isolated(allowed.origin), "app": Localizer.isolated(app.name),
            ]),
            action: "/apps/\(app.id)/origins/\(allowed.id)/remove", submit: localizer("apps.remove_origin.submit"),
            back: "/apps/\(app.id)", keep: localizer("apps.remove_origin.keep"))
        return try services.page(.confirmAppChange, title: title, model: model, context: context)
    }

    func remove(_ context: RequestContext) throws -> Response {
        let (app, allowed) = try appAndOrigin(context)
        try services.database.apps.removeOrigin(id: allowed.id, appID: app.id, actor: context.actor, now: context.now)
        try services.flash(context, .success, context.localizer("apps.flash.origin_removed", [
            "origin": Localizer.isolated(allowed.origin), "name": Localizer.isolated(app.name),
        ]))
        return .redirect(to: "/apps/\(app.id)")
    }

    private func appAndOrigin(_ context: RequestContext) throws -> (App, AllowedOrigin) {
        let app = try apps.app(context)
        let originID = try context.id("originID")
        guard let allowed = try services.database.apps.origins(appID: app.id).first(where: { $0.id == originID }) else {
            throw HTTPError.notFound
        }
        return (app, allowed)
    }
}
