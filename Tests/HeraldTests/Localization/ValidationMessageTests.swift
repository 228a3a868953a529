import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import TestSupport
import Testing

/// Validation problems carry a key and arguments; the console renders them from `validation.*` in the
/// reader's language, the API keeps their English.
@Suite("Validation messages")
struct ValidationMessageTests {
    static let localization = LocalizationTests.localization

    // MARK: Problems from every source

    /// Campaigns that break every rule of `Campaign.problems(for:)`, each in one way or a few.
    static func badCampaigns() -> [Campaign] {
        let card = RulesFixtures.campaign(.card)
        func edited(_ layout: Message.Layout = .card, _ edit: (inout Campaign) -> Void) -> Campaign {
            RulesFixtures.campaign(layout, edit)
        }
        func message(_ layout: Message.Layout, _ edit: (inout Message) -> Void = { _ in }) -> Campaign {
            var campaign = RulesFixtures.campaign(layout)
            campaign.message = Message(layout: layout)
            edit(&campaign.message)
            return campaign
        }
        let long = { (count: Int) in String(repeating: "a", count: count) }
        var pushWithoutNotification = Campaign(app: 1, name: "Push", push: PushNotification())
        pushWithoutNotification.push = nil
        return [
            pushWithoutNotification,
            { var both = Campaign(app: 1, name: "Push", push: PushNotification(title: "t")); both.message = Message(layout: .modal); return both }(),
            edited { $0.push = PushNotification(title: "t") },
            Campaign(app: 1, name: "Push", targeting: Targeting(userProperties: [PropertyFilter(property: "vip", op: .exists)]), push: PushNotification(inDeviceTimeZone: true)),
            Campaign(app: 1, name: "Push", push: PushNotification(title: "t", badge: -1, sound: long(65), silent: true),
                     data: CustomData([.init(key: "aps", value: "x")])),
            { var push = Campaign(app: 1, name: "Push", push: PushNotification(title: "t", body: long(1000))); push.triggers = [Trigger(event: "app_launch")]
              push.data = CustomData((0..<4).map { .init(key: "k\($0)", value: long(1000)) }); return push }(),
            edited { $0.name = ""; $0.description = long(2001); $0.priority = 11 },
            edited { $0.name = long(201) + "\u{7}"; $0.description = "line\u{7}" },
            edited { $0.data = CustomData((0..<51).map { .init(key: "k\($0)", value: "v") }) },
            edited { $0.data = CustomData([.init(key: "", value: "x"), .init(key: "a", value: "1"), .init(key: "a", value: long(1001)), .init(key: long(101), value: "")]) },
            edited { $0.triggers = [] },
            edited { $0.conversion = ConversionGoal(event: "app_launch", filters: [PropertyFilter(property: "vip", op: .exists)], windowHours: 721) },
            { var push = Campaign(app: 1, name: "Push", push: PushNotification(title: "t")); push.conversion = ConversionGoal(event: "purchase"); return push }(),
            edited { $0.triggers = (0..<21).map { _ in Trigger(event: "app_launch") } },
            edited { $0.triggers = [Trigger(event: ""), Trigger(event: long(41)), Trigger(event: "1abc"), Trigger(event: "firebase_open")] },
            edited {
                $0.triggers = [
                    Trigger(event: "checkout", filters: (0..<11).map { _ in PropertyFilter(property: "p", op: .exists) }),
                    Trigger(event: "app_launch", filters: [PropertyFilter(property: "p", op: .exists)]),
                    Trigger(event: "checkout", filters: [
                        PropertyFilter(property: "", op: .eq, value: .string(long(1001))),
                        PropertyFilter(property: long(41), op: .eq),
                        PropertyFilter(property: "a", op: .gt, value: .string("x")),
                        PropertyFilter(property: "a", op: .gte, value: .string("x")),
                        PropertyFilter(property: "a", op: .lt, value: .string("x")),
                        PropertyFilter(property: "a", op: .lte, value: .string("x")),
                        PropertyFilter(property: "a", op: .contains, value: .number(1)),
                    ]),
                    Trigger(event: "push_click", filters: [
                        PropertyFilter(property: "screen", op: .exists),
                        PropertyFilter(property: "campaign_id", op: .contains, value: .string("4")),
                        PropertyFilter(property: "campaign_id", op: .eq, value: .string("42")),
                    ]),
                ]
            },
            edited { $0.schedule = Schedule(start: Date(timeIntervalSince1970: 0), end: Date(timeIntervalSince1970: -10), timeZone: "Mars/Olympus") },
            edited { $0.frequency = Frequency(type: .everyNDays, days: 0) },
            edited { $0.message.translations = Dictionary(uniqueKeysWithValues: (0..<51).map { ("x\($0)", MessageTranslation(title: .init(text: "t"))) }) },
            edited { $0.message.translations = ["!!": MessageTranslation(), "fa": MessageTranslation(), "FA": MessageTranslation()] },
            edited {
                $0.message.title = .init(text: long(201), color: "red")
                $0.message.imageUrl = "http://example.com/a.png"
                $0.message.landscapeImageUrl = "https://example.com/" + long(2001)
                $0.message.primaryAction = .init(text: long(61), url: "http://example.com")
                $0.message.secondaryAction = .init(text: "No", url: "javascript:alert(1)")
            },
            message(.banner) { $0.title = .init(text: "t"); $0.action = .init(url: "nothing"); $0.dismiss = .init(seconds: 0) },
            message(.banner) { $0.title = .init(text: "t"); $0.action = .init(url: "https://") },
            message(.card), message(.modal), message(.banner), message(.fullscreen), message(.slideup), message(.imageOnly),
            message(.card) { $0.secondaryAction = .init(text: "", url: "https://example.com"); $0.primaryAction = .init(text: "Go") },
            message(.modal) { $0.primaryAction = .init(text: "", url: "https://example.com") },
            message(.modal) { $0.primaryAction = .init(text: "Go") },
            edited {
                $0.targeting.percentage = 0
                $0.targeting.appVersion = .init(op: .equals, value: "")
                $0.targeting.languages = ["EN!"] + Array(repeating: "en", count: 50)
                $0.targeting.countries = ["usa"] + Array(repeating: "US", count: 250)
                $0.targeting.userProperties = (0..<11).map { _ in PropertyFilter(property: "p", op: .exists) }
                $0.targeting.daysSinceFirstOpen = .init(min: -1, max: 40_000)
            },
            edited { $0.targeting.appVersion = .init(op: .equals, value: long(101)); $0.targeting.daysSinceFirstOpen = .init(min: 5, max: 3) },
            edited { $0.targeting.appVersion = .init(op: .regex, value: "(") },
            card,
        ]
    }

