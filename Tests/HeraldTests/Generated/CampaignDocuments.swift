import Foundation
import HeraldDomain
import TestSupport

/// What the API must answer a generated document with.
enum Expected: Sendable, CustomStringConvertible {
    /// Stored, and read back as the case's `stored` document.
    case stored
    /// Refused with one of `statuses`, because of `reason`.
    case refused(Set<Int>, String)
    /// The format leaves it open; it must only never be a 5xx, and read back as sent if stored.
    case either(String)

    var description: String {
        switch self {
        case .stored: "stored"
        case .refused(let statuses, let reason): "refused with \(statuses.sorted()) (\(reason))"
        case .either(let reason): "either (\(reason))"
        }
    }
}

/// A document sent to the API, what it must be answered with, and what it must read back as.
struct CampaignCase: Sendable, CustomStringConvertible {
    var body: [UInt8]
    var contentType = "application/json"
    var expected: Expected
    /// The campaign as Herald writes it back, without the output-only `id`, `status` and `revision`.
    var stored: JSONValue
    /// `data` was sent as an object, whose members come back in no particular order.
    var dataOrderUnknown: Bool

    var description: String { "\(expected): \(String(decoding: body.prefix(3000), as: UTF8.self))" }
}

/// An object drawn field by field as it is sent and as it must read back (`docs/campaign-json.md`:
/// defaults for what is absent, `null` as absent, times in UTC to the millisecond).
struct SentAndStored {
    var sent: [(key: String, value: JSONValue)] = []
    var stored: [(key: String, value: JSONValue)] = []

    mutating func both(_ key: String, _ value: JSONValue) {
        sent.append((key, value))
        stored.append((key, value))
    }

    mutating func both(_ key: String, _ pair: (sent: JSONValue, stored: JSONValue)) {
        sent.append((key, pair.sent))
        stored.append((key, pair.stored))
    }

    /// An optional member: absent, `null` (both read back absent), or `make`'s value.
    mutating func optional(_ key: String, _ draw: inout Draw, rate: Double, _ make: (inout Draw) -> (sent: JSONValue, stored: JSONValue)) {
        if draw.chance(rate) {
            both(key, make(&draw))
        } else if draw.chance(0.2) {
            sent.append((key, .null))
        }
    }

    /// A member with a default: absent or `null` reads back as `fallback`.
    mutating func defaulted(_ key: String, _ draw: inout Draw, rate: Double, fallback: JSONValue,
                            _ make: (inout Draw) -> (sent: JSONValue, stored: JSONValue)) {
        if draw.chance(rate) {
            both(key, make(&draw))
        } else {
            if draw.chance(0.2) { sent.append((key, .null)) }
            stored.append((key, fallback))
        }
    }

    /// The members in a shuffled order, as any client may send them.
    func objects(_ draw: inout Draw) -> (sent: JSONValue, stored: JSONValue) {
        var shuffled = sent
        for index in shuffled.indices.reversed() where index > 0 { shuffled.swapAt(index, draw.int(0...index)) }
        return (.object(shuffled), .object(stored))
    }
}

/// Campaign JSON documents that follow every documented rule.
enum ValidCampaign {
    static let timeZones = ["UTC", "Europe/Paris", "Asia/Tehran", "Asia/Kolkata", "America/St_Johns", "Pacific/Kiritimati",
                            "Pacific/Chatham", "Asia/Kathmandu", "America/Los_Angeles", "Australia/Lord_Howe", "Etc/GMT+12", "GMT"]
    static let customEvents = ["exampleTrigger", "level_up", "A", "checkout_started_2", "x" + String(repeating: "y", count: 39)]
    static let languages = ["en", "fa", "de", "ar", "ja", "pt-BR", "zh-Hant", "fil", "es-419"]
    static let countries = ["US", "IR", "DE", "JP", "AE", "BR"]

