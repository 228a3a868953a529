import Foundation
import HeraldDomain
import TestSupport
import Testing

// Campaign domain rules: what a draft may hold, what publishing needs, and how a campaign travels as JSON.
// Every helper here is prefixed with `Rules` so it cannot clash with the other files of the test target.

// MARK: - Fixtures

enum RulesCheck {
    static func paths(_ campaign: Campaign, _ mode: ValidationMode) -> [String] {
        campaign.problems(for: mode).map(\.path)
    }

    /// A message a person can read: a capitalised (or quoted) sentence that ends with a full stop.
    static func isSentence(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed == text, trimmed.count >= 12, let first = trimmed.first, trimmed.last == "." else { return false }
        return (first.isUppercase || first == "“") && trimmed.contains(" ") && !trimmed.contains("Optional(") && !trimmed.contains("nil")
    }

    /// Expects exactly one problem, at `path`, with a readable message.
    static func expectOnly(_ path: String, in problems: [FieldProblem], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(problems.map(\.path) == [path], sourceLocation: sourceLocation)
        for problem in problems {
            #expect(isSentence(problem.message), "not a sentence: \(problem.message)", sourceLocation: sourceLocation)
        }
    }

    /// The dotted paths of every JSON null in a parsed document.
    static func nullPaths(in value: Any, at path: String = "") -> [String] {
        if value is NSNull { return [path] }
        if let object = value as? [String: Any] {
            return object.flatMap { nullPaths(in: $0.value, at: path.isEmpty ? $0.key : "\(path).\($0.key)") }
        }
        if let array = value as? [Any] {
            return array.enumerated().flatMap { nullPaths(in: $0.element, at: "\(path).\($0.offset)") }
        }
        return []
    }

    static func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

// MARK: - Complete campaigns

@Suite("Campaign rules: complete campaigns")
struct RulesCompleteCampaignTests {
    @Test("A complete campaign of each layout can be published", arguments: Message.Layout.allCases)
    func completeCampaignPublishes(layout: Message.Layout) {
        // Given a campaign that fills in everything its layout uses
        let campaign = RulesFixtures.campaign(layout)
        #expect(campaign.message.layout == layout)

        // When it is checked for publishing and for saving as a draft
        let publish = campaign.problems(for: .publish)
        let draft = campaign.problems(for: .draft)

        // Then nothing is wrong either way
        #expect(publish.isEmpty, "\(publish)")
        #expect(draft.isEmpty, "\(draft)")
    }

    @Test("The card fixture really has two buttons, each with a URL")
    func cardHasTwoButtons() {
        // Given the card fixture
        let message = RulesFixtures.campaign(.card).message

        // Then both buttons are there, with text and an action
        #expect(message.primaryAction?.text.isEmpty == false)
        #expect(message.primaryAction?.url?.isEmpty == false)
        #expect(message.secondaryAction?.text.isEmpty == false)
        #expect(message.secondaryAction?.url?.isEmpty == false)
    }

    @Test("A layout's optional parts can be left out when publishing", arguments: [
        RulesEdit("modal without an image or body", .modal) { $0.message.imageUrl = nil; $0.message.body = nil },
        RulesEdit("modal without a button", .modal) { $0.message.primaryAction = nil },
        RulesEdit("card without a second button", .card) { $0.message.secondaryAction = nil },
        RulesEdit("card without a landscape image", .card) { $0.message.landscapeImageUrl = nil },
        RulesEdit("banner without image, action or colors", .banner) {
            $0.message.imageUrl = nil; $0.message.action = nil; $0.message.backgroundColor = nil; $0.message.body = nil
        },
        RulesEdit("slide-up without image or action", .slideup) { $0.message.imageUrl = nil; $0.message.action = nil },
        RulesEdit("image-only without an action", .imageOnly) { $0.message.action = nil },
        RulesEdit("fullscreen without buttons", .fullscreen) { $0.message.primaryAction = nil; $0.message.secondaryAction = nil },
        RulesEdit("no schedule, targeting, description or data", .card) {
            $0.schedule = Schedule(); $0.targeting = Targeting(); $0.description = nil; $0.data = CustomData()
        },
    ])
    func optionalPartsMayBeMissing(edit: RulesEdit) {
        // Given a complete campaign without an optional part
        let campaign = RulesFixtures.campaign(edit.layout, edit.apply)

        // When it is checked for publishing
        let problems = campaign.problems(for: .publish)

        // Then it may be published
        #expect(problems.isEmpty, "\(problems)")
    }
}

/// A named change to a fixture campaign, for parameterized tests.
struct RulesEdit: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let layout: Message.Layout
    let paths: [String]
    let apply: @Sendable (inout Campaign) -> Void

    init(_ name: String, _ layout: Message.Layout, paths: [String] = [], _ apply: @escaping @Sendable (inout Campaign) -> Void) {
        self.testDescription = name
        self.layout = layout
        self.paths = paths
        self.apply = apply
    }
}

// MARK: - Publishing completeness

@Suite("Campaign rules: publishing needs a complete message, drafts do not")
struct RulesCompletenessTests {
    static let gaps: [RulesEdit] = [
        RulesEdit("card without imageUrl", .card, paths: ["message.imageUrl"]) { $0.message.imageUrl = nil },
        RulesEdit("card without backgroundColor", .card, paths: ["message.backgroundColor"]) { $0.message.backgroundColor = nil },
        RulesEdit("card without a title", .card, paths: ["message.title.text"]) { $0.message.title = nil },
        RulesEdit("card whose primary button has no text", .card, paths: ["message.primaryAction.text"]) {
            $0.message.primaryAction?.text = ""
        },
        RulesEdit("card whose primary button has no url", .card, paths: ["message.primaryAction.url"]) {
            $0.message.primaryAction?.url = nil
        },
        RulesEdit("card without a primary button", .card, paths: ["message.primaryAction.text", "message.primaryAction.url"]) {
            $0.message.primaryAction = nil
        },
        RulesEdit("card whose second button has a url but no text", .card, paths: ["message.secondaryAction.text"]) {
            $0.message.secondaryAction?.text = ""
        },
        RulesEdit("image_only without an image", .imageOnly, paths: ["message.imageUrl"]) { $0.message.imageUrl = nil },
        RulesEdit("fullscreen without an image", .fullscreen, paths: ["message.imageUrl"]) { $0.message.imageUrl = nil },
        RulesEdit("fullscreen without a title", .fullscreen, paths: ["message.title.text"]) { $0.message.title = nil },
        RulesEdit("fullscreen with an empty title", .fullscreen, paths: ["message.title.text"]) { $0.message.title?.text = "" },
        RulesEdit("fullscreen button text without url", .fullscreen, paths: ["message.primaryAction.url"]) {
            $0.message.primaryAction?.url = nil
        },
        RulesEdit("modal without a title", .modal, paths: ["message.title.text"]) { $0.message.title = nil },
        RulesEdit("banner without a title", .banner, paths: ["message.title.text"]) { $0.message.title = nil },
        RulesEdit("slideup without a body", .slideup, paths: ["message.body.text"]) { $0.message.body = nil },
        RulesEdit("slideup with an empty body", .slideup, paths: ["message.body.text"]) { $0.message.body?.text = "" },
        RulesEdit("modal button text without url", .modal, paths: ["message.primaryAction.url"]) {
            $0.message.primaryAction = .init(text: "Open cart")
        },
        RulesEdit("modal button url without text", .modal, paths: ["message.primaryAction.text"]) {
            $0.message.primaryAction = .init(text: "", url: "myapp://cart")
        },
        RulesEdit("no triggers", .card, paths: ["triggers"]) { $0.triggers = [] },
        RulesEdit("no triggers on an image_only", .imageOnly, paths: ["triggers"]) { $0.triggers = [] },
    ]

