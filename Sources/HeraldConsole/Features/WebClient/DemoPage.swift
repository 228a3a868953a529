import HeraldDomain
import HeraldHTTP

/// `GET /sdk/v1/demo`: a public page that loads `herald.js` from this Herald, so a marketer can see an
/// app's campaigns in a real page. It holds no secret: the key a visitor pastes stays in their browser.
/// Its words follow the browser's language (no session is read: anyone may open it).
struct DemoPage: Sendable {
    let services: Services

    struct DemoView: Sendable {
        /// The scopes a key needs here, shown as code.
        let scopes: [String]
        /// Where demo.js keeps the key in localStorage.
        let keyStorage: String
    }

    func show(_ context: RequestContext) throws -> Response {
        var context = context
        context.localizer = services.localization.localizer(for: context.request, user: nil)
        let model = DemoView(scopes: [APIScope.feedRead.rawValue, APIScope.eventsWrite.rawValue], keyStorage: "herald.demo.apiKey")
        var response = try services.page(.demo, title: context.localizer("demo.title"), model: model, context: context)
        response.headers.set("Vary", "Accept-Language")
        response.headers.set("Cache-Control", "no-cache")
        return response
    }
}