    /// A document and what it reads back as; `data` may be sent as an object (order then unknown).
    static func document(_ draw: inout Draw, app: Int64) -> (sent: JSONValue, stored: JSONValue, dataOrderUnknown: Bool) {
        var campaign = SentAndStored()
        campaign.both("app", .number(Double(app)))
        campaign.both("name", .string(GeneratedText.valid(&draw)))
        campaign.optional("description", &draw, rate: 0.5) { JSONValue.string(GeneratedText.valid(&$0, maxPieces: 20, multiline: true)).twice }
        campaign.defaulted("priority", &draw, rate: 0.7, fallback: .number(5)) { JSONValue.number(Double($0.int(1...10))).twice }
        campaign.defaulted("schedule", &draw, rate: 0.7, fallback: schedule(nil, nil, "UTC"), schedule)
        // A push campaign (a quarter of them): no triggers, server-side targeting only, a notification instead of a message.
        let push = draw.chance(0.25)
        if push {
            campaign.sent.append(("triggers", .array([])))
            campaign.stored.append(("triggers", .array([])))
        } else {
            campaign.defaulted("triggers", &draw, rate: 0.8, fallback: .array([])) { draw in
                let triggers = draw.list(0...4, trigger)
                return (.array(triggers.map(\.sent)), .array(triggers.map(\.stored)))
            }
        }
        campaign.defaulted("frequency", &draw, rate: 0.6, fallback: .object([("type", .string("once"))]), frequency)
        campaign.defaulted("targeting", &draw, rate: 0.6, fallback: .object([])) { targeting(&$0, deviceRules: !push) }
        campaign.defaulted("testOnDevice", &draw, rate: 0.5, fallback: .bool(false)) { JSONValue.bool($0.chance(0.3)).twice }
        if push {
            campaign.both("channel", .string(Channel.push.rawValue))
            campaign.both("push", notification(&draw))
        } else {
            campaign.defaulted("channel", &draw, rate: 0.3, fallback: .string(Channel.inApp.rawValue)) { _ in JSONValue.string(Channel.inApp.rawValue).twice }
            campaign.both("message", message(&draw))
        }
        var dataOrderUnknown = false
        campaign.defaulted("data", &draw, rate: 0.6, fallback: .array([])) { draw in
            var keys: Set<String> = []
            let pairs = draw.list(0...6) { draw -> (String, String)? in
                let key = GeneratedText.valid(&draw, maxPieces: 3)
                guard keys.insert(key).inserted else { return nil }
                return (key, GeneratedText.valid(&draw, maxPieces: 8, multiline: true))
            }.compactMap { $0 }
            let stored = JSONValue.array(pairs.map { .object([("key", .string($0.0)), ("value", .string($0.1))]) })
            if draw.chance(0.3) {
                dataOrderUnknown = true
                return (.object(pairs.map { ($0.0, .string($0.1)) }), stored)
            }
            return (stored, stored)
        }
        // Output-only fields are ignored on input.
        if draw.chance(0.15) { campaign.sent.append(("id", .number(Double(draw.int(1...1_000_000))))) }
        if draw.chance(0.15) { campaign.sent.append(("status", .string(draw.pick(CampaignStatus.allCases).rawValue))) }
        if draw.chance(0.1) { campaign.sent.append(("revision", .number(Double(draw.int(1...99))))) }
        let (sent, stored) = campaign.objects(&draw)
        return (sent, stored, dataOrderUnknown)
    }

    static func schedule(_ draw: inout Draw) -> (sent: JSONValue, stored: JSONValue) {
        var times = [GeneratedTime.instant(&draw), GeneratedTime.instant(&draw)].sorted()
        if times[0] == times[1] { times[1] += 1 }
        var schedule = SentAndStored()
        for (key, instant) in zip(["start", "end"], times) {
            if draw.chance(0.6) {
                schedule.both(key, (.string(GeneratedTime.text(&draw, for: instant)), .string(GeneratedTime.written(instant))))
            } else {
                if draw.chance(0.5) { schedule.sent.append((key, .null)) }
                schedule.stored.append((key, .null))
            }
        }
        schedule.defaulted("timeZone", &draw, rate: 0.7, fallback: .string("UTC")) { JSONValue.string($0.pick(timeZones)).twice }
        return schedule.objects(&draw)
    }

