import Foundation
import HeraldDomain
import HeraldStorage

/// Seeds a demo app with a published campaign of every layout and days of realistic events
/// (a weekday rhythm, different click-through by layout, a few display errors), so a new
/// installation shows living reports. The card has Persian, Arabic, German and Japanese versions, and
/// its devices speak those languages and others, so its report splits by language shown. The same
/// seed gives the same data.
public struct DemoSeeder: Sendable {
    public struct Summary: Sendable {
        public let appID: Int64
        public let campaigns: Int
        public let events: Int
    }

    let database: any HeraldDatabase

    public init(database: any HeraldDatabase) {
        self.database = database
    }

    /// Per layout: share of daily impressions, click-through rate and share of display errors.
    private static let profiles: [(Message.Layout, weight: Double, ctr: Double, errors: Double)] = [
        (.card, 1.0, 0.12, 0.004), (.modal, 0.9, 0.09, 0.003), (.imageOnly, 0.7, 0.06, 0.02),
        (.banner, 1.4, 0.03, 0.002), (.slideup, 1.2, 0.05, 0.002), (.fullscreen, 0.5, 0.15, 0.01),
    ]

    /// The demo's devices' languages, by share of installations (English most; pt-BR has no version, so it sees the default).
    private static let deviceLanguages: [(String, count: Int)] = [("en-US", 8), ("de-DE", 4), ("fa-IR", 3), ("ar-EG", 2), ("ja-JP", 2), ("pt-BR", 1)]

    public func seed(days: Int = 30, dailyImpressions: Int = 400, now: Date = Date(), seed: UInt64 = 42) throws -> Summary {
        var random = SeededRandom(seed: seed)
        let name = "Demo shop \(UTCTime.day(now))"
        let app = try AppRegistry(database: database).createApp(name: name, platforms: [.ios, .android, .web], actor: .commandLine, now: now)
        let start = now.addingTimeInterval(-Double(days) * 86_400)
        var campaigns: [(id: Int64, message: Message, weight: Double, ctr: Double, errors: Double)] = []
        for (index, profile) in Self.profiles.enumerated() {
            var campaign = Self.campaign(for: profile.0, app: app.id)
            campaign.priority = index + 1
            let id = try database.campaigns.create(campaign, state: .published, actor: .commandLine, now: start)
            campaigns.append((id, campaign.message, profile.weight, profile.ctr, profile.errors))
        }
        let languages = Self.deviceLanguages.flatMap { Array(repeating: $0.0, count: $0.count) }

        var events: [Event] = []
        var total = 0
        let platforms = ["ios", "ios", "android", "android", "android", "web"]
        for dayIndex in 0..<days {
            let dayStart = Calendar(identifier: .gregorian).startOfDay(for: start.addingTimeInterval(Double(dayIndex + 1) * 86_400))
            let weekday = Calendar(identifier: .gregorian).component(.weekday, from: dayStart)
            let rhythm = weekday == 1 || weekday == 7 ? 0.6 : 1.0 + 0.1 * Double(weekday % 3)
            for campaign in campaigns {
                let impressions = Int(Double(dailyImpressions) * campaign.weight * rhythm * random.uniform(0.85, 1.15))
                for _ in 0..<impressions {
                    let at = dayStart.addingTimeInterval(random.uniform(0, 86_399))
                    guard at < now else { continue }
                    let platform = platforms[random.index(platforms.count)]
                    let device = random.index(5_000)
                    let installation = "demo-\(device)"
                    // What the delivery client does: the version for the device's language, reported with each event.
                    let shown = campaign.message.version(for: languages[device % languages.count]).tag.map(LanguageTag.canonical)
                    func event(_ type: EventType, _ detail: String, after seconds: Double) -> Event {
                        Event(id: random.uuid(), appID: app.id, campaignID: campaign.id, type: type,
                              occurredAt: min(at.addingTimeInterval(seconds), now), platform: platform,
                              installationID: random.chance(0.85) ? installation : nil, detail: detail, url: nil, test: false,
                              language: shown)
                    }
                    let layout = campaign.message.layout
                    if random.chance(campaign.errors) {
                        events.append(event(.error, (random.chance(0.7) ? DisplayErrorCode.imageFetch : .imageDisplay).rawValue, after: 0))
                        continue
                    }
                    events.append(event(.impression, "", after: 0))
                    if random.chance(campaign.ctr) {
                        let action: ClickAction = layout == .card || layout == .fullscreen
                            ? (random.chance(0.8) ? .primary : .secondary) : (layout == .modal ? .primary : .body)
                        events.append(event(.click, action.rawValue, after: random.uniform(1, 8)))
                        if random.chance(0.25) { events.append(event(.conversion, "purchase", after: random.uniform(30, 600))) }
                    } else {
                        let kind: DismissType = layout == .banner || layout == .slideup
                            ? (random.chance(0.7) ? .auto : .swipe) : .click
                        events.append(event(.dismiss, kind.rawValue, after: random.uniform(2, 12)))
                    }
                    if events.count >= 1000 {
                        total += try database.events.ingest(events, now: now).accepted
                        events.removeAll(keepingCapacity: true)
                    }
                }
            }
        }
        total += try database.events.ingest(events, now: now).accepted
        return Summary(appID: app.id, campaigns: campaigns.count, events: total)
    }