    /// Campaign JSON that does not decode: unknown keys, times, types, values.
    static func decodingProblems() -> [FieldProblem] {
        let app = #""app": 1, "name": "n", "message": {"layout": "card"}"#
        let bodies = [
            #"{\#(app), "priorty": 1}"#,
            #"{\#(app), "zzzzzzzz": 1}"#,
            #"{\#(app), "schedule": {"start": "yesterday"}}"#,
            #"{"name": "n"}"#,
            #"{"app": 1, "name": 5, "message": {"layout": "card"}}"#,
            #"{\#(app), "priority": "high"}"#,
            #"{\#(app), "testOnDevice": "yes"}"#,
            #"{\#(app), "triggers": {}}"#,
            #"{"app": 1, "name": "n", "message": []}"#,
            #"{"app": 1, "name": "n", "message": {"layout": "circle"}}"#,
        ]
        var problems: [FieldProblem] = []
        for body in bodies {
            do {
                _ = try CampaignJSON.decoder(refusingUnknownKeys: true).decode(Campaign.self, from: Data(body.utf8))
                Issue.record("\(body) decoded")
            } catch let error as UnknownKeyError {
                problems.append(error.problem)
            } catch let error as DecodingError {
                problems.append(error.problem)
            } catch {
                Issue.record("\(body): \(error)")
            }
        }
        // No field of Campaign JSON is a fractional number, so this one is made by hand.
        problems.append(DecodingError.typeMismatch(Double.self, .init(codingPath: [], debugDescription: "")).problem)
        return problems
    }