    @Test("Publishing an incomplete campaign names exactly the missing field", arguments: gaps)
    func publishNamesTheGap(gap: RulesEdit) {
        // Given a complete campaign with one part missing
        let campaign = RulesFixtures.campaign(gap.layout, gap.apply)

        // When it is checked for publishing
        let problems = campaign.problems(for: .publish)

        // Then exactly the missing part is named, with a readable reason
        #expect(problems.map(\.path) == gap.paths)
        for problem in problems {
            #expect(RulesCheck.isSentence(problem.message), "not a sentence: \(problem.message)")
        }
    }

    @Test("The same incomplete campaign can be saved as a draft", arguments: gaps)
    func draftMayBeIncomplete(gap: RulesEdit) {
        // Given the same incomplete campaign
        let campaign = RulesFixtures.campaign(gap.layout, gap.apply)

        // When it is checked for saving as a draft
        let problems = campaign.problems(for: .draft)

        // Then nothing is reported: drafts may be incomplete
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("Layout-specific messages name the layout")
    func messagesNameTheLayout() throws {
        // Given a modal and a fullscreen message without a title, and a fullscreen one without an image
        let modal = RulesFixtures.campaign(.modal) { $0.message.title = nil }.problems(for: .publish)
        let fullscreen = RulesFixtures.campaign(.fullscreen) { $0.message.imageUrl = nil }.problems(for: .publish)

        // Then each message says which layout needs what
        #expect(try #require(modal.first).message == "A modal message needs a title.")
        #expect(try #require(fullscreen.first).message.contains("full screen message needs an image"))
    }
}

// MARK: - Format rules (every save)

/// One color field of a card message.
struct RulesColorSlot: Sendable, CustomTestStringConvertible {
    let path: String
    let apply: @Sendable (inout Message, String) -> Void
    var testDescription: String { path }

    static let all: [RulesColorSlot] = [
        RulesColorSlot(path: "message.title.color") { $0.title?.color = $1 },
        RulesColorSlot(path: "message.body.color") { $0.body?.color = $1 },
        RulesColorSlot(path: "message.backgroundColor") { $0.backgroundColor = $1 },
        RulesColorSlot(path: "message.primaryAction.textColor") { $0.primaryAction?.textColor = $1 },
        RulesColorSlot(path: "message.primaryAction.buttonColor") { $0.primaryAction?.buttonColor = $1 },
        RulesColorSlot(path: "message.secondaryAction.textColor") { $0.secondaryAction?.textColor = $1 },
        RulesColorSlot(path: "message.secondaryAction.buttonColor") { $0.secondaryAction?.buttonColor = $1 },
    ]
}

/// One URL field of a message, with the layout that has it.
struct RulesURLSlot: Sendable, CustomTestStringConvertible {
    let path: String
    let layout: Message.Layout
    let apply: @Sendable (inout Message, String) -> Void
    var testDescription: String { "\(path) (\(layout.rawValue))" }

    static let images: [RulesURLSlot] = [
        RulesURLSlot(path: "message.imageUrl", layout: .card) { $0.imageUrl = $1 },
        RulesURLSlot(path: "message.landscapeImageUrl", layout: .card) { $0.landscapeImageUrl = $1 },
        RulesURLSlot(path: "message.imageUrl", layout: .slideup) { $0.imageUrl = $1 },
    ]

    static let actions: [RulesURLSlot] = [
        RulesURLSlot(path: "message.primaryAction.url", layout: .card) { $0.primaryAction?.url = $1 },
        RulesURLSlot(path: "message.secondaryAction.url", layout: .card) { $0.secondaryAction?.url = $1 },
        RulesURLSlot(path: "message.action.url", layout: .imageOnly) { $0.action = .init(url: $1) },
        RulesURLSlot(path: "message.action.url", layout: .banner) { $0.action = .init(url: $1) },
    ]
}

@Suite("Campaign rules: formats are checked on every save, drafts included")
struct RulesFormatTests {
    static let goodColors = ["#1A73E8", "#cc1a73e8", "#00000000", "#FFFFFF"]
    static let badColors = ["red", "#12345", "#GGGGGG", "1A73E8", "#1A73E8 ", "#1234567", ""]

    @Test("Color values of the form #RRGGBB or #AARRGGBB are accepted", arguments: goodColors)
    func goodColor(color: String) {
        #expect(ColorValue.problem(color) == nil)
    }

    @Test("Other color values are refused with a readable reason", arguments: badColors)
    func badColor(color: String) throws {
        let problem = try #require(ColorValue.problem(color))
        #expect(RulesCheck.isSentence(problem))
        #expect(problem.contains("#1A73E8"), "the reason shows an example")
    }

    @Test("Every color field refuses a bad color, even in a draft", arguments: RulesColorSlot.all, ["red", "#12345", "#GGGGGG", "1A73E8"])
    func badColorOnEveryField(slot: RulesColorSlot, color: String) {
        // Given a complete card with one color field set to a bad value
        let campaign = RulesFixtures.campaign(.card) { slot.apply(&$0.message, color) }

        // When it is saved as a draft or published
        // Then exactly that field is refused either way
        RulesCheck.expectOnly(slot.path, in: campaign.problems(for: .draft))
        RulesCheck.expectOnly(slot.path, in: campaign.problems(for: .publish))
    }

    @Test("Every color field accepts both color forms", arguments: RulesColorSlot.all, ["#1A73E8", "#CC1A73E8"])
    func goodColorOnEveryField(slot: RulesColorSlot, color: String) {
        let campaign = RulesFixtures.campaign(.card) { slot.apply(&$0.message, color) }
        #expect(campaign.problems(for: .publish).isEmpty)
    }