    private static func campaign(for layout: Message.Layout, app: Int64) -> Campaign {
        let image = "https://picsum.photos/seed/herald-\(layout.rawValue)/800/600"
        let message: Message = switch layout {
        case .card:
            Message(layout: .card, title: .init(text: "Spring sale: 20% off"), body: .init(text: "Everything in the shop, until Sunday."),
                    imageUrl: image, backgroundColor: "#FFFFFF", primaryAction: .init(text: "Shop now", url: "https://example.com/sale"),
                    secondaryAction: .init(text: "Later"), translations: [
                        "fa": .init(title: .init(text: "حراج بهاره: ۲۰٪ تخفیف"), body: .init(text: "همه چیز در فروشگاه، تا یکشنبه."),
                                    primaryAction: .init(text: "خرید کنید"), secondaryAction: .init(text: "بعداً")),
                        "ar": .init(title: .init(text: "تخفيضات الربيع: خصم ٢٠٪"), body: .init(text: "على كل شيء في المتجر، حتى الأحد."),
                                    primaryAction: .init(text: "تسوّق الآن"), secondaryAction: .init(text: "لاحقًا")),
                        "de": .init(title: .init(text: "Frühlingsangebot: 20 % Rabatt"), body: .init(text: "Auf alles im Shop, bis Sonntag."),
                                    primaryAction: .init(text: "Jetzt shoppen", url: "https://example.com/de/sale"), secondaryAction: .init(text: "Später")),
                        "ja": .init(title: .init(text: "春のセール：20%オフ"), body: .init(text: "日曜日まで、ショップの全商品が対象。"),
                                    primaryAction: .init(text: "今すぐ購入"), secondaryAction: .init(text: "あとで")),
                    ])
        case .modal:
            Message(layout: .modal, title: .init(text: "New: dark mode"), body: .init(text: "Easier on the eyes at night."),
                    imageUrl: image, primaryAction: .init(text: "Try it", url: "demoapp://settings/appearance"))
        case .imageOnly:
            Message(layout: .imageOnly, imageUrl: image, action: .init(url: "https://example.com/lookbook"))
        case .banner:
            Message(layout: .banner, title: .init(text: "Free delivery today"), body: .init(text: "On every order."), dismiss: .init(seconds: 12))
        case .slideup:
            Message(layout: .slideup, body: .init(text: "Your basket is waiting: 3 items saved."), action: .init(url: "demoapp://basket"), slideFrom: .bottom)
        case .fullscreen:
            Message(layout: .fullscreen, title: .init(text: "Welcome to the club"), body: .init(text: "Points on every purchase."),
                    imageUrl: image, primaryAction: .init(text: "Join", url: "https://example.com/club"),
                    secondaryAction: .init(text: "Not now"), orientation: .portrait)
        }
        return Campaign(
            app: app, name: "Demo \(layout.title.lowercased())", description: "Seeded by herald demo.",
            triggers: [Trigger(event: layout == .slideup ? "app_foreground" : "app_launch")],
            frequency: Frequency(type: layout == .banner ? .always : .everyNDays, days: layout == .banner ? nil : 7),
            message: message, data: CustomData([.init(key: "demo", value: layout.rawValue)]))
    }
}

/// A small deterministic generator (SplitMix64), so a demo seed always gives the same data.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uniform(_ low: Double, _ high: Double) -> Double {
        low + (high - low) * Double(next() >> 11) / Double(1 << 53)
    }

    mutating func chance(_ probability: Double) -> Bool { uniform(0, 1) < probability }

    mutating func index(_ count: Int) -> Int { Int(next() % UInt64(count)) }

    mutating func uuid() -> String {
        let (a, b) = (next(), next())
        let bytes = withUnsafeBytes(of: (a, b)) { Array($0) }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6] & 0x0F | 0x40, bytes[7],
                           bytes[8] & 0x3F | 0x80, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])).uuidString.lowercased()
    }
}