    static func schedule(_ start: String?, _ end: String?, _ zone: String) -> JSONValue {
        .object([("start", start.map(JSONValue.string) ?? .null), ("end", end.map(JSONValue.string) ?? .null), ("timeZone", .string(zone))])
    }

    static func trigger(_ draw: inout Draw) -> (sent: JSONValue, stored: JSONValue) {
        var trigger = SentAndStored()
        let kind = draw.int(0...2)
        let event = kind == 0 ? draw.pick(Trigger.builtInEvents) : kind == 1 ? Trigger.purchaseEvent : draw.pick(customEvents)
        trigger.both("event", .string(event))
        if kind == 0 {
            trigger.defaulted("filters", &draw, rate: 0.3, fallback: .array([])) { _ in (.array([]), .array([])) }
        } else {
            trigger.defaulted("filters", &draw, rate: 0.7, fallback: .array([])) { draw in
                let filters = draw.list(0...3, filter)
                return (.array(filters.map(\.sent)), .array(filters.map(\.stored)))
            }
        }
        return trigger.objects(&draw)
    }

    static func filter(_ draw: inout Draw) -> (sent: JSONValue, stored: JSONValue) {
        var filter = SentAndStored()
        filter.both("property", .string(draw.chance(0.5) ? draw.pick(["product_id", "value", "vip", "plan"]) : GeneratedText.valid(&draw, maxPieces: 3, maxCharacters: 40)))
        let op = draw.pick(FilterOperator.allCases)
        filter.both("op", .string(op.rawValue))
        switch op {
        case .exists: filter.optional("value", &draw, rate: 0.2, filterValue)
        case .gt, .gte, .lt, .lte: filter.both("value", number(&draw).twice)
        case .contains: filter.both("value", .string(GeneratedText.valid(&draw, maxPieces: 4)))
        case .eq, .ne: filter.both("value", filterValue(&draw))
        }
        return filter.objects(&draw)
    }

    static func filterValue(_ draw: inout Draw) -> (sent: JSONValue, stored: JSONValue) {
        switch draw.int(0...2) {
        case 0: JSONValue.string(GeneratedText.valid(&draw, maxPieces: 4)).twice
        case 1: number(&draw).twice
        default: JSONValue.bool(draw.chance(0.5)).twice
        }
    }

    /// Numbers of every size and sign, whole and fractional.
    static func number(_ draw: inout Draw) -> JSONValue {
        switch draw.int(0...6) {
        case 0: .number(Double(draw.int(-1000...1000)))
        case 1: .number(draw.double(-1e6...1e6))
        case 2: .number(draw.pick([0, -0.0, 1e15, -1e15, 999_999_999_999_999, 1e300, -1e-300, .leastNonzeroMagnitude, Double.greatestFiniteMagnitude, 0.1, 9.99]))
        case 3: .number(Double(draw.int64(-(1 << 53)...(1 << 53))))
        case 4: .literal(draw.pick(["1.50", "1E2", "-0", "0.0000001", "12345678901234567890", "1e+2", "2.5e-3"]))
        default: .number(draw.double(-1e20...1e20))
        }
    }

    static func frequency(_ draw: inout Draw) -> (sent: JSONValue, stored: JSONValue) {
        var frequency = SentAndStored()
        let type = draw.pick(Frequency.Kind.allCases)
        frequency.both("type", .string(type.rawValue))
        if type == .everyNDays {
            frequency.both("days", .number(Double(draw.chance(0.3) ? draw.pick([1, 365]) : draw.int(1...365))))
        } else {
            frequency.optional("days", &draw, rate: 0.1) { JSONValue.number(Double($0.int(-5...1000))).twice }
        }
        return frequency.objects(&draw)
    }

