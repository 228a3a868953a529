import Foundation
import HeraldDomain

/// Complete, valid campaigns: one of each layout, using every field the layout has.
package enum RulesFixtures {
    /// 2026-01-01T00:00:00Z, a whole second so that ISO 8601 (no fractions) round-trips it exactly.
    package static let start = Date(timeIntervalSince1970: 1_767_225_600)
    package static let end = Date(timeIntervalSince1970: 1_767_225_600 + 14 * 86_400)

    package static func campaign(_ layout: Message.Layout) -> Campaign {
        Campaign(
            app: 7,
            name: "Spring sale (\(layout.title))",
            description: "Shown to active shoppers during the spring sale.",
            priority: 3,
            schedule: Schedule(start: start, end: end, timeZone: "Europe/Paris"),
            triggers: [
                Trigger(event: "app_launch"),
                Trigger(event: Trigger.purchaseEvent, filters: [PropertyFilter(property: "amount", op: .gte, value: .number(20))]),
            ],
            frequency: Frequency(type: .everyNDays, days: 3),
            targeting: Targeting(
                platforms: [.ios, .android],
                appVersion: .init(op: .regex, value: #"^2\.[0-9]+"#),
                languages: ["en", "fa", "pt-BR"],
                countries: ["US", "IR"],
                userProperties: [PropertyFilter(property: "plan", op: .eq, value: .string("free"))],
                daysSinceFirstOpen: .init(min: 1, max: 30),
                percentage: 50
            ),
            message: message(layout),
            data: CustomData([.init(key: "campaign", value: "spring"), .init(key: "discount", value: "20")])
        )
    }

    package static func message(_ layout: Message.Layout) -> Message {
        switch layout {
        case .card:
            Message(
                layout: .card,
                title: .init(text: "Spring sale", color: "#202124"),
                body: .init(text: "Up to 50% off everything in the shop.", color: "#5F6368"),
                imageUrl: "https://cdn.example.com/card-portrait.png",
                landscapeImageUrl: "https://cdn.example.com/card-landscape.png",
                backgroundColor: "#FFFFFF",
                primaryAction: .init(text: "Shop now", textColor: "#FFFFFF", buttonColor: "#1A73E8", url: "https://shop.example.com/sale"),
                secondaryAction: .init(text: "Remind me", textColor: "#1A73E8", buttonColor: "#00FFFFFF", url: "myapp://remind")
            )
        case .modal:
            Message(
                layout: .modal,
                title: .init(text: "Welcome back", color: "#000000"),
                body: .init(text: "Your cart is waiting for you."),
                imageUrl: "https://cdn.example.com/modal.png",
                backgroundColor: "#CCFFFFFF",
                primaryAction: .init(text: "Open cart", url: "myapp://cart")
            )
        case .imageOnly:
            Message(layout: .imageOnly, imageUrl: "https://cdn.example.com/poster.jpg", action: .init(url: "https://shop.example.com/poster"))
        case .banner:
            Message(
                layout: .banner,
                title: .init(text: "Free shipping today"),
                body: .init(text: "On every order over $20."),
                imageUrl: "https://cdn.example.com/truck.png",
                backgroundColor: "#FFF8E1",
                action: .init(url: "myapp://offers/1"),
                dismiss: .init(seconds: 12)
            )
        case .slideup:
            Message(
                layout: .slideup,
                body: .init(text: "New: dark mode is here."),
                imageUrl: "https://cdn.example.com/moon.png",
                action: .init(url: "myapp://settings/appearance"),
                dismiss: .init(seconds: 8),
                slideFrom: .bottom
            )
        case .fullscreen:
            Message(
                layout: .fullscreen,
                title: .init(text: "Meet Herald 2", color: "#FFFFFF"),
                body: .init(text: "Everything you loved, twice as fast.", color: "#E8EAED"),
                imageUrl: "https://cdn.example.com/hero.jpg",
                backgroundColor: "#202124",
                primaryAction: .init(text: "Take the tour", textColor: "#202124", buttonColor: "#8AB4F8", url: "myapp://tour"),
                // A secondary button without a URL dismisses the message.
                secondaryAction: .init(text: "Not now", textColor: "#8AB4F8"),
                orientation: .portrait
            )
        }
    }

    /// A valid campaign of `layout`, changed by `edit`.
    package static func campaign(_ layout: Message.Layout, _ edit: (inout Campaign) -> Void) -> Campaign {
        var campaign = campaign(layout)
        edit(&campaign)
        return campaign
    }

    /// A message that fills in every field, whatever its layout.
    package static func everything(_ layout: Message.Layout) -> Message {
        Message(
            layout: layout,
            title: .init(text: "Title", color: "#111111"),
            body: .init(text: "Body", color: "#222222"),
            imageUrl: "https://cdn.example.com/portrait.png",
            landscapeImageUrl: "https://cdn.example.com/landscape.png",
            backgroundColor: "#333333",
            primaryAction: .init(text: "Yes", url: "https://example.com/yes"),
            secondaryAction: .init(text: "No", url: "https://example.com/no"),
            action: .init(url: "myapp://tap"),
            dismiss: .init(seconds: 10),
            slideFrom: .top,
            orientation: .landscape
        )
    }

    package static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    package static func jsonDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// 30 keys in an order that is neither sorted nor insertion-like: k0, k7, k14, k21, k28, k5, ...
    package static let scrambledKeys: [String] = (0..<30).map { "k\(($0 * 7) % 30)" }
}