    @Test("Image URLs must be https with a host", arguments: [
        ("https://cdn.example.com/a.png", true),
        ("HTTPS://cdn.example.com/a.png", true),
        ("https://cdn.example.com/images/a.png?size=2x", true),
        ("http://cdn.example.com/a.png", false),
        ("ftp://cdn.example.com/a.png", false),
        ("not a url", false),
        ("https://", false),
        ("cdn.example.com/a.png", false),
        ("myapp://image", false),
    ])
    func imageURL(url: String, accepted: Bool) {
        let problem = ImageURL.problem(url)
        #expect((problem == nil) == accepted)
        if let problem { #expect(RulesCheck.isSentence(problem) && problem.contains("https://")) }
    }

    @Test("Every image field refuses a non-https image, even in a draft",
          arguments: RulesURLSlot.images, ["http://cdn.example.com/a.png", "ftp://cdn.example.com/a.png", "not a url", "https://"])
    func badImageOnEveryField(slot: RulesURLSlot, url: String) {
        let campaign = RulesFixtures.campaign(slot.layout) { slot.apply(&$0.message, url) }
        RulesCheck.expectOnly(slot.path, in: campaign.problems(for: .draft))
        RulesCheck.expectOnly(slot.path, in: campaign.problems(for: .publish))
    }

    @Test("Action URLs may be https links or app links", arguments: [
        "https://x.com/y", "myapp://offers/1", "HTTPS://x.com", "com.example.app://open?id=3", "intent://scan/#Intent;end",
    ])
    func goodActionURL(url: String) {
        #expect(ActionURL.problem(url) == nil)
    }

    @Test("Action URLs refuse script, data, plain http and bare words", arguments: [
        "javascript:alert(1)", "JAVASCRIPT:alert(1)", " javascript:alert(1)", "JavaScript://%0Aalert(1)",
        "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)", "file:///etc/passwd",
        "http://x.com", "HTTP://x.com", "offers", "https://", "https:///path", "://x.com", "",
    ])
    func badActionURL(url: String) throws {
        let problem = try #require(ActionURL.problem(url))
        #expect(RulesCheck.isSentence(problem), "not a sentence: \(problem)")
    }

    @Test("The refusal says why: script links, http and a missing host each get their own reason")
    func actionURLReasons() {
        #expect(ActionURL.problem("javascript:alert(1)")?.contains("javascript:") == true)
        #expect(ActionURL.problem("data:text/html,hi")?.contains("data:") == true)
        #expect(ActionURL.problem("http://x.com") == "Use https:// rather than http://.")
        #expect(ActionURL.problem("https://") == "This https link has no host.")
    }

    @Test("Every action field refuses an unsafe link, even in a draft", arguments: RulesURLSlot.actions, [
        "javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html,<script>alert(1)</script>", "http://x.com", "offers",
    ])
    func badActionOnEveryField(slot: RulesURLSlot, url: String) {
        let campaign = RulesFixtures.campaign(slot.layout) { slot.apply(&$0.message, url) }
        RulesCheck.expectOnly(slot.path, in: campaign.problems(for: .draft))
        RulesCheck.expectOnly(slot.path, in: campaign.problems(for: .publish))
    }

    @Test("Every action field accepts https and app links", arguments: RulesURLSlot.actions, ["https://x.com/y", "myapp://offers/1"])
    func goodActionOnEveryField(slot: RulesURLSlot, url: String) {
        let campaign = RulesFixtures.campaign(slot.layout) { slot.apply(&$0.message, url) }
        #expect(campaign.problems(for: .publish).isEmpty)
    }

    @Test("Lengths and dismissal times are limited, even in a draft", arguments: [
        RulesEdit("name of 201 characters", .card, paths: ["name"]) { $0.name = String(repeating: "n", count: 201) },
        RulesEdit("blank name", .card, paths: ["name"]) { $0.name = "  \n" },
        RulesEdit("description of 2001 characters", .card, paths: ["description"]) { $0.description = String(repeating: "d", count: 2001) },
        RulesEdit("title of 201 characters", .card, paths: ["message.title.text"]) { $0.message.title?.text = String(repeating: "t", count: 201) },
        RulesEdit("body of 1001 characters", .card, paths: ["message.body.text"]) { $0.message.body?.text = String(repeating: "b", count: 1001) },
        RulesEdit("button text of 61 characters", .card, paths: ["message.secondaryAction.text"]) {
            $0.message.secondaryAction?.text = String(repeating: "x", count: 61)
        },
        RulesEdit("dismissal after 0 seconds", .banner, paths: ["message.dismiss.seconds"]) { $0.message.dismiss = .init(seconds: 0) },
        RulesEdit("dismissal after 121 seconds", .slideup, paths: ["message.dismiss.seconds"]) { $0.message.dismiss = .init(seconds: 121) },
    ])
    func limits(edit: RulesEdit) throws {
        let campaign = RulesFixtures.campaign(edit.layout, edit.apply)
        RulesCheck.expectOnly(try #require(edit.paths.first), in: campaign.problems(for: .draft))
    }

    @Test("Limits count Unicode scalars, not bytes nor characters: 200 Persian letters fit the title; a body of family emoji of 7 scalars each fits 142 times, not 143")
    func limitsCountScalars() {
        // Given a title at the limit, in a script that takes two bytes a letter, and a body of emoji of many scalars
        let family = "👩‍👩‍👧‍👦"
        #expect(family.unicodeScalars.count == 7)
        let fits = RulesFixtures.campaign(.card) {
            $0.message.title?.text = String(repeating: "ت", count: CampaignLimits.titleLength)
            $0.message.body?.text = String(repeating: family, count: CampaignLimits.bodyLength / 7)
        }
        #expect(fits.message.title!.text.utf8.count == 400)
        #expect(fits.problems(for: .publish).isEmpty)

        // One emoji more is 1,001 scalars though only 143 characters: the body is too long
        let over = RulesFixtures.campaign(.card) { $0.message.body?.text = String(repeating: family, count: CampaignLimits.bodyLength / 7 + 1) }
        RulesCheck.expectOnly("message.body.text", in: over.problems(for: .publish))
    }

    @Test("Control characters are refused in every text; line breaks only where text may span lines")
    func controlCharacters() {
        var campaign = Campaign(app: 1, name: "a\u{0}b", message: Message(layout: .modal, title: .init(text: "line one\nline two")))
        campaign.data = CustomData([.init(key: "k\u{1B}", value: "v\n2")])
        campaign.message.primaryAction = .init(text: "Go\nnow", url: "https://example.com")
        let paths = campaign.problems(for: .draft).map(\.path)
        #expect(paths.contains("name"))
        #expect(paths.contains("data.0.key"))
        #expect(paths.contains("message.primaryAction.text"))
        #expect(!paths.contains("message.title.text"))
        #expect(!paths.contains("data.0.value"))
    }
}

// MARK: - Triggers

@Suite("Campaign rules: triggers and event IDs")
struct RulesTriggerTests {
    static let fortyChars = "e" + String(repeating: "x", count: 39)

    @Test("Valid event IDs are accepted", arguments: ["app_launch", "purchase", "exampleTrigger", fortyChars, "A1_b2", "level_up_10"])
    func goodEventID(event: String) {
        #expect(event.count <= 40)
        #expect(EventID.problem(event) == nil)
    }

    @Test("Invalid or reserved event IDs are refused", arguments: [
        "", "1abc", "has space", "dash-ed", fortyChars + "x", "firebase_x", "google_x", "ga_x", "Firebase_x", "GA_x", "_leading", "café",
    ])
    func badEventID(event: String) throws {
        let problem = try #require(EventID.problem(event))
        #expect(RulesCheck.isSentence(problem), "not a sentence: \(problem)")
    }

    @Test("Generated strings: event IDs and colors are accepted exactly when the patterns they are documented by match")
    func generatedFormats() {
        var generator = SystemRandomNumberGenerator()
        let pool: [Character] = ["a", "Z", "f", "G", "0", "9", "_", "#", "-", " ", "é", "e\u{301}", "٣", "日", "😀", "\u{0}", "\n"]
        for _ in 0..<5_000 {
            let text = String((0..<Int.random(in: 0...10, using: &generator)).map { _ in pool.randomElement(using: &generator)! })
            let event = text.replacingOccurrences(of: "#", with: "")
            let eventFormat = event.wholeMatch(of: /[A-Za-z][A-Za-z0-9_]*/) != nil
            let lowered = event.lowercased()
            let reserved = ["firebase_", "google_", "ga_"].contains { lowered.hasPrefix($0) }
            #expect((EventID.problem(event) == nil) == (eventFormat && !reserved && event.count <= 40), "\(event.debugDescription)")
            let color = "#" + text.filter { $0 != "#" }
            let colorFormat = color.wholeMatch(of: /#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})/) != nil
            #expect((ColorValue.problem(color) == nil) == colorFormat, "\(color.debugDescription)")
            #expect((ColorValue.problem(text) == nil) == (text.wholeMatch(of: /#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})/) != nil), "\(text.debugDescription)")
        }
    }

    @Test("Reserved prefixes are named in the reason", arguments: [("firebase_x", "firebase_"), ("Google_x", "google_"), ("ga_x", "ga_")])
    func reservedPrefixNamed(event: String, prefix: String) {
        #expect(EventID.problem(event)?.contains("“\(prefix)”") == true)
    }

    @Test("A bad event ID is reported at triggers.N.event, even in a draft", arguments: ["", "1abc", "dash-ed", "firebase_x", fortyChars + "x"])
    func badEventInCampaign(event: String) {
        // Given a campaign whose second trigger has a bad event
        let campaign = RulesFixtures.campaign(.modal) { $0.triggers = [Trigger(event: "app_launch"), Trigger(event: event)] }

        // Then the second trigger's event is named, for drafts and publishing alike
        RulesCheck.expectOnly("triggers.1.event", in: campaign.problems(for: .draft))
        RulesCheck.expectOnly("triggers.1.event", in: campaign.problems(for: .publish))
    }

    @Test("Built-in events other than push_click carry no properties, so filters on them are refused",
          arguments: Trigger.builtInEvents.filter { $0 != Trigger.pushClickEvent })
    func builtInWithFilters(event: String) {
        // Given a built-in event with a filter, as the third trigger
        let filter = PropertyFilter(property: "screen", op: .eq, value: .string("home"))
        let campaign = RulesFixtures.campaign(.banner) {
            $0.triggers = [Trigger(event: "purchase"), Trigger(event: "level_up"), Trigger(event: event, filters: [filter])]
        }

        // Then the filters of that trigger are refused
        RulesCheck.expectOnly("triggers.2.filters", in: campaign.problems(for: .draft))
    }

    @Test("push_click may filter on campaign_id as a number, and on nothing else")
    func pushClickFilters() {
        func problems(_ filters: [PropertyFilter]) -> [FieldProblem] {
            RulesFixtures.campaign(.banner) { $0.triggers = [Trigger(event: "app_launch"), Trigger(event: "push_click", filters: filters)] }
                .problems(for: .publish)
        }
        // Given filters on the opened push's id: equal to one, above one, present at all
        #expect(problems([PropertyFilter(property: "campaign_id", op: .eq, value: .number(42))]).isEmpty)
        #expect(problems([PropertyFilter(property: "campaign_id", op: .gte, value: .number(40)),
                          PropertyFilter(property: "campaign_id", op: .ne, value: .number(41))]).isEmpty)
        #expect(problems([PropertyFilter(property: "campaign_id", op: .exists)]).isEmpty)

        // Then another property, the id as text, and "contains" are each refused at their field
        let other = problems([PropertyFilter(property: "screen", op: .eq, value: .string("home"))])
        RulesCheck.expectOnly("triggers.1.filters.0.property", in: other)
        #expect(other.first?.text?.key == "push_click_filter_property")
        let text = problems([PropertyFilter(property: "campaign_id", op: .eq, value: .string("42"))])
        RulesCheck.expectOnly("triggers.1.filters.0.value", in: text)
        #expect(text.first?.text?.key == "push_click_filter_number")
        RulesCheck.expectOnly("triggers.1.filters.0.value", in: problems([PropertyFilter(property: "campaign_id", op: .ne, value: .bool(true))]))
        let contains = problems([PropertyFilter(property: "campaign_id", op: .contains, value: .string("4"))])
        RulesCheck.expectOnly("triggers.1.filters.0.op", in: contains)
        #expect(contains.first?.text?.key == "push_click_filter_contains")
    }