    /// `deviceRules`: user properties and days since first open, which only in-app campaigns may use.
    static func targeting(_ draw: inout Draw, deviceRules: Bool = true) -> (sent: JSONValue, stored: JSONValue) {
        var targeting = SentAndStored()
        targeting.optional("platforms", &draw, rate: 0.4) { draw in
            JSONValue.array(draw.list(0...3) { JSONValue.string($0.pick(Platform.allCases).rawValue) }).twice
        }
        targeting.optional("appVersion", &draw, rate: 0.3) { draw in
            var rule = SentAndStored()
            let op = draw.pick(Targeting.VersionRule.Operator.allCases)
            rule.both("op", .string(op.rawValue))
            rule.both("value", .string(op == .regex ? draw.pick(["^1\\.", "^2\\.[0-9]+$", "(beta|rc)", "."]) : GeneratedText.valid(&draw, maxPieces: 3)))
            return rule.objects(&draw)
        }
        targeting.optional("languages", &draw, rate: 0.3) { JSONValue.array($0.list(0...4) { JSONValue.string($0.pick(languages)) }).twice }
        targeting.optional("countries", &draw, rate: 0.3) { JSONValue.array($0.list(0...4) { JSONValue.string($0.pick(countries)) }).twice }
        targeting.optional("userProperties", &draw, rate: deviceRules ? 0.3 : 0) { draw in
            let filters = draw.list(0...3, filter)
            return (.array(filters.map(\.sent)), .array(filters.map(\.stored)))
        }
        targeting.optional("daysSinceFirstOpen", &draw, rate: deviceRules ? 0.3 : 0) { draw in
            var range = SentAndStored()
            let bounds = [draw.int(0...36_500), draw.int(0...36_500)].sorted()
            range.optional("min", &draw, rate: 0.7) { _ in JSONValue.number(Double(bounds[0])).twice }
            range.optional("max", &draw, rate: 0.7) { _ in JSONValue.number(Double(bounds[1])).twice }
            return range.objects(&draw)
        }
        targeting.optional("percentage", &draw, rate: 0.3) { JSONValue.number(Double($0.int(1...100))).twice }
        return targeting.objects(&draw)
    }

    /// A push notification within every rule (short texts, so every version fits both providers' limits).
    static func notification(_ draw: inout Draw) -> (sent: JSONValue, stored: JSONValue) {
        var push = SentAndStored()
        let silent = draw.chance(0.15)
        if silent {
            push.both("silent", .bool(true))
        } else {
            push.optional("title", &draw, rate: 0.8) { JSONValue.string(GeneratedText.valid(&$0, maxPieces: 4, multiline: true)).twice }
            push.optional("subtitle", &draw, rate: 0.4) { JSONValue.string(GeneratedText.valid(&$0, maxPieces: 3)).twice }
            push.optional("body", &draw, rate: 0.8) { JSONValue.string(GeneratedText.valid(&$0, maxPieces: 8, multiline: true)).twice }
            push.optional("imageUrl", &draw, rate: 0.3) { JSONValue.string(https(&$0)).twice }
            push.optional("badge", &draw, rate: 0.3) { JSONValue.number(Double($0.chance(0.3) ? $0.pick([0, 99_999]) : $0.int(0...99_999))).twice }
            push.optional("sound", &draw, rate: 0.3) { JSONValue.string($0.pick(["default", "chime.caf", "ping"])).twice }
            if draw.chance(0.8) { push.stored.append(("silent", .bool(false))) } else { push.both("silent", .bool(false)) }
        }
        push.optional("category", &draw, rate: 0.3) { JSONValue.string($0.pick(["OFFER", "REPLY", "open_sale"])).twice }
        push.optional("threadId", &draw, rate: 0.3) { JSONValue.string(GeneratedText.valid(&$0, maxPieces: 2)).twice }
        push.optional("url", &draw, rate: 0.4) { JSONValue.string(link(&$0)).twice }
        if draw.chance(0.7) { push.stored.append(("inDeviceTimeZone", .bool(false))) } else { push.both("inDeviceTimeZone", .bool(false)) }
        if !silent && draw.chance(0.4) {
            var versions = SentAndStored()
            var tags = versionTags
            for _ in 0..<draw.int(1...3) {
                var version = SentAndStored()
                version.optional("title", &draw, rate: 0.7) { JSONValue.string(GeneratedText.valid(&$0, maxPieces: 4)).twice }
                version.optional("body", &draw, rate: 0.7) { JSONValue.string(GeneratedText.valid(&$0, maxPieces: 8, multiline: true)).twice }
                version.optional("url", &draw, rate: 0.2) { JSONValue.string(link(&$0)).twice }
                if version.stored.isEmpty { version.both("subtitle", .string(GeneratedText.valid(&draw, maxPieces: 2))) }
                versions.both(tags.remove(at: draw.int(0...(tags.count - 1))), version.objects(&draw))
            }
            push.both("translations", versions.objects(&draw))
        }
        return push.objects(&draw)
    }