    /// The composer's form before validation: numbers that are not, times that do not exist, values typed
    /// under the wrong option.
    static func formProblems() -> [FieldProblem] {
        let forms: [[(String, String)]] = [
            [("message.dismiss.seconds", "x"), ("frequency.type", "every_n_days"), ("frequency.days", "x"), ("targeting.percentage", "x"),
             ("priority", "x"), ("targeting.daysSinceFirstOpen.min", "x")],
            [("schedule.startMode", "at"), ("schedule.start", "garbage")],
            [("schedule.timeZone", "Europe/Berlin"), ("schedule.startMode", "at"), ("schedule.start", "2026-03-29T02:30")],
            [("schedule.startMode", "publish"), ("schedule.start", "2026-01-01T10:00"), ("schedule.endMode", "never"), ("schedule.end", "2026-01-02T10:00"),
             ("frequency.type", "once"), ("frequency.days", "3")],
            [("frequency.type", "always"), ("frequency.days", "3"), ("schedule.startMode", "bogus"), ("schedule.start", "2026-01-01T10:00")],
            [("triggers.0.event", "checkout"), ("triggers.0.filters.0.property", "amount"), ("triggers.0.filters.0.type", "number"),
             ("triggers.0.filters.0.value", "abc"), ("triggers.0.filters.1.property", "vip"), ("triggers.0.filters.1.type", "bool"),
             ("triggers.0.filters.1.value", "maybe")],
            [("channel", "push"), ("push.badge", "x")],
            [("conversion.event", "purchase"), ("conversion.windowHours", "1.5")],
        ]
        return forms.flatMap { CampaignForm.decode(FormData($0), app: 1).problems }
    }

    static func allProblems() -> [FieldProblem] {
        var past = RulesFixtures.campaign(.card)
        past.schedule.end = Date(timeIntervalSince1970: 1_767_225_600)
        return badCampaigns().flatMap { $0.problems(for: .publish) } + decodingProblems() + formProblems()
            + CampaignLifecycle.publishProblems(past, now: Date(timeIntervalSince1970: 1_800_000_000))
            + [FieldProblem(path: "app", key: "app_required")]
    }

    // MARK: Tests

    @Test("Every problem the rules, the JSON decoder and the form produce has a key, and every key is produced")
    func everyKeyIsProduced() throws {
        let problems = Self.allProblems()
        let unkeyed = problems.filter { $0.key == nil }
        #expect(unkeyed.isEmpty, "without a key: \(unkeyed)")
        let produced = Set(problems.compactMap(\.key))
        let english = try #require(Self.localization.catalogs[.en])
        let known = Set(english.entries.keys.filter { $0.hasPrefix("validation.") }.map { String($0.dropFirst("validation.".count)) })
        #expect(produced.subtracting(known).isEmpty, "keys en.json lacks: \(produced.subtracting(known).sorted())")
        let withoutEnglish = problems.compactMap(\.text).filter { $0.message == $0.key }.map(\.key)
        #expect(withoutEnglish.isEmpty, "keys the built-in English lacks: \(withoutEnglish)")
        #expect(known.subtracting(produced).isEmpty, "keys no fixture produced: \(known.subtracting(produced).sorted())")
    }

    @Test("Each problem renders from validation.* in every language, with its arguments filled")
    func everyProblemRenders() throws {
        let problems = Self.allProblems()
        for language in ConsoleLanguage.offered {
            let localizer = Self.localization.localizer(language)
            for problem in problems {
                let key = try #require(problem.key)
                let text = try #require(problem.text)
                let rendered = try #require(localizer.message(for: text), "\(language.rawValue): no validation.\(key)")
                #expect(!rendered.contains("validation."), "\(language.rawValue) \(key)")
                #expect(!rendered.contains("{") || key == "unknown_field_suggestion", "\(language.rawValue) \(key): \(rendered)")
                #expect(localizer.message(for: problem) == rendered)
                if language != .en {
                    #expect(rendered != problem.message, "\(language.rawValue) \(key) is English")
                }
            }
        }
    }