    @Test("Purchase and custom events may have filters", arguments: ["purchase", "level_up"])
    func filtersOnOtherEvents(event: String) {
        let filter = PropertyFilter(property: "amount", op: .gt, value: .number(10))
        let campaign = RulesFixtures.campaign(.banner) { $0.triggers = [Trigger(event: event, filters: [filter])] }
        #expect(campaign.problems(for: .publish).isEmpty)
    }

    @Test("At most 20 triggers and 10 filters per trigger")
    func triggerCounts() {
        let filter = PropertyFilter(property: "amount", op: .exists)
        let tooMany = RulesFixtures.campaign(.card) { $0.triggers = (0..<21).map { Trigger(event: "event_\($0)") } }
        let enough = RulesFixtures.campaign(.card) { $0.triggers = (0..<20).map { Trigger(event: "event_\($0)") } }
        let crowded = RulesFixtures.campaign(.card) { $0.triggers = [Trigger(event: "purchase", filters: Array(repeating: filter, count: 11))] }

        RulesCheck.expectOnly("triggers", in: tooMany.problems(for: .draft))
        #expect(enough.problems(for: .publish).isEmpty)
        RulesCheck.expectOnly("triggers.0.filters", in: crowded.problems(for: .draft))
    }
}

// MARK: - Filters

struct RulesFilterCase: Sendable, CustomTestStringConvertible {
    let filter: PropertyFilter
    /// The path suffix of the expected problem, nil when the filter is fine.
    let problem: String?

    init(_ property: String, _ op: FilterOperator, _ value: FilterValue?, refusedAt problem: String? = nil) {
        self.filter = PropertyFilter(property: property, op: op, value: value)
        self.problem = problem
    }

    var testDescription: String {
        let value = filter.value.map { "\($0.typeName) \($0.text)" } ?? "no value"
        return "“\(filter.property)” \(filter.op.rawValue) \(value) → \(problem ?? "fine")"
    }