    static func message(_ draw: inout Draw) -> (sent: JSONValue, stored: JSONValue) {
        var message = SentAndStored()
        let layout = draw.pick(Message.Layout.allCases)
        message.both("layout", .string(layout.rawValue))
        func field(_ field: Message.Field, _ make: (inout Draw) -> (sent: JSONValue, stored: JSONValue)) {
            part(field, of: layout, in: &message, &draw, rate: 0.7, make)
        }
        field(.title) { text(&$0, characters: 40) }
        field(.body) { text(&$0, characters: 200) }
        field(.imageUrl) { JSONValue.string(https(&$0)).twice }
        field(.landscapeImageUrl) { JSONValue.string(https(&$0)).twice }
        field(.backgroundColor) { JSONValue.string(color(&$0)).twice }
        field(.primaryAction) { button(&$0, requiresURL: true) }
        field(.secondaryAction) { button(&$0, requiresURL: false) }
        field(.action) { draw in
            var action = SentAndStored()
            action.both("url", .string(link(&draw)))
            return action.objects(&draw)
        }
        field(.dismiss) { draw in
            var dismiss = SentAndStored()
            dismiss.both("seconds", .number(Double(draw.chance(0.3) ? draw.pick([1, 120]) : draw.int(1...120))))
            return dismiss.objects(&draw)
        }
        field(.slideFrom) { JSONValue.string($0.pick(Message.SlideEdge.allCases).rawValue).twice }
        field(.orientation) { JSONValue.string($0.pick(Message.Orientation.allCases).rawValue).twice }
        if draw.chance(0.3) {
            var versions = SentAndStored()
            var tags = versionTags
            for _ in 0..<draw.int(0...4) {
                versions.both(tags.remove(at: draw.int(0...(tags.count - 1))), version(&draw, layout: layout))
            }
            // No versions (`{}`) is the same as none: left out when saved.
            let objects = versions.objects(&draw)
            if versions.sent.isEmpty { message.sent.append(("translations", objects.sent)) } else { message.both("translations", objects) }
        } else if draw.chance(0.2) {
            message.sent.append(("translations", .null))
        }
        return message.objects(&draw)
    }

    /// An object's member for a message part: often when the layout uses it, now and then when it does not
    /// (sent, and dropped when saved).
    static func part(_ field: Message.Field, of layout: Message.Layout, in object: inout SentAndStored, _ draw: inout Draw, rate: Double,
                     _ make: (inout Draw) -> (sent: JSONValue, stored: JSONValue)) {
        if layout.fields.contains(field) {
            object.optional(field.rawValue, &draw, rate: rate, make)
        } else if draw.chance(0.05) {
            object.sent.append((field.rawValue, make(&draw).sent))
        }
    }

