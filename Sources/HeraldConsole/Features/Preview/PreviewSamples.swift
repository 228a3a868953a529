import Foundation
import HeraldDomain

/// The gallery's sample messages: one per layout, in English or Persian, with drawn images
/// (data: URLs, so the gallery works offline and without any third-party host).
enum PreviewSamples {
    enum Language: String, CaseIterable, Sendable {
        case en, fa

        var title: String { self == .en ? "English" : "فارسی" }
    }

    static let portraitImage = art(width: 600, height: 400, sky: ("#8AB4F8", "#1A73E8"), ground: "#34A853")
    static let landscapeImage = art(width: 600, height: 600, sky: ("#FDE293", "#F29900"), ground: "#188038")
    static let iconImage = art(width: 200, height: 200, sky: ("#F6AEA9", "#D93025"), ground: "#FBBC04")
    static let posterImage = art(width: 600, height: 750, sky: ("#D7AEFB", "#8430CE"), ground: "#1E8E3E")
    static let heroImage = art(width: 1200, height: 1000, sky: ("#A8DAB5", "#137333"), ground: "#0D652D")

    /// Every image address the samples use; only these (and https addresses) are drawn.
    static let images: Set<String> = [portraitImage, landscapeImage, iconImage, posterImage, heroImage]

    static func message(_ layout: Message.Layout, language: Language, edge: Message.SlideEdge = .bottom) -> Message {
        let persian = language == .fa
        func text(_ english: String, _ farsi: String, color: String? = nil) -> Message.Text {
            Message.Text(text: persian ? farsi : english, color: color)
        }
        func label(_ english: String, _ farsi: String) -> String { persian ? farsi : english }
        switch layout {
        case .card:
            return Message(
                layout: .card, title: text("Spring sale", "حراج بهاره", color: "#202124"),
                body: text("20% off everything in the store until Sunday. Treat yourself 🌷",
                           "۲۰٪ تخفیف روی همه‌چیز فروشگاه تا یکشنبه. به خودتان هدیه بدهید 🌷", color: "#5F6368"),
                imageUrl: portraitImage, landscapeImageUrl: landscapeImage, backgroundColor: "#FFFFFF",
                primaryAction: Message.Button(text: label("Shop now", "خرید کنید"), textColor: "#FFFFFF", buttonColor: "#1A73E8",
                                              url: "https://example.com/shop"),
                secondaryAction: Message.Button(text: label("Not now", "بعداً"), textColor: "#1A73E8", buttonColor: "#FFFFFF"))
        case .modal:
            return Message(
                layout: .modal, title: text("Dark mode is here", "حالت تاریک آمد", color: "#E8EAED"),
                body: text("Easier on your eyes at night. Turn it on in Settings → Appearance.",
                           "شب‌ها برای چشم‌هایتان راحت‌تر است. از تنظیمات ← ظاهر روشنش کنید.", color: "#BDC1C6"),
                imageUrl: portraitImage, backgroundColor: "#F2202124",
                primaryAction: Message.Button(text: label("Try it", "امتحان کنید"), textColor: "#202124", buttonColor: "#8AB4F8",
                                              url: "myapp://settings/appearance"))
        case .imageOnly:
            return Message(layout: .imageOnly, imageUrl: posterImage, action: Message.Action(url: "https://example.com/summer"))
        case .banner:
            return Message(
                layout: .banner, title: text("Your order has shipped 📦", "سفارش شما ارسال شد 📦", color: "#FFFFFF"),
                body: text("It arrives Thursday. Tap to follow the courier on the map.",
                           "پنجشنبه می‌رسد. برای دنبال کردن پیک روی نقشه بزنید.", color: "#E8EAED"),
                imageUrl: iconImage, backgroundColor: "#E6202124", action: Message.Action(url: "myapp://orders/1042"),
                dismiss: Message.Dismiss(seconds: 12))
        case .slideup:
            return Message(
                layout: .slideup,
                body: text("Free delivery on every order over $30, today only. Tap to see what is new in the store this week.",
                           "ارسال رایگان برای هر سفارش بالای ۳۰ دلار، فقط امروز. برای دیدن تازه‌های این هفته بزنید.", color: "#202124"),
                imageUrl: iconImage, action: Message.Action(url: "myapp://store/new"), dismiss: Message.Dismiss(seconds: 8),
                slideFrom: edge)
        case .fullscreen:
            return Message(
                layout: .fullscreen, title: text("Meet Herald Pro", "با هرالد پرو آشنا شوید", color: "#202124"),
                body: text("Unlimited campaigns, test devices that update at once, and reports you can download. Free for 14 days.",
                           "کارزارهای نامحدود، دستگاه‌های آزمایشی که فوراً به‌روز می‌شوند و گزارش‌هایی که می‌توانید دانلود کنید. ۱۴ روز رایگان.",
                           color: "#3C4043"),
                imageUrl: heroImage, backgroundColor: "#FFFFFF",
                primaryAction: Message.Button(text: label("Start free trial", "شروع دورهٔ رایگان"), textColor: "#FFFFFF",
                                              buttonColor: "#137333", url: "https://example.com/pro"),
                secondaryAction: Message.Button(text: label("Maybe later", "شاید بعداً"), textColor: "#137333", buttonColor: "#E6F4EA"),
                orientation: .any)
        }
    }

    /// Where each layout comes from, for the gallery's captions.
    static func origin(_ layout: Message.Layout) -> String {
        switch layout {
        case .card, .modal, .imageOnly, .banner: "Firebase In-App Messaging"
        case .slideup, .fullscreen: "Braze"
        }
    }

    /// A small landscape drawing (sky, sun, hills) as an SVG data: URL of the given proportions.
    private static func art(width: Int, height: Int, sky: (String, String), ground: String) -> String {
        let w = Double(width), h = Double(height)
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)">\
            <defs><linearGradient id="s" x1="0" y1="0" x2="0.4" y2="1">\
            <stop offset="0" stop-color="\(sky.0)"/><stop offset="1" stop-color="\(sky.1)"/></linearGradient></defs>\
            <rect width="\(width)" height="\(height)" fill="url(#s)"/>\
            <circle cx="\(Int(w * 0.72))" cy="\(Int(h * 0.3))" r="\(Int(min(w, h) * 0.13))" fill="#FFF7D6" fill-opacity="0.9"/>\
            <path d="M0 \(Int(h * 0.78)) Q\(Int(w * 0.25)) \(Int(h * 0.55)) \(Int(w * 0.5)) \(Int(h * 0.74)) T\(width) \(Int(h * 0.7)) V\(height) H0Z" \
            fill="\(ground)"/>\
            <path d="M0 \(Int(h * 0.9)) Q\(Int(w * 0.4)) \(Int(h * 0.72)) \(width) \(Int(h * 0.88)) V\(height) H0Z" fill="#000" fill-opacity="0.18"/>\
            </svg>
            """
        return "data:image/svg+xml;base64," + Data(svg.utf8).base64EncodedString()
    }
}