    static let all: [RulesFilterCase] = [
        // Comparisons need numbers.
        RulesFilterCase("amount", .gt, .number(10)),
        RulesFilterCase("amount", .gte, .number(0)),
        RulesFilterCase("amount", .lt, .number(-2.5)),
        RulesFilterCase("amount", .lte, .number(99)),
        RulesFilterCase("amount", .gt, .string("10"), refusedAt: ".value"),
        RulesFilterCase("amount", .gte, .bool(true), refusedAt: ".value"),
        RulesFilterCase("amount", .lt, .string("abc"), refusedAt: ".value"),
        RulesFilterCase("amount", .lte, .bool(false), refusedAt: ".value"),
        // Contains needs a string.
        RulesFilterCase("sku", .contains, .string("vip")),
        RulesFilterCase("sku", .contains, .number(3), refusedAt: ".value"),
        RulesFilterCase("sku", .contains, .bool(true), refusedAt: ".value"),
        // Exists needs no value.
        RulesFilterCase("coupon", .exists, nil),
        // Equality takes any type.
        RulesFilterCase("first", .eq, .bool(true)),
        RulesFilterCase("plan", .eq, .string("pro")),
        RulesFilterCase("amount", .ne, .number(0)),
        // A value is needed by every operator but exists.
        RulesFilterCase("amount", .eq, nil, refusedAt: ".value"),
        RulesFilterCase("amount", .ne, nil, refusedAt: ".value"),
        RulesFilterCase("amount", .gt, nil, refusedAt: ".value"),
        RulesFilterCase("sku", .contains, nil, refusedAt: ".value"),
        // The property must be named, in at most 40 characters.
        RulesFilterCase("", .eq, .string("x"), refusedAt: ".property"),
        RulesFilterCase(String(repeating: "p", count: 41), .eq, .string("x"), refusedAt: ".property"),
    ]
}

@Suite("Campaign rules: property filters")
struct RulesFilterTests {
    @Test("Event filters check value types, at triggers.N.filters.M", arguments: RulesFilterCase.all)
    func eventFilter(testCase: RulesFilterCase) {
        // Given a purchase trigger (the second) whose second filter is the case under test
        let campaign = RulesFixtures.campaign(.card) {
            $0.triggers = [
                Trigger(event: "app_launch"),
                Trigger(event: "purchase", filters: [PropertyFilter(property: "currency", op: .eq, value: .string("USD")), testCase.filter]),
            ]
        }

        // When it is saved as a draft
        let problems = campaign.problems(for: .draft)

        // Then exactly the expected field is refused, or nothing is
        if let suffix = testCase.problem {
            RulesCheck.expectOnly("triggers.1.filters.1\(suffix)", in: problems)
        } else {
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    @Test("Targeting's user-property filters follow the same rules", arguments: RulesFilterCase.all)
    func userPropertyFilter(testCase: RulesFilterCase) {
        let campaign = RulesFixtures.campaign(.modal) { $0.targeting.userProperties = [testCase.filter] }
        let problems = campaign.problems(for: .draft)
        if let suffix = testCase.problem {
            RulesCheck.expectOnly("targeting.userProperties.0\(suffix)", in: problems)
        } else {
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    @Test("A type mismatch names the operator and the type to choose")
    func mismatchMessage() throws {
        let campaign = RulesFixtures.campaign(.card) {
            $0.triggers = [Trigger(event: "purchase", filters: [PropertyFilter(property: "amount", op: .gte, value: .string("5"))])]
        }
        let problem = try #require(campaign.problems(for: .draft).first)
        #expect(problem.message.contains("“is at least”") && problem.message.contains("number"))
    }
}

// MARK: - Custom data

@Suite("Campaign rules: custom data")
struct RulesCustomDataTests {
    static func campaign(_ pairs: [CustomData.Pair]) -> Campaign {
        RulesFixtures.campaign(.imageOnly) { $0.data = CustomData(pairs) }
    }

    @Test("A repeated key is reported at the second occurrence")
    func duplicateKey() {
        // Given keys a, b, a
        let campaign = Self.campaign([.init(key: "a", value: "1"), .init(key: "b", value: "2"), .init(key: "a", value: "3")])

        // Then the third pair (index 2) is the one named, and the message quotes the key
        let problems = campaign.problems(for: .draft)
        RulesCheck.expectOnly("data.2.key", in: problems)
        #expect(problems.first?.message.contains("“a”") == true)
    }

    @Test("Keys differing only in case are different keys")
    func caseSensitiveKeys() {
        let campaign = Self.campaign([.init(key: "Promo", value: "1"), .init(key: "promo", value: "2")])
        #expect(campaign.problems(for: .publish).isEmpty)
    }

    @Test("An empty key is refused at its index")
    func emptyKey() {
        let campaign = Self.campaign([.init(key: "a", value: "1"), .init(key: "", value: "orphan")])
        RulesCheck.expectOnly("data.1.key", in: campaign.problems(for: .draft))
    }

    @Test("50 pairs are allowed, 51 are refused at data", arguments: [(50, true), (51, false)])
    func pairCount(count: Int, allowed: Bool) {
        let campaign = Self.campaign((0..<count).map { .init(key: "key\($0)", value: "value") })
        if allowed {
            #expect(campaign.problems(for: .publish).isEmpty)
        } else {
            let problems = campaign.problems(for: .draft)
            RulesCheck.expectOnly("data", in: problems)
            #expect(problems.first?.message.contains("51") == true)
        }
    }

    @Test("Keys up to 100 characters and values up to 1000 characters")
    func lengths() {
        let atLimit = Self.campaign([.init(key: String(repeating: "k", count: 100), value: String(repeating: "v", count: 1000))])
        let longKey = Self.campaign([.init(key: "ok", value: "1"), .init(key: String(repeating: "k", count: 101), value: "v")])
        let longValue = Self.campaign([.init(key: "ok", value: "1"), .init(key: "long", value: String(repeating: "v", count: 1001))])

        #expect(atLimit.problems(for: .publish).isEmpty)
        RulesCheck.expectOnly("data.1.key", in: longKey.problems(for: .draft))
        RulesCheck.expectOnly("data.1.value", in: longValue.problems(for: .draft))
    }
}

// MARK: - Schedule, priority, frequency

@Suite("Campaign rules: schedule, priority and frequency")
struct RulesScheduleTests {
    @Test("The end must come after the start", arguments: [0.0, -1, -86_400])
    func endNotAfterStart(offset: TimeInterval) {
        let campaign = RulesFixtures.campaign(.card) {
            $0.schedule = Schedule(start: RulesFixtures.start, end: RulesFixtures.start + offset, timeZone: "UTC")
        }
        RulesCheck.expectOnly("schedule.end", in: campaign.problems(for: .draft))
    }

    @Test("An end one second after the start, or an open start or end, is fine", arguments: [
        Schedule(start: RulesFixtures.start, end: RulesFixtures.start + 1),
        Schedule(start: nil, end: RulesFixtures.end),
        Schedule(start: RulesFixtures.start, end: nil),
        Schedule(),
    ])
    func validSchedules(schedule: Schedule) {
        let campaign = RulesFixtures.campaign(.card) { $0.schedule = schedule }
        #expect(campaign.problems(for: .publish).isEmpty)
    }

    @Test("Time zones must be IANA identifiers", arguments: [
        ("Mars/Olympus", false), ("Asia/Tehran", true), ("UTC", true), ("America/New_York", true), ("Asia/Kolkata", true), ("", false),
    ])
    func timeZones(identifier: String, valid: Bool) {
        let campaign = RulesFixtures.campaign(.card) { $0.schedule.timeZone = identifier }
        let problems = campaign.problems(for: .draft)
        if valid {
            #expect(problems.isEmpty, "\(problems)")
        } else {
            RulesCheck.expectOnly("schedule.timeZone", in: problems)
        }
    }

    @Test("Priority runs from 1 to 10", arguments: [(0, false), (1, true), (10, true), (11, false), (-3, false)])
    func priority(value: Int, valid: Bool) {
        let campaign = RulesFixtures.campaign(.slideup) { $0.priority = value }
        let problems = campaign.problems(for: .draft)
        if valid {
            #expect(problems.isEmpty, "\(problems)")
        } else {
            RulesCheck.expectOnly("priority", in: problems)
        }
    }

    @Test("Every N days needs a number of days from 1 to 365", arguments: [nil, 0, 366, -1] as [Int?])
    func badFrequencyDays(days: Int?) {
        let campaign = RulesFixtures.campaign(.card) { $0.frequency = Frequency(type: .everyNDays, days: days) }
        RulesCheck.expectOnly("frequency.days", in: campaign.problems(for: .draft))
    }

    @Test("Valid frequencies, including once and always without days", arguments: [
        Frequency(type: .everyNDays, days: 1), Frequency(type: .everyNDays, days: 365),
        Frequency(type: .once), Frequency(type: .always), Frequency(type: .once, days: 0),
    ])
    func goodFrequency(frequency: Frequency) {
        let campaign = RulesFixtures.campaign(.card) { $0.frequency = frequency }
        #expect(campaign.problems(for: .publish).isEmpty)
    }
}

// MARK: - Targeting

@Suite("Campaign rules: targeting")
struct RulesTargetingTests {
    static func problems(_ edit: (inout Targeting) -> Void) -> [FieldProblem] {
        RulesFixtures.campaign(.card) { edit(&$0.targeting) }.problems(for: .draft)
    }

    @Test("Percentage runs from 1 to 100", arguments: [(0, false), (1, true), (100, true), (101, false)])
    func percentage(value: Int, valid: Bool) {
        let problems = Self.problems { $0.percentage = value }
        if valid { #expect(problems.isEmpty) } else { RulesCheck.expectOnly("targeting.percentage", in: problems) }
    }

    @Test("An app-version regex must compile", arguments: ["(", "[0-9", "*2"])
    func badRegex(pattern: String) {
        RulesCheck.expectOnly("targeting.appVersion.value", in: Self.problems { $0.appVersion = .init(op: .regex, value: pattern) })
    }

    @Test("Other app-version operators take the text as it is")
    func nonRegexOperators() {
        #expect(Self.problems { $0.appVersion = .init(op: .contains, value: "(") }.isEmpty)
        #expect(Self.problems { $0.appVersion = .init(op: .regex, value: #"^2\.(1|2)\.\d+$"#) }.isEmpty)
        RulesCheck.expectOnly("targeting.appVersion.value", in: Self.problems { $0.appVersion = .init(op: .equals, value: "") })
    }

    @Test("Language codes are lowercase ISO codes with an optional region", arguments: [
        ("en", true), ("fa", true), ("pt-BR", true), ("zh-Hant", true), ("EN", false), ("english", false), ("e", false), ("en_US", false),
    ])
    func languages(code: String, valid: Bool) {
        let problems = Self.problems { $0.languages = ["en", code] }
        if valid { #expect(problems.isEmpty) } else { RulesCheck.expectOnly("targeting.languages.1", in: problems) }
    }

    @Test("Country codes are two uppercase letters", arguments: [("US", true), ("IR", true), ("us", false), ("USA", false), ("U", false)])
    func countries(code: String, valid: Bool) {
        let problems = Self.problems { $0.countries = [code] }
        if valid { #expect(problems.isEmpty) } else { RulesCheck.expectOnly("targeting.countries.0", in: problems) }
    }

    @Test("Days since first open: the minimum may not exceed the maximum")
    func dayRange() {
        RulesCheck.expectOnly("targeting.daysSinceFirstOpen.max", in: Self.problems { $0.daysSinceFirstOpen = .init(min: 10, max: 5) })
        #expect(Self.problems { $0.daysSinceFirstOpen = .init(min: 5, max: 5) }.isEmpty)
        #expect(Self.problems { $0.daysSinceFirstOpen = .init(min: nil, max: 0) }.isEmpty)
        RulesCheck.expectOnly("targeting.daysSinceFirstOpen.min", in: Self.problems { $0.daysSinceFirstOpen = .init(min: -1, max: 5) })
    }

    @Test("A negative maximum of days since first open is reported at the maximum")
    func negativeMaximumPath() {
        // Given a range with a valid minimum and a negative maximum
        let problems = Self.problems { $0.daysSinceFirstOpen = .init(min: nil, max: -1) }

        // Then the maximum is the field named
        #expect(problems.map(\.path) == ["targeting.daysSinceFirstOpen.max"])
    }
}

// MARK: - JSON

@Suite("Campaign JSON: text, order and omitted fields")
struct RulesJSONTests {
    static let persianTitle = "تخفیف ویژه امروز"
    /// Persian with a zero-width non-joiner (U+200C) and a decomposed é (e + U+0301): only byte equality catches a change.
    static let persianBody = "همین حالا می\u{200C}خرید؟ cafe\u{301}"
    static let arabicBody = "خصم خاص لك اليوم فقط"
    static let japaneseButton = "今すぐ購入"

    static func multilingual() -> Campaign {
        RulesFixtures.campaign(.card) {
            $0.name = "حملة الربيع"
            $0.description = Self.persianBody
            $0.message.title = .init(text: Self.persianTitle, color: "#202124")
            $0.message.body = .init(text: Self.arabicBody)
            $0.message.primaryAction?.text = Self.japaneseButton
            $0.message.secondaryAction?.text = "あとで 👋🏽"
            $0.data = CustomData([.init(key: "🎉", value: "جشن 🎉 パーティー")])
        }
    }

    @Test("Text in any script round-trips byte for byte")
    func multilingualRoundTrip() throws {
        // Given a campaign in Persian, Arabic, Japanese and emoji
        let original = Self.multilingual()
        #expect(original.problems(for: .publish).isEmpty)

        // When it is encoded and decoded
        let data = try RulesFixtures.jsonEncoder().encode(original)
        let decoded = try RulesFixtures.jsonDecoder().decode(Campaign.self, from: data)

        // Then it is equal, and every string has exactly the same UTF-8 bytes
        #expect(decoded == original)
        let pairs: [(String?, String?)] = [
            (decoded.name, original.name),
            (decoded.description, original.description),
            (decoded.message.title?.text, original.message.title?.text),
            (decoded.message.body?.text, original.message.body?.text),
            (decoded.message.primaryAction?.text, original.message.primaryAction?.text),
            (decoded.message.secondaryAction?.text, original.message.secondaryAction?.text),
            (decoded.data.pairs.first?.key, original.data.pairs.first?.key),
            (decoded.data.pairs.first?.value, original.data.pairs.first?.value),
        ]
        for (after, before) in pairs {
            let afterBytes = Array(try #require(after).utf8)
            let beforeBytes = Array(try #require(before).utf8)
            #expect(afterBytes == beforeBytes)
        }
        #expect(decoded.message.title?.text.utf8.elementsEqual(Self.persianTitle.utf8) == true)
        #expect(decoded.description?.unicodeScalars.contains("\u{200C}") == true)
        #expect(decoded.description?.unicodeScalars.contains("\u{0301}") == true)

        // And the JSON carries the text itself, as UTF-8, not escaped
        let text = try #require(String(data: data, encoding: .utf8))
        #expect(text.contains(Self.persianTitle))
        #expect(text.contains(Self.japaneseButton))
        #expect(text.contains("\"🎉\""))
    }

    @Test("Dates travel as ISO 8601 and come back to the second")
    func datesRoundTrip() throws {
        let original = RulesFixtures.campaign(.banner)
        let data = try RulesFixtures.jsonEncoder().encode(original)
        let text = try #require(String(data: data, encoding: .utf8))
        #expect(text.contains("\"start\":\"2026-01-01T00:00:00Z\""))
        #expect(try RulesFixtures.jsonDecoder().decode(Campaign.self, from: data).schedule == original.schedule)
    }

    @Test("Every layout's complete campaign round-trips equal, with pairs encoding", arguments: Message.Layout.allCases)
    func everyLayoutRoundTrips(layout: Message.Layout) throws {
        let original = RulesFixtures.campaign(layout)
        let data = try RulesFixtures.jsonEncoder().encode(original)
        #expect(try RulesFixtures.jsonDecoder().decode(Campaign.self, from: data) == original)
    }

    @Test("Filter values keep their JSON type: numbers, strings that look like numbers, and booleans")
    func filterValueTypes() throws {
        let values: [FilterValue] = [.number(20), .number(2.5), .number(-1), .string("20"), .string("true"), .bool(true), .bool(false)]
        let data = try JSONEncoder().encode(values)
        #expect(String(data: data, encoding: .utf8) == #"[20,2.5,-1,"20","true",true,false]"#)
        #expect(try JSONDecoder().decode([FilterValue].self, from: data) == values)
    }

    @Test("Custom data as pairs keeps its order exactly, both ways")
    func pairsKeepOrder() throws {
        // Given 30 pairs in a scrambled order
        let original = CustomData(RulesFixtures.scrambledKeys.map { .init(key: $0, value: "value of \($0)") })

        // When encoded as pairs
        let data = try RulesFixtures.jsonEncoder().encode(original)

        // Then the JSON is an array of {"key", "value"} objects in the same order
        let array = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: String]])
        #expect(array.count == 30)
        #expect(array.allSatisfy { Set($0.keys) == ["key", "value"] })
        #expect(array.map { $0["key"] } == RulesFixtures.scrambledKeys)

        // And it decodes back in exactly the same order
        let decoded = try JSONDecoder().decode(CustomData.self, from: data)
        #expect(decoded == original)
        #expect(decoded.pairs.map(\.key) == RulesFixtures.scrambledKeys)
    }

    @Test("A whole campaign with many custom data pairs round-trips in order when encoded as pairs")
    func campaignPairsRoundTrip() throws {
        let original = RulesFixtures.campaign(.fullscreen) {
            $0.data = CustomData(RulesFixtures.scrambledKeys.map { .init(key: "\($0) 🎉", value: "ارزش \($0)") })
        }
        let data = try RulesFixtures.jsonEncoder().encode(original)
        let decoded = try RulesFixtures.jsonDecoder().decode(Campaign.self, from: data)
        #expect(decoded == original)
    }

    @Test("Custom data as an object reads every pair back")
    func objectDecodes() throws {
        // Given custom data written as a JSON object, which input accepts
        let json = #"{"campaign":"spring","🎉":"جشن","empty":""}"#

        // When it is decoded
        let decoded = try JSONDecoder().decode(CustomData.self, from: Data(json.utf8))

        // Then every pair is there (an object's key order is not promised by decoders)
        #expect(Set(decoded.pairs.map(\.key)) == ["campaign", "🎉", "empty"])
        #expect(decoded.pairs.first { $0.key == "🎉" }?.value == "جشن")
    }

    @Test("Custom data is written as an array of key/value pairs, in their order")
    func pairsKeepOrderInText() throws {
        // Given 30 pairs in a scrambled order
        let original = CustomData(RulesFixtures.scrambledKeys.map { .init(key: $0, value: "v") })

        // When encoded (JSON objects have no order, so pairs are an array)
        let data = try JSONEncoder().encode(original)
        let text = try #require(String(data: data, encoding: .utf8))
        #expect(text.hasPrefix("[{"))

        // Then each key appears in the text after the one before it
        let positions = RulesFixtures.scrambledKeys.compactMap { text.range(of: "\"\($0)\"")?.lowerBound }
        #expect(positions.count == 30)
        #expect(positions == positions.sorted())
    }

    @Test("A campaign with several custom data pairs round-trips through JSON in order")
    func campaignObjectRoundTrip() throws {
        // Given a campaign whose custom data has 30 pairs in a scrambled order
        let original = RulesFixtures.campaign(.card) { $0.data = CustomData(RulesFixtures.scrambledKeys.map { .init(key: $0, value: "v") }) }

        // When it is exported and imported
        let data = try RulesFixtures.jsonEncoder().encode(original)
        let decoded = try RulesFixtures.jsonDecoder().decode(Campaign.self, from: data)

        // Then it is the same campaign, pairs in the same order
        #expect(decoded == original)
    }

    @Test("Absent optionals are omitted; only schedule start and end may be null")
    func absentOptionalsOmitted() throws {
        // Given a minimal slide-up: no id, status, description, title, schedule dates or targeting
        let original = Campaign(
            app: 3, name: "Dark mode", triggers: [Trigger(event: "app_foreground")],
            message: Message(layout: .slideup, body: .init(text: "New: dark mode is here."))
        )
        #expect(original.problems(for: .publish).isEmpty)

        // When it is encoded
        let data = try RulesFixtures.jsonEncoder().encode(original)
        let text = try #require(String(data: data, encoding: .utf8))
        let json = try RulesCheck.json(data)

        // Then the only nulls are schedule.start and schedule.end, which are always written
        #expect(RulesCheck.nullPaths(in: json).sorted() == ["schedule.end", "schedule.start"])
        #expect(text.components(separatedBy: "null").count - 1 == 2)

        // And absent fields are left out rather than written as null
        #expect(!text.contains("\"title\""))
        let message = try #require(json["message"] as? [String: Any])
        #expect(Set(message.keys) == ["layout", "body"])
        #expect(json["id"] == nil && json["status"] == nil && json["description"] == nil)
        #expect((json["targeting"] as? [String: Any])?.isEmpty == true)
        let schedule = try #require(json["schedule"] as? [String: Any])
        #expect(Set(schedule.keys) == ["start", "end", "timeZone"])

        // And it reads back equal
        #expect(try RulesFixtures.jsonDecoder().decode(Campaign.self, from: data) == original)
    }

    @Test("A filter with exists writes no value key")
    func existsHasNoValueKey() throws {
        let data = try JSONEncoder().encode(PropertyFilter(property: "coupon", op: .exists))
        #expect(String(data: data, encoding: .utf8).map { !$0.contains("value") && !$0.contains("null") } == true)
    }

    @Test("With dates set, the schedule writes no null at all")
    func scheduleWithDates() throws {
        let data = try RulesFixtures.jsonEncoder().encode(RulesFixtures.campaign(.slideup))
        #expect(RulesCheck.nullPaths(in: try RulesCheck.json(data)).isEmpty)
    }

    @Test("Feeds and stored documents are read leniently: a newer server's extra keys do not break a client")
    func lenientReading() throws {
        let json = #"{"app": 1, "name": "x", "futureField": true, "message": {"layout": "modal", "shape": "round"}}"#
        let campaign = try CampaignJSON.decoder().decode(Campaign.self, from: Data(json.utf8))
        #expect(campaign.name == "x")
    }
}

// MARK: - Layout fields

@Suite("Message.keepingLayoutFields")
struct RulesLayoutFieldTests {
    @Test("An image-only message keeps only its image and action")
    func imageOnlyKeepsImageAndAction() {
        // Given an image-only message that still carries a title, body, colors and buttons
        let message = RulesFixtures.everything(.imageOnly)

        // When the layout's fields are kept
        let kept = message.keepingLayoutFields

        // Then only imageUrl and action remain
        #expect(kept == Message(layout: .imageOnly, imageUrl: message.imageUrl, action: message.action))
        #expect(kept.title == nil && kept.primaryAction == nil && kept.secondaryAction == nil && kept.backgroundColor == nil)
    }

    @Test("A card keeps its landscape image and both buttons")
    func cardKeepsLandscape() {
        let kept = RulesFixtures.everything(.card).keepingLayoutFields
        #expect(kept.landscapeImageUrl == "https://cdn.example.com/landscape.png")
        #expect(kept.secondaryAction?.text == "No")
        #expect(kept.action == nil && kept.dismiss == nil && kept.slideFrom == nil && kept.orientation == nil)
    }

    @Test("A modal drops the landscape image and the second button")
    func modalDropsCardOnlyFields() {
        let message = RulesFixtures.everything(.modal)
        let kept = message.keepingLayoutFields
        #expect(kept.landscapeImageUrl == nil)
        #expect(kept.secondaryAction == nil)
        #expect(kept == Message(
            layout: .modal, title: message.title, body: message.body, imageUrl: message.imageUrl,
            backgroundColor: message.backgroundColor, primaryAction: message.primaryAction
        ))
    }

    @Test("Each layout keeps exactly its fields, and keeping twice changes nothing", arguments: Message.Layout.allCases)
    func keepsExactlyTheLayoutFields(layout: Message.Layout) throws {
        let kept = RulesFixtures.everything(layout).keepingLayoutFields
        let present: [Message.Field: Bool] = [
            .title: kept.title != nil, .body: kept.body != nil, .imageUrl: kept.imageUrl != nil,
            .landscapeImageUrl: kept.landscapeImageUrl != nil, .backgroundColor: kept.backgroundColor != nil,
            .primaryAction: kept.primaryAction != nil, .secondaryAction: kept.secondaryAction != nil, .action: kept.action != nil,
            .dismiss: kept.dismiss != nil, .slideFrom: kept.slideFrom != nil, .orientation: kept.orientation != nil,
        ]
        #expect(present.count == Message.Field.allCases.count)
        #expect(Set(present.filter(\.value).keys) == layout.fields)
        #expect(kept.layout == layout)
        #expect(kept.keepingLayoutFields == kept)
    }

    @Test("The complete fixtures use only their layout's fields", arguments: Message.Layout.allCases)
    func fixturesAreTrimmed(layout: Message.Layout) {
        let message = RulesFixtures.campaign(layout).message
        #expect(message.keepingLayoutFields == message)
    }
}

@Suite("Conversion goals")
struct RulesConversionGoalTests {
    @Test("A goal's window covers from the impression to windowHours after it, both ends included; a window out of range covers nothing")
    func window() {
        let shown = Date(timeIntervalSince1970: 1_800_000_000)
        let goal = ConversionGoal(event: "purchase", windowHours: 2)
        #expect(goal.covers(shownAt: shown, now: shown))
        #expect(goal.covers(shownAt: shown, now: shown.addingTimeInterval(7200)))
        #expect(!goal.covers(shownAt: shown, now: shown.addingTimeInterval(7200.001)))
        #expect(!goal.covers(shownAt: shown, now: shown.addingTimeInterval(-1)))
        for hours in [0, -1, 721, Int.max, Int.min] {
            #expect(!ConversionGoal(event: "purchase", windowHours: hours).covers(shownAt: shown, now: shown), "\(hours)")
        }
    }

    @Test("Validation names each part of a goal: its event, its filters, its window; a push campaign has none")
    func validation() {
        var campaign = RulesFixtures.campaign(.card)
        campaign.conversion = ConversionGoal(event: "purchase", filters: [PropertyFilter(property: "value", op: .gte, value: .number(10))], windowHours: 720)
        #expect(campaign.problems(for: .publish).isEmpty)
        campaign.conversion = ConversionGoal(event: "firebase_x", filters: [PropertyFilter(property: "value", op: .gt, value: .string("ten"))], windowHours: 0)
        #expect(RulesCheck.paths(campaign, .draft) == ["conversion.event", "conversion.filters.0.value", "conversion.windowHours"])
        campaign.conversion = ConversionGoal(event: "session_start", filters: [PropertyFilter(property: "x", op: .exists)])
        RulesCheck.expectOnly("conversion.filters", in: campaign.problems(for: .draft))
        var push = Campaign(app: 1, name: "Push", push: PushNotification(title: "Hello"))
        push.conversion = ConversionGoal(event: "purchase")
        RulesCheck.expectOnly("conversion", in: push.problems(for: .draft))
    }
}