    /// Language version tags, no two the same but for case; kept as written.
    static let versionTags = ["fa", "ar", "de", "ja", "pt-BR", "pt", "zh-Hant-TW", "es-419", "he", "FIL", "en-gb"]

    /// A language version: any of the translatable parts, each as Campaign JSON writes it.
    static func version(_ draw: inout Draw, layout: Message.Layout) -> (sent: JSONValue, stored: JSONValue) {
        var version = SentAndStored()
        func field(_ field: Message.Field, _ make: (inout Draw) -> (sent: JSONValue, stored: JSONValue)) {
            part(field, of: layout, in: &version, &draw, rate: 0.5, make)
        }
        for (name, characters) in [(Message.Field.title, 40), (.body, 200)] {
            field(name) { draw in
                var text = SentAndStored()
                text.both("text", .string(GeneratedText.valid(&draw, maxPieces: characters / 10, multiline: true)))
                return text.objects(&draw)
            }
        }
        field(.imageUrl) { JSONValue.string(https(&$0)).twice }
        field(.landscapeImageUrl) { JSONValue.string(https(&$0)).twice }
        for name in [Message.Field.primaryAction, .secondaryAction] {
            field(name) { draw in
                var button = SentAndStored()
                button.optional("text", &draw, rate: 0.7) { JSONValue.string(GeneratedText.valid(&$0, maxPieces: 3, maxCharacters: 60)).twice }
                button.optional("url", &draw, rate: 0.5) { JSONValue.string(link(&$0)).twice }
                return button.objects(&draw)
            }
        }
        field(.action) { draw in
            var action = SentAndStored()
            action.both("url", .string(link(&draw)))
            return action.objects(&draw)
        }
        return version.objects(&draw)
    }

    static func text(_ draw: inout Draw, characters: Int) -> (sent: JSONValue, stored: JSONValue) {
        var text = SentAndStored()
        text.both("text", .string(GeneratedText.valid(&draw, maxPieces: characters / 10, multiline: true)))
        text.optional("color", &draw, rate: 0.4) { JSONValue.string(color(&$0)).twice }
        return text.objects(&draw)
    }

    static func button(_ draw: inout Draw, requiresURL: Bool) -> (sent: JSONValue, stored: JSONValue) {
        var button = SentAndStored()
        button.both("text", .string(GeneratedText.valid(&draw, maxPieces: 3, maxCharacters: 60)))
        button.optional("textColor", &draw, rate: 0.3) { JSONValue.string(color(&$0)).twice }
        button.optional("buttonColor", &draw, rate: 0.3) { JSONValue.string(color(&$0)).twice }
        button.optional("url", &draw, rate: requiresURL ? 0.95 : 0.6) { JSONValue.string(link(&$0)).twice }
        return button.objects(&draw)
    }

    static func color(_ draw: inout Draw) -> String {
        let digits = Array("0123456789ABCDEFabcdef")
        return "#" + String((0..<(draw.chance(0.7) ? 6 : 8)).map { _ in draw.pick(digits) })
    }

    static func https(_ draw: inout Draw) -> String {
        let path = draw.list(0...4) { draw in draw.pick(["p.png", "img", "%D8%B3", "a-b_c.d", "x?y=1&z=%20", "~user"]) }
        return draw.pick(["https://", "HTTPS://"]) + draw.pick(["example.com", "cdn.example.org:8443", "xn--mgbh0fb.example", "127.0.0.1"]) + "/" + path.joined(separator: "/")
    }

    static func link(_ draw: inout Draw) -> String {
        draw.chance(0.6) ? https(&draw) : draw.pick(["myapp://offers", "my-app+v2.x://path/to?x=1", "shop://", "a://b"])
    }
}

extension JSONValue {
    /// The same value sent and stored.
    var twice: (sent: JSONValue, stored: JSONValue) { (self, self) }
}
