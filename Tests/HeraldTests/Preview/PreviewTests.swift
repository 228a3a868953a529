import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// The layout preview, in process: the framed document each layout renders to, its colors, images,
/// buttons and direction, and the pages that embed it.
@Suite("Layout preview")
struct PreviewTests {
    /// The composer's fields for one message of `layout`, plus whatever `extra` adds or overrides.
    static func fields(_ layout: String, _ extra: [(String, String)] = []) -> [(String, String)] {
        [("name", "Preview"), ("message.layout", layout)] + extra
    }

    /// POSTs composer fields to `/campaigns/preview` as the composer's form would (with its CSRF token).
    static func preview(_ browser: TestBrowser, _ fields: [(String, String)]) throws -> Response {
        try browser.submit("/campaigns/preview", from: "/campaigns/new", pairs: fields)
    }

    /// The nonce the framed document's policy allows, which its `<style>` element must carry.
    static func styleNonce(_ response: Response) throws -> String {
        let policy = try #require(response.headers["Content-Security-Policy"])
        let match = try #require(policy.firstMatch(of: /'nonce-([A-Za-z0-9_\-+\/=]+)'/))
        return String(match.1)
    }

    /// The contents of the document's generated `<style nonce>` element.
    static func rules(_ html: String) throws -> String {
        let match = try #require(html.firstMatch(of: /<style nonce="[^"]+">([^<]*)<\/style>/))
        return String(match.1)
    }

    /// `first` occurs in `html`, before `second`.
    static func ordered(_ html: String, _ first: String, _ second: String) -> Bool {
        guard let a = html.range(of: first), let b = html.range(of: second) else { return false }
        return a.lowerBound < b.lowerBound
    }

    static let cardFields = ComposerTests.cardFields(app: 1)

    // MARK: The framed document

    @Test("The composer's unsaved card renders as a framable document: texts, image, buttons in order, colors, direction")
    func card() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let response = try Self.preview(admin, ComposerTests.cardFields(app: shop))
        #expect(response.status == 200)
        let html = response.text

        // A document of its own, framable by our pages only, with no script and styles allowed by a nonce
        let nonce = try Self.styleNonce(response)
        let policy = try #require(response.headers["Content-Security-Policy"])
        #expect(policy.contains("script-src 'none'"))
        #expect(policy.contains("frame-ancestors 'self'"))
        #expect(response.headers["X-Frame-Options"] == "SAMEORIGIN")
        #expect(html.contains(#"<style nonce="\#(nonce)">"#))
        #expect(html.contains(#"<link rel="stylesheet" href="/public/css/preview.css">"#))
        #expect(!html.contains("<script"))

        // The card on a dimmed backdrop, left to right, with title, body and the portrait image
        #expect(html.contains(#"<div class="m-layer m-dimmed" data-layer>"#))
        #expect(html.contains(#"<div class="m-message m-card m-surface" dir="ltr" lang="" data-message data-layout="card">"#))
        #expect(html.contains(#"<h2 class="m-title" dir="auto" data-title>Spring sale</h2>"#))
        #expect(html.contains(#"<p class="m-body" dir="auto" data-body>20% off everything</p>"#))
        #expect(html.contains(#"data-image="portrait" data-image-url="https://example.com/portrait.png""#))
        #expect(html.contains(#"<img class="m-img" src="https://example.com/portrait.png""#))
        #expect(!html.contains("landscape.png"), "portrait frames show the portrait image")

        // Image on top, then text, then buttons: secondary (leading) before primary (trailing)
        #expect(Self.ordered(html, "data-image=", "data-title"))
        #expect(Self.ordered(html, "data-body", #"data-button="secondary""#))
        #expect(Self.ordered(html, #"data-button="secondary""#, #"data-button="primary""#))
        // Buttons do not navigate; hovering says where they go
        #expect(html.contains(#"<button type="button" class="m-button m-button-primary" dir="auto" title="Opens https://example.com/shop" data-button="primary" data-href="https://example.com/shop">Shop now</button>"#))
        #expect(html.contains(#"title="Dismisses the message" data-button="secondary" data-href="">Later</button>"#))
        #expect(!html.contains("<a "))

