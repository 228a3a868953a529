import HeraldDomain
import HeraldHTTP

/// `GET /sdk/v1/demo`: a public page that loads `herald.js` from this Herald, so a marketer can see an
/// app's campaigns in a real page. It holds no secret: the key a visitor pastes stays in their browser.
/// Its words are the signed-in reader's console language, else the browser's: the session is read but not
/// extended, so anyone may open it and a visitor's visit stores nothing.
struct DemoPage: Sendable {
    let services: Services

    struct DemoView: Sendable {
        /// The scopes a key needs here, shown as code.
        let scopes: [String]
        /// Where demo.js keeps the key in localStorage.
        let keyStorage: String
    }

    func show(_ context: RequestContext) throws -> Response {
        let context = services.readingSignedInUser(context)
        let model = DemoView(scopes: [APIScope.feedRead.rawValue, APIScope.eventsWrite.rawValue], keyStorage: "herald.demo.apiKey")
        var response = try services.page(.demo, title: context.localizer("demo.title"), model: model, context: context)
        response.headers.set("Vary", "Accept-Language, Cookie")
        // Signed in, the page names its reader (the menu): no shared cache may keep it.
        response.headers.set("Cache-Control", context.user == nil ? "no-cache" : "private, no-cache")
        return response
    }
}