    @Test("Numbers are written in the reader's digits, user text is isolated; problems without a key stay as written")
    func argumentsPerLocale() {
        let tooLong = FieldProblem(path: "description", key: "description_too_long", arguments: ["limit": .number(2000)])
        #expect(tooLong.message == "Use at most 2000 characters for the description.")
        #expect(Self.localization.localizer(.fa).message(for: tooLong).contains("۲٬۰۰۰"))
        #expect(Self.localization.localizer(.de).message(for: tooLong).contains("2.000"))
        let duplicate = FieldProblem(path: "data.1.key", key: "data_key_duplicate", arguments: ["key": .text("کد")])
        #expect(Self.localization.localizer(.ja).message(for: duplicate).contains("\u{2068}کد\u{2069}"))
        let plain = FieldProblem("events", "At most 500 events.")
        #expect(Self.localization.localizer(.ar).message(for: plain) == "At most 500 events.")
        // A problem reported at a language version's path keeps its key and its English.
        let moved = tooLong.at("message.translations.fa.body.text")
        #expect(moved.key == "description_too_long" && moved.message == tooLong.message)
    }

    @Test("An import plan's problems keep their keys, so the import page can show them in the reader's language")
    func importPlanProblems() async throws {
        let app = try await TestApp()
        let shop = try app.database.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: app.clock.now)
        let file = #"{"schemaVersion": 1, "campaigns": [{"app": 1, "name": "Bad", "priority": 40, "message": {"layout": "modal", "title": {"text": "Hi"}}}]}"#
        let plan = try CampaignTransfer(database: app.database).plan(Data(file.utf8), appID: shop.id)
        let problem = try #require(plan.problems.first)
        #expect(problem.message == "Choose a priority from 1 (highest) to 10 (lowest).")
        let text = try #require(problem.text)
        #expect(Self.localization.localizer(.fa).message(for: FieldProblem(problem.path, text)) == "اولویتی از ۱ (بالاترین) تا ۱۰ (پایین‌ترین) انتخاب کنید.")
    }

    @Test("The API answers validation problems in English whatever the browser's language")
    func apiStaysEnglish() async throws {
        let fixture = try await CampaignAPITests.fixture()
        let json = CampaignAPITests.cardJSON(app: fixture.shop)
            .replacingOccurrences(of: #""priority": 2"#, with: #""priority": 12, "description": "\#(String(repeating: "d", count: 2001))""#)
        let refused = fixture.call("POST", "/api/v1/campaigns", json: json, headers: [("Accept-Language", "fa-IR,fa")])
        #expect(refused.status == 422)
        #expect(refused.text.contains(#""message":"Use at most 2000 characters for the description.""#))
        #expect(refused.text.contains(#""message":"Choose a priority from 1 (highest) to 10 (lowest).""#))
        #expect(!refused.text.contains("۲"))

        let unknown = fixture.call("POST", "/api/v1/campaigns", json: #"{"app": 1, "name": "n", "priorty": 1}"#,
                                   headers: [("Accept-Language", "ja")])
        #expect(unknown.text.contains("Campaign JSON has no such field; did you mean `priority`? Remove it or fix its spelling."))
        let badTime = fixture.call("POST", "/api/v1/campaigns", json: #"{"app": 1, "name": "n", "message": {"layout": "card"}, "schedule": {"start": "soon"}}"#,
                                   headers: [("Accept-Language", "ar")])
        #expect(badTime.status == 400)
        #expect(badTime.text.contains("is not an RFC 3339 time such as 2026-12-01T09:00:00+01:00."))

        let missing = fixture.call("GET", "/api/v1/nowhere", headers: [("Accept-Language", "fa")])
        #expect(missing.status == 404)
        #expect(missing.text.contains("There is nothing at this address. Check the link, or go back to the campaigns."))
        let wrongMethod = fixture.call("DELETE", "/api/v1/feed", headers: [("Accept-Language", "de")])
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.text.contains("This address does not accept DELETE requests."))
    }
}