        // Colors: #AARRGGBB becomes CSS #RRGGBBAA; unset ones keep the component's defaults
        let rules = try Self.rules(html)
        #expect(rules.contains(".preview-doc .m-surface{background-color:#FFFFFF}"))
        #expect(rules.contains(".preview-doc .m-title{color:#1A73E8}"))
        #expect(rules.contains(".preview-doc .m-button-primary{background-color:#1A73E8CC}"))
        #expect(!rules.contains(".m-body{"), "no body color was set")
        #expect(!rules.contains(".m-button-secondary{"), "no secondary colors were set")

        // A complete card would display: no problems listed; the default frame is a light portrait phone
        #expect(!html.contains("data-problems"))
        #expect(html.contains(#"data-device="phone" data-orientation="portrait" data-theme="light" data-screen-size="390x844""#))
        #expect(html.contains("Phone · Portrait · Light"))
    }

    @Test("A card held in landscape shows its landscape image beside the text, and falls back to the portrait one")
    func cardLandscape() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let landscape = try Self.preview(admin, ComposerTests.cardFields(app: shop) + [("preview.orientation", "landscape")]).text
        #expect(landscape.contains(#"class="m-message m-card m-surface m-split""#))
        #expect(landscape.contains(#"data-image="landscape" data-image-url="https://example.com/landscape.png""#))
        #expect(landscape.contains(#"src="https://example.com/landscape.png""#))
        #expect(!landscape.contains("portrait.png"))
        #expect(landscape.contains(#"data-orientation="landscape""#))
        #expect(landscape.contains(#"data-screen-size="844x390""#))

        let withoutLandscape = ComposerTests.cardFields(app: shop).filter { $0.0 != "message.landscapeImageUrl" }
        let fallback = try Self.preview(admin, withoutLandscape + [("preview.orientation", "landscape")]).text
        #expect(fallback.contains(#"data-image="portrait" data-image-url="https://example.com/portrait.png""#))
        #expect(fallback.contains(#"alt="Portrait image (no landscape image)""#))

        let tablet = try Self.preview(admin, ComposerTests.cardFields(app: shop) + [("preview.device", "tablet"), ("preview.orientation", "landscape"), ("preview.theme", "dark")]).text
        #expect(tablet.contains(#"data-device="tablet" data-orientation="landscape" data-theme="dark" data-screen-size="1180x820""#))
        #expect(tablet.contains(#"<body class="preview-doc theme-dark">"#))
        #expect(tablet.contains("landscape.png"))
    }

    @Test("A modal: close button, optional image, one button, translucent background")
    func modal() async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let html = try Self.preview(admin, Self.fields("modal", [
            ("message.title.text", "Dark mode is here"), ("message.body.text", "Turn it on in Settings."),
            ("message.body.color", "#FFE8EAED"), ("message.backgroundColor", "#80000000"),
            ("message.primaryAction.text", "Try it"), ("message.primaryAction.url", "myapp://settings"),
            ("message.primaryAction.textColor", "#000000"), ("message.primaryAction.buttonColor", "#8AB4F8"),
            ("message.secondaryAction.text", "Never shown"),
        ])).text
        #expect(html.contains(#"<div class="m-layer m-dimmed" data-layer>"#))
        #expect(html.contains(#"data-layout="modal""#))
        #expect(html.contains("data-close"))
        #expect(html.contains(">Dark mode is here</h2>"))
        #expect(!html.contains("data-image="), "no image was given, and the modal's image is optional")
        #expect(html.contains(#"title="Opens myapp://settings" data-button="primary""#))
        #expect(!html.contains("Never shown"), "a modal has one button")
        let rules = try Self.rules(html)
        #expect(rules.contains(".preview-doc .m-surface{background-color:#00000080}"))
        #expect(rules.contains(".preview-doc .m-body{color:#E8EAEDFF}"))
        #expect(rules.contains(".preview-doc .m-button-primary{background-color:#8AB4F8;color:#000000}"))
        #expect(!html.contains("data-problems"))
    }

    @Test("Image only: the image, a close button and the tap action on hover; no text")
    func imageOnly() async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let html = try Self.preview(admin, Self.fields("image_only", [
            ("message.imageUrl", "https://cdn.example.com/poster.jpg?v=2&size=large"), ("message.action.url", "https://example.com/summer"),
            ("message.title.text", "Dropped by the layout"),
        ])).text
        #expect(html.contains(#"<div class="m-layer m-dimmed" data-layer>"#))
        #expect(html.contains(#"data-layout="image_only" title="Tapping the message opens https://example.com/summer""#))
        #expect(html.contains(#"src="https://cdn.example.com/poster.jpg?v=2&amp;size=large""#))
        #expect(html.contains("data-close"))
        #expect(!html.contains("data-title"))
        #expect(!html.contains("Dropped by the layout"))
        #expect(!html.contains("data-problems"))
    }

    @Test("Banner: a strip at the top on an undimmed app, tap action, auto-dismiss in the caption")
    func banner() async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let html = try Self.preview(admin, Self.fields("banner", [
            ("message.title.text", "Your order has shipped 📦"), ("message.body.text", "Arrives Thursday."),
            ("message.title.color", "#FFFFFF"), ("message.backgroundColor", "#E6202124"),
            ("message.imageUrl", "https://example.com/icon.png"), ("message.action.url", "myapp://orders/1042"),
        ])).text
        #expect(html.contains(#"<div class="m-layer" data-layer>"#), "banners do not dim the app")
        #expect(html.contains(#"class="m-message m-banner m-surface" dir="ltr" lang="" data-message data-layout="banner" title="Tapping the message opens myapp://orders/1042""#))
        #expect(html.contains(">Your order has shipped 📦</h2>"))
        #expect(html.contains(#"data-image="image" data-image-url="https://example.com/icon.png""#))
        #expect(html.contains("hides after 12 s"))
        #expect(try Self.rules(html).contains(".preview-doc .m-surface{background-color:#202124E6}"))

        let quick = try Self.preview(admin, Self.fields("banner", [("message.title.text", "Hi"), ("message.dismiss.seconds", "5")])).text
        #expect(quick.contains("hides after 5 s"))
        #expect(!quick.contains("data-image="), "a banner's image is optional")
    }

    @Test("Slide-up: at the chosen edge, with a chevron only when it has a tap action")
    func slideup() async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let top = try Self.preview(admin, Self.fields("slideup", [
            ("message.body.text", "Free delivery today only."), ("message.slideFrom", "top"),
            ("message.action.url", "myapp://store"), ("message.imageUrl", "https://example.com/icon.png"),
        ])).text
        #expect(top.contains(#"data-layout="slideup" data-edge="top""#))
        #expect(top.contains(#"class="m-message m-slideup m-surface m-edge-top""#))
        #expect(top.contains("m-chevron"))
        #expect(top.contains(">Free delivery today only.</p>"))
        #expect(top.contains(#"<div class="m-layer" data-layer>"#))

        let bottom = try Self.preview(admin, Self.fields("slideup", [("message.body.text", "Hello")])).text
        #expect(bottom.contains(#"data-edge="bottom""#), "slide-ups come from the bottom unless told otherwise")
        #expect(!bottom.contains("m-chevron"))
        #expect(!bottom.contains("data-problems"))
    }

    @Test("Full screen: image, text, two buttons; locked to portrait, a landscape frame shows why it is not displayed")
    func fullscreen() async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let fields = Self.fields("fullscreen", [
            ("message.title.text", "Meet Herald Pro"), ("message.body.text", "Free for 14 days."),
            ("message.imageUrl", "https://example.com/hero.png"), ("message.orientation", "portrait"),
            ("message.primaryAction.text", "Start"), ("message.primaryAction.url", "https://example.com/pro"),
            ("message.secondaryAction.text", "Later"), ("message.secondaryAction.url", "myapp://later"),
        ])
        let portrait = try Self.preview(admin, fields).text
        #expect(portrait.contains(#"data-layout="fullscreen""#))
        #expect(portrait.contains(#"<div class="m-layer m-dimmed" data-layer>"#))
        #expect(portrait.contains("data-close"))
        #expect(portrait.contains(#"src="https://example.com/hero.png""#))
        #expect(Self.ordered(portrait, #"title="Opens myapp://later" data-button="secondary""#, #"title="Opens https://example.com/pro" data-button="primary""#))
        #expect(!portrait.contains("data-orientation-notice"))

        let landscape = try Self.preview(admin, fields + [("preview.orientation", "landscape")])
        #expect(landscape.status == 200)
        #expect(landscape.text.contains("data-orientation-notice"))
        #expect(landscape.text.contains("Not displayed in landscape"))
        #expect(landscape.text.contains("locked to portrait"))
        #expect(!landscape.text.contains("data-message"), "a device held the other way does not draw it")

        let any = try Self.preview(admin, fields.filter { $0.0 != "message.orientation" } + [("preview.orientation", "landscape")]).text
        #expect(any.contains("data-message"))
    }

    @Test("Right-to-left text lays the message out right to left; every text keeps dir=auto", arguments: [
        ("حراج بهاره", "rtl"), ("מבצע אביב", "rtl"), ("تخفيضات الربيع", "rtl"), ("🌷 ۲۰٪ حراج", "rtl"),
        ("۲۰٪ off everything", "ltr"), ("Spring sale", "ltr"), ("春のセール", "ltr"),
    ])
    func direction(title: String, direction: String) async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let html = try Self.preview(admin, Self.fields("modal", [
            ("message.title.text", title), ("message.primaryAction.text", "OK"), ("message.primaryAction.url", "myapp://ok"),
        ])).text
        #expect(html.contains(#"class="m-message m-modal m-surface" dir="\#(direction)""#))
        #expect(html.contains(#"<h2 class="m-title" dir="auto" data-title>\#(title)</h2>"#), "the text survives unchanged")
        #expect(html.contains(#"class="m-button m-button-primary" dir="auto""#))
    }

    @Test("A message a device would drop says why, and a missing required image is a labeled placeholder")
    func wouldNotDisplay() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let card = ComposerTests.cardFields(app: shop).filter { $0.0 != "message.imageUrl" && $0.0 != "message.landscapeImageUrl" }
        let html = try Self.preview(admin, card).text
        #expect(html.contains("data-problems"))
        #expect(html.contains("Devices would not show this message yet"))
        #expect(html.contains("A card needs a portrait image"))
        #expect(html.contains(#"<div class="m-media m-media-missing" data-image="portrait">"#))
        #expect(html.contains("Portrait image missing"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("Give the campaign a name"), "only what a device checks is listed")

        let insecure = try Self.preview(admin, Self.fields("image_only", [("message.imageUrl", "http://example.com/a.png")])).text
        #expect(insecure.contains("not an https address"))
        #expect(insecure.contains("Image URL:"))
        #expect(!insecure.contains("<img"))

        let slideup = try Self.preview(admin, Self.fields("slideup")).text
        #expect(slideup.contains("A slide-up needs its text."))
    }

    @Test("Nothing typed reaches the style sheet or the markup unescaped; each answer has a fresh nonce")
    func hostileInput() async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let fields = Self.fields("modal", [
            ("message.title.text", "</style><script>alert(1)</script>"), ("message.title.color", "red;}body{display:none"),
            ("message.backgroundColor", "#FFF}*{x:y"), ("message.primaryAction.text", "\"><img src=x onerror=alert(1)>"),
            ("message.primaryAction.url", "javascript:alert(1)"),
        ])
        let first = try Self.preview(admin, fields)
        let html = first.text
        let rules = try Self.rules(html)
        #expect(rules.isEmpty, "invalid colors are left out: \(rules)")
        #expect(!html.contains("<script>"))
        #expect(html.contains("&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!html.contains("<img src=x"))
        #expect(html.contains("Title color:"))
        #expect(html.contains("Background color:"))
        #expect(html.contains("Primary button action:"))

        let second = try Self.preview(admin, fields)
        #expect(try Self.styleNonce(first) != Self.styleNonce(second))
    }

    // MARK: Access and pages

    @Test("POST /campaigns/preview needs the form's CSRF token and an editor")
    func access() async throws {
        let (app, admin, shop) = try await ComposerTests.setUp()
        let forged = admin.post("/campaigns/preview", ComposerTests.cardFields(app: shop))
        #expect(forged.status == 403)

        try app.createUser(email: "viewer@example.com", role: .viewer)
        let viewer = app.browser(address: "10.2.0.1")
        _ = try viewer.submit("/login", from: "/login", ["email": "viewer@example.com", "password": "correct horse battery"])
        let refused = try viewer.submit("/campaigns/preview", from: "/campaigns", pairs: ComposerTests.cardFields(app: shop))
        #expect(refused.status == 403)
        #expect(viewer.get("/preview/gallery").status == 200)
        #expect(viewer.get("/preview/gallery/frame?layout=card").status == 200)

        let signedOut = app.browser(address: "10.2.0.2")
        #expect(signedOut.get("/preview/gallery/frame?layout=card").status == 303)
    }

    @Test("A saved campaign's preview page frames its saved message, with device, orientation and theme switchers")
    func campaignPage() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let saved = try admin.submit("/campaigns", from: "/campaigns/new", pairs: ComposerTests.cardFields(app: shop) + [("intent", "draft")])
        let id = try ComposerTests.campaignID(saved)
        #expect(admin.get("/campaigns/\(id)").text.contains(#"<a class="button" href="/campaigns/\#(id)/preview">Preview</a>"#))

        let page = admin.get("/campaigns/\(id)/preview?device=tablet&orientation=landscape&theme=dark")
        #expect(page.status == 200)
        #expect(page.headers["X-Frame-Options"] == "DENY", "the page itself is not framable")
        let html = page.text
        #expect(html.contains(#"name="preview" title="Preview of the message" src="/campaigns/\#(id)/preview/frame?device=tablet&amp;orientation=landscape&amp;theme=dark""#))
        #expect(html.contains(#"<script src="/public/js/preview.js" defer></script>"#))
        #expect(html.contains(#"name="device" value="tablet" checked"#))
        #expect(html.contains(#"name="orientation" value="landscape" checked"#))
        #expect(html.contains(#"name="theme" value="dark" checked"#))

        let frame = admin.get("/campaigns/\(id)/preview/frame?device=tablet&orientation=landscape&theme=dark")
        #expect(frame.status == 200)
        #expect(frame.headers["X-Frame-Options"] == "SAMEORIGIN")
        #expect(frame.text.contains(#"data-device="tablet" data-orientation="landscape" data-theme="dark""#))
        #expect(frame.text.contains(#"src="https://example.com/landscape.png""#))
        #expect(frame.text.contains(">Spring sale</h2>"))
        #expect(admin.get("/campaigns/999/preview").status == 404)
        #expect(admin.get("/campaigns/999/preview/frame").status == 404)
    }

    @Test("The composer frames a live preview beside the form, with a Preview button that works without script")
    func composer() async throws {
        let (_, admin, shop) = try await ComposerTests.setUp()
        let new = admin.get("/campaigns/new").text
        #expect(new.contains(#"name="preview" title="Preview of the message" src="/preview/blank""#))
        #expect(new.contains(#"formaction="/campaigns/preview" formtarget="preview""#))
        #expect(new.contains(#"<script src="/public/js/preview.js" defer></script>"#))
        #expect(new.contains(#"name="preview.device""#))
        #expect(admin.get("/preview/blank").text.contains("Press “Preview”"))

        let saved = try admin.submit("/campaigns", from: "/campaigns/new", pairs: ComposerTests.cardFields(app: shop) + [("intent", "draft")])
        let id = try ComposerTests.campaignID(saved)
        let edit = admin.get("/campaigns/\(id)/edit").text
        #expect(edit.contains(#"src="/campaigns/\#(id)/preview/frame""#))
        // The composer's own fields still save as before: the preview's options are ignored
        let resaved = try admin.submit("/campaigns/\(id)", from: "/campaigns/\(id)/edit", pairs: ComposerTests.cardFields(app: shop)
            + [("intent", "draft"), ("revision", "1"), ("preview.device", "tablet")])
        #expect(resaved.status == 303)
    }

    @Test("The gallery shows all six layouts with sample content, in English or Persian, at either edge")
    func gallery() async throws {
        let (_, admin, _) = try await ComposerTests.setUp()
        let page = admin.get("/preview/gallery?orientation=landscape&lang=fa").text
        for layout in Message.Layout.allCases {
            #expect(page.contains(#"data-gallery-frame="\#(layout.rawValue)""#))
            #expect(page.contains(#"src="/preview/gallery/frame?layout=\#(layout.rawValue)&amp;device=phone&amp;orientation=landscape&amp;theme=light&amp;lang=fa""#))
            for language in ["en", "fa"] {
                let frame = admin.get("/preview/gallery/frame?layout=\(layout.rawValue)&lang=\(language)")
                #expect(frame.status == 200)
                #expect(frame.text.contains(#"data-layout="\#(layout.rawValue)""#))
                #expect(!frame.text.contains("data-problems"), "\(layout) samples would display")
                // An image has no text to read a direction from
                let rightToLeft = language == "fa" && layout != .imageOnly
                #expect(frame.text.contains(rightToLeft ? #"dir="rtl""# : #"dir="ltr""#), "\(layout) \(language)")
            }
        }
        #expect(admin.get("/preview/gallery/frame?layout=slideup&edge=top").text.contains(#"data-edge="top""#))
        #expect(admin.get("/preview/gallery/frame?layout=poster").status == 404)
    }
}
