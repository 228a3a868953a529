import Foundation

/// One thing wrong with a campaign: where (its JSON path, which is also the form field's name) and why.
/// `message` is English, for the API, the command line and logs; `text`, when the problem has one, is its
/// key and arguments, which the console renders in the reader's language (`Localizer.message(for:)`).
public struct FieldProblem: Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let message: String
    public let text: ProblemText?

    /// A problem with only an English message (the console shows it as it is).
    public init(_ path: String, _ message: String) {
        self.path = path
        self.message = message
        self.text = nil
    }

    public init(_ path: String, _ text: ProblemText) {
        self.path = path
        self.message = text.message
        self.text = text
    }

    /// A problem whose English says more than its catalog sentence (Foundation's words for a value it
    /// could not read): the API keeps `message`, the console shows `text`.
    public init(_ path: String, _ text: ProblemText, message: String) {
        self.path = path
        self.message = message
        self.text = text
    }

    /// `ProblemText(key, arguments)` at `path`.
    public init(path: String, key: String, arguments: [String: ProblemText.Argument] = [:]) {
        self.init(path, ProblemText(key, arguments))
    }

    /// The same problem reported at another path (a language version's, for a problem of the default's).
    public func at(_ path: String) -> FieldProblem {
        text.map { FieldProblem(path, $0, message: message) } ?? FieldProblem(path, message)
    }

    /// The catalog key, or nil for a problem with only an English message.
    public var key: String? { text?.key }

    public var description: String { "\(path): \(message)" }
}

/// Format rules apply to every save; completeness rules only to publishing.
public enum ValidationMode: Sendable {
    case draft, publish
}

/// The limits the rules enforce, in one place for the docs and the error messages.
public enum CampaignLimits {
    public static let nameLength = 200
    public static let descriptionLength = 2000
    public static let titleLength = 200
    public static let bodyLength = 1000
    public static let buttonTextLength = 60
    public static let dataPairs = 50
    public static let dataKeyLength = 100
    public static let dataValueLength = 1000
    public static let eventIDLength = 40
    public static let triggers = 20
    public static let filtersPerTrigger = 10
    /// A conversion goal's window, in hours: up to 30 days.
    public static let conversionWindowHours = 1...720
    public static let dismissSeconds = 1...120
    public static let frequencyDays = 1...365
    public static let reservedEventPrefixes = ["firebase_", "google_", "ga_"]
    /// Image and action URLs.
    public static let urlLength = 2000
    /// An app version rule's value. Devices run a `regex` rule against their version string, so its
    /// length bounds the work one rule can ask of every device (which also gives up on a slow one).
    public static let appVersionRuleLength = 100
    public static let filterTextLength = 1000
    public static let userPropertyFilters = 10
    public static let languages = 50
    public static let countries = 250
    /// A hundred years: beyond that a rule is a typo, and devices compute days in ordinary integers.
    public static let daysSinceFirstOpen = 0...36_500
    /// Language versions of one message, the default aside.
    public static let languageVersions = 50
    /// A notification's subtitle, sound, category and thread id.
    public static let pushSubtitleLength = 200
    public static let pushNameLength = 64
    /// The icon badge: Apple keeps it an integer; a badge past this is a typo.
    public static let badge = 0...99_999
}

extension Campaign {
    /// Every problem with this campaign for `mode`, in form order. Empty means it can be saved (or published).
    public func problems(for mode: ValidationMode) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        func add(_ path: String, _ key: String, _ arguments: [String: ProblemText.Argument] = [:]) {
            problems.append(FieldProblem(path: path, key: key, arguments: arguments))
        }

        let trimmedName = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmedName.isEmpty { add("name", "name_required") }
        if name.scalarCount > CampaignLimits.nameLength { add("name", "name_too_long", ["limit": .number(CampaignLimits.nameLength)]) }
        if (description ?? "").scalarCount > CampaignLimits.descriptionLength {
            add("description", "description_too_long", ["limit": .number(CampaignLimits.descriptionLength)])
        }
        if !(1...10).contains(priority) { add("priority", "priority_range") }

        // What is judged for `mode` is what is stored: fields the layout does not use are dropped when
        // saving (`content`). A malformed value in a dropped field is still refused: whoever sent it made
        // a mistake that silently dropping it would hide. (The composer drops such fields before judging:
        // they are what the marketer typed under another layout.)
        switch channel {
        case .inApp:
            // Dropped when saved: whoever sent it meant something else, which dropping it would hide.
            if push != nil { problems.append(FieldProblem(path: "push", key: "push_on_in_app")) }
            let stored = message.keepingLayoutFields.problems(for: mode)
            problems += stored + message.problems(for: .draft).filter { !stored.contains($0) }
            problems += triggerProblems(for: mode)
        case .push:
            problems += pushProblems(for: mode)
        }
        // A push campaign goes once to each device; a malformed rule is still refused, not kept unread.
        problems += frequencyProblems()
        problems += conversionProblems()
        problems += dataProblems()
        problems += scheduleProblems()
        problems += targeting.problems()
        problems += controlCharacterProblems()
        return problems
    }

    /// Every text of the campaign with its path, and whether it may hold line breaks.
    var texts: [(path: String, text: String, multiline: Bool)] {
        var texts: [(String, String, Bool)] = [("name", name, false), ("description", description ?? "", true)]
        texts += push?.texts ?? []
        let message = self.message.keepingLayoutFields
        texts += [("message.title.text", message.title?.text ?? "", true), ("message.body.text", message.body?.text ?? "", true)]
        for (path, button) in [("message.primaryAction", message.primaryAction), ("message.secondaryAction", message.secondaryAction)] {
            texts += [("\(path).text", button?.text ?? "", false), ("\(path).url", button?.url ?? "", false)]
        }
        texts += [
            ("message.imageUrl", message.imageUrl ?? "", false), ("message.landscapeImageUrl", message.landscapeImageUrl ?? "", false),
            ("message.action.url", message.action?.url ?? "", false), ("schedule.timeZone", schedule.timeZone, false),
            ("targeting.appVersion.value", targeting.appVersion?.value ?? "", false),
        ]
        for (tag, version) in (message.translations ?? [:]).sorted(by: { $0.key < $1.key }) {
            let path = "message.translations.\(tag)"
            texts += [("\(path).title.text", version.title?.text ?? "", true), ("\(path).body.text", version.body?.text ?? "", true)]
            for (name, button) in [("primaryAction", version.primaryAction), ("secondaryAction", version.secondaryAction)] {
                texts += [("\(path).\(name).text", button?.text ?? "", false), ("\(path).\(name).url", button?.url ?? "", false)]
            }
            texts += [("\(path).imageUrl", version.imageUrl ?? "", false), ("\(path).landscapeImageUrl", version.landscapeImageUrl ?? "", false),
                      ("\(path).action.url", version.action?.url ?? "", false)]
        }
        for (index, pair) in data.pairs.enumerated() {
            texts += [("data.\(index).key", pair.key, false), ("data.\(index).value", pair.value, true)]
        }
        for (index, trigger) in triggers.enumerated() {
            texts.append(("triggers.\(index).event", trigger.event, false))
            texts += trigger.filters.enumerated().flatMap { $1.texts(at: "triggers.\(index).filters.\($0)") }
        }
        if let conversion {
            texts.append(("conversion.event", conversion.event, false))
            texts += conversion.filters.enumerated().flatMap { $1.texts(at: "conversion.filters.\($0)") }
        }
        texts += (targeting.userProperties ?? []).enumerated().flatMap { $1.texts(at: "targeting.userProperties.\($0)") }
        texts += (targeting.languages ?? []).enumerated().map { ("targeting.languages.\($0)", $1, false) }
        texts += (targeting.countries ?? []).enumerated().map { ("targeting.countries.\($0)", $1, false) }
        return texts
    }

    /// Control characters are not text in any script: a NUL cuts a name short in SQLite's C API, and
    /// the others show as boxes or reorder nothing. Line breaks and tabs stay allowed where text may span lines.
    private func controlCharacterProblems() -> [FieldProblem] {
        texts.compactMap { path, text, multiline in
            // Surrounding line breaks are blankness, which the field's own rule reports (forms trim them).
            let refused = ControlCharacters.first(in: text.trimmingCharacters(in: .whitespacesAndNewlines), multiline: multiline)
            return refused.map {
                FieldProblem(path: path, key: multiline ? "control_character" : "control_character_one_line",
                             arguments: ["character": .text(ControlCharacters.name($0))])
            }
        }
    }

    private func dataProblems() -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if data.pairs.count > CampaignLimits.dataPairs {
            problems.append(FieldProblem(path: "data", key: "too_many_data_pairs", arguments: ["limit": .number(CampaignLimits.dataPairs), "count": .number(data.pairs.count)]))
        }
        var seen: Set<String> = []
        for (index, pair) in data.pairs.enumerated() {
            // Length first: hashing a key costs Swift the square of its longest run of combining marks.
            if pair.key.scalarCount > CampaignLimits.dataKeyLength {
                problems.append(FieldProblem(path: "data.\(index).key", key: "data_key_too_long", arguments: ["limit": .number(CampaignLimits.dataKeyLength)]))
            } else if pair.key.isEmpty {
                problems.append(FieldProblem(path: "data.\(index).key", key: "data_key_required"))
            } else if !seen.insert(pair.key).inserted {
                problems.append(FieldProblem(path: "data.\(index).key", key: "data_key_duplicate", arguments: ["key": .text(pair.key)]))
            }
            if pair.value.scalarCount > CampaignLimits.dataValueLength {
                problems.append(FieldProblem(path: "data.\(index).value", key: "data_value_too_long", arguments: ["limit": .number(CampaignLimits.dataValueLength)]))
            }
        }
        return problems
    }

    private func triggerProblems(for mode: ValidationMode) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if mode == .publish && triggers.isEmpty {
            problems.append(FieldProblem(path: "triggers", key: "trigger_required"))
        }
        if triggers.count > CampaignLimits.triggers {
            problems.append(FieldProblem(path: "triggers", key: "too_many_triggers", arguments: ["limit": .number(CampaignLimits.triggers)]))
        }
        for (index, trigger) in triggers.enumerated() {
            if let problem = EventID.problemText(trigger.event) {
                problems.append(FieldProblem("triggers.\(index).event", problem))
            }
            if trigger.filters.count > CampaignLimits.filtersPerTrigger {
                problems.append(FieldProblem(path: "triggers.\(index).filters", key: "too_many_filters", arguments: ["limit": .number(CampaignLimits.filtersPerTrigger)]))
            }
            if trigger.event != Trigger.pushClickEvent && Trigger.builtInEvents.contains(trigger.event) && !trigger.filters.isEmpty {
                problems.append(FieldProblem(path: "triggers.\(index).filters", key: "built_in_event_filters"))
            }
            for (filterIndex, filter) in trigger.filters.enumerated() {
                problems += filter.problems(at: "triggers.\(index).filters.\(filterIndex)")
                if trigger.event == Trigger.pushClickEvent {
                    problems += filter.pushClickProblems(at: "triggers.\(index).filters.\(filterIndex)")
                }
            }
        }
        return problems
    }

    private func conversionProblems() -> [FieldProblem] {
        guard let conversion else { return [] }
        // The clients count a conversion after an in-app impression; nothing would ever count a push's.
        if channel == .push { return [FieldProblem(path: "conversion", key: "conversion_on_push")] }
        var problems: [FieldProblem] = []
        if let problem = EventID.problemText(conversion.event) {
            problems.append(FieldProblem("conversion.event", problem))
        }
        if conversion.filters.count > CampaignLimits.filtersPerTrigger {
            problems.append(FieldProblem(path: "conversion.filters", key: "too_many_filters", arguments: ["limit": .number(CampaignLimits.filtersPerTrigger)]))
        }
        if Trigger.builtInEvents.contains(conversion.event) && !conversion.filters.isEmpty {
            problems.append(FieldProblem(path: "conversion.filters", key: "built_in_event_filters"))
        }
        for (index, filter) in conversion.filters.enumerated() {
            problems += filter.problems(at: "conversion.filters.\(index)")
        }
        let hours = CampaignLimits.conversionWindowHours
        if !hours.contains(conversion.windowHours) {
            problems.append(FieldProblem(
                path: "conversion.windowHours", key: "conversion_window",
                arguments: ["min": .number(hours.lowerBound), "max": .number(hours.upperBound)]))
        }
        return problems
    }

    private func scheduleProblems() -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if TimeZoneName.zone(schedule.timeZone) == nil {
            problems.append(FieldProblem(
                path: "schedule.timeZone", key: "time_zone_unknown",
                arguments: ["zone": .text(String(schedule.timeZone.prefix(TimeZoneName.maximumLength)))]))
        }
        for (path, date) in [("schedule.start", schedule.start), ("schedule.end", schedule.end)] {
            if let date, !UTCTime.supported.contains(date) {
                problems.append(FieldProblem(path: path, key: "date_unsupported"))
            }
        }
        if let start = schedule.start, let end = schedule.end, end <= start {
            problems.append(FieldProblem(path: "schedule.end", key: "end_before_start"))
        }
        return problems
    }

    private func frequencyProblems() -> [FieldProblem] {
        guard frequency.type == .everyNDays else { return [] }
        guard let days = frequency.days, CampaignLimits.frequencyDays.contains(days) else {
            return [FieldProblem(path: "frequency.days", key: "frequency_days")]
        }
        return []
    }
}

extension LanguageTag {
    /// A campaign's language versions (a message's or a notification's) in tag order, with what is wrong
    /// with their tags added to `problems` at `path`: too many versions, a tag of the wrong shape (that
    /// version is left out), two tags for one language.
    static func checkedVersions<Version>(_ versions: [String: Version], at path: String, problems: inout [FieldProblem]) -> [(tag: String, version: Version)] {
        if versions.count > CampaignLimits.languageVersions {
            problems.append(FieldProblem(path: path, key: "too_many_language_versions", arguments: ["limit": .number(CampaignLimits.languageVersions)]))
        }
        var seen: Set<String> = []
        var checked: [(String, Version)] = []
        for (tag, version) in versions.sorted(by: { $0.key < $1.key }) {
            guard isValid(tag) else {
                problems.append(FieldProblem(path: "\(path).\(tag)", key: "language_tag_invalid", arguments: ["tag": .text(String(tag.prefix(40)))]))
                continue
            }
            if !seen.insert(tag.lowercased()).inserted {
                problems.append(FieldProblem(path: "\(path).\(tag)", key: "language_version_duplicate", arguments: ["tag": .text(tag)]))
            }
            checked.append((tag, version))
        }
        return checked
    }
}

extension Message {
    func problems(for mode: ValidationMode) -> [FieldProblem] {
        defaultVersionProblems(for: mode) + translationProblems(for: mode)
    }

    /// Each language version is checked as devices will get it, over the default; a problem is reported
    /// at the version's path (`message.translations.fa.title.text`) only when the version sets that part,
    /// the others being the default version's own.
    private func translationProblems(for mode: ValidationMode) -> [FieldProblem] {
        guard let translations else { return [] }
        var problems: [FieldProblem] = []
        for (tag, version) in LanguageTag.checkedVersions(translations, at: "message.translations", problems: &problems) {
            let path = "message.translations.\(tag)"
            for problem in applying(version).defaultVersionProblems(for: mode) {
                guard let part = problem.path.dropPrefix("message."), version.sets(part, over: self) else { continue }
                problems.append(problem.at("\(path).\(part)"))
            }
        }
        return problems
    }

    private func defaultVersionProblems(for mode: ValidationMode) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        func add(_ path: String, _ key: String, _ arguments: [String: ProblemText.Argument] = [:]) {
            problems.append(FieldProblem(path: "message.\(path)", key: key, arguments: arguments))
        }
        func add(_ path: String, _ text: ProblemText) { problems.append(FieldProblem("message.\(path)", text)) }

        for (path, text, limit) in [("title", title, CampaignLimits.titleLength), ("body", body, CampaignLimits.bodyLength)] {
            guard let text else { continue }
            if text.text.scalarCount > limit { add("\(path).text", "text_too_long", ["limit": .number(limit)]) }
            if let color = text.color, !color.isEmpty, let problem = ColorValue.problemText(color) { add("\(path).color", problem) }
        }
        for (path, url) in [("imageUrl", imageUrl), ("landscapeImageUrl", landscapeImageUrl)] {
            if let url, !url.isEmpty, let problem = ImageURL.problemText(url) { add(path, problem) }
        }
        for (path, url) in [("imageUrl", imageUrl), ("landscapeImageUrl", landscapeImageUrl), ("action.url", action?.url),
                            ("primaryAction.url", primaryAction?.url), ("secondaryAction.url", secondaryAction?.url)] {
            if let url, url.scalarCount > CampaignLimits.urlLength { add(path, "url_too_long", ["limit": .number(CampaignLimits.urlLength)]) }
        }
        if let color = backgroundColor, !color.isEmpty, let problem = ColorValue.problemText(color) { add("backgroundColor", problem) }
        for (path, button) in [("primaryAction", primaryAction), ("secondaryAction", secondaryAction)] {
            guard let button else { continue }
            if button.text.scalarCount > CampaignLimits.buttonTextLength {
                add("\(path).text", "button_text_too_long", ["limit": .number(CampaignLimits.buttonTextLength)])
            }
            if let color = button.textColor, !color.isEmpty, let problem = ColorValue.problemText(color) { add("\(path).textColor", problem) }
            if let color = button.buttonColor, !color.isEmpty, let problem = ColorValue.problemText(color) { add("\(path).buttonColor", problem) }
            if let url = button.url, !url.isEmpty, let problem = ActionURL.problemText(url) { add("\(path).url", problem) }
        }
        if let action, !action.url.isEmpty, let problem = ActionURL.problemText(action.url) { add("action.url", problem) }
        if let dismiss, !CampaignLimits.dismissSeconds.contains(dismiss.seconds) {
            add("dismiss.seconds", "dismiss_range", ["min": .number(CampaignLimits.dismissSeconds.lowerBound), "max": .number(CampaignLimits.dismissSeconds.upperBound)])
        }

        guard mode == .publish else { return problems }
        // What delivery components need to draw the layout; they drop messages without it. Blank counts as missing.
        func blank(_ value: String?) -> Bool { (value ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        let fields = layout.fields
        let needsTitle = layout != .imageOnly && layout != .slideup
        if needsTitle && blank(title?.text) { add("title.text", "title_required_\(layout.rawValue)") }
        if layout == .slideup && blank(body?.text) { add("body.text", "slideup_text_required") }
        if [.card, .imageOnly, .fullscreen].contains(layout) && blank(imageUrl) {
            add("imageUrl", layout == .card ? "card_image_required" : "image_required_\(layout.rawValue)")
        }
        if layout == .card {
            if blank(backgroundColor) { add("backgroundColor", "card_background_required") }
            if blank(primaryAction?.text) { add("primaryAction.text", "card_button_text_required") }
            if blank(primaryAction?.url) { add("primaryAction.url", "card_button_action_required") }
        } else if fields.contains(.primaryAction), let button = primaryAction {
            // Elsewhere the primary button is optional, but a button and its action go together.
            if blank(button.text) && !blank(button.url) { add("primaryAction.text", "button_text_missing") }
            if !blank(button.text) && blank(button.url) { add("primaryAction.url", "button_action_missing") }
        }
        if let button = secondaryAction, blank(button.text), !blank(button.url) {
            add("secondaryAction.text", "second_button_text_missing")
        }
        return problems
    }
}

extension PropertyFilter {
    /// A `push_click` carries one property, the opened push campaign's id (a number), so its filters may
    /// compare only that, as a number.
    func pushClickProblems(at path: String) -> [FieldProblem] {
        if !property.isEmpty && property != Trigger.pushCampaignProperty {
            return [FieldProblem(path: "\(path).property", key: "push_click_filter_property")]
        }
        switch (op, value) {
        case (.contains, _):
            return [FieldProblem(path: "\(path).op", key: "push_click_filter_contains")]
        case (.exists, _), (_, .number?), (_, nil):
            return []
        default:
            return [FieldProblem(path: "\(path).value", key: "push_click_filter_number")]
        }
    }

    func texts(at path: String) -> [(path: String, text: String, multiline: Bool)] {
        var texts = [("\(path).property", property, false)]
        if case .string(let text) = value { texts.append(("\(path).value", text, false)) }
        return texts
    }

    func problems(at path: String) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if case .string(let text) = value, text.scalarCount > CampaignLimits.filterTextLength {
            problems.append(FieldProblem(path: "\(path).value", key: "filter_value_too_long", arguments: ["limit": .number(CampaignLimits.filterTextLength)]))
        }
        if property.isEmpty {
            problems.append(FieldProblem(path: "\(path).property", key: "filter_property_required"))
        } else if property.scalarCount > CampaignLimits.eventIDLength {
            problems.append(FieldProblem(path: "\(path).property", key: "filter_property_too_long", arguments: ["limit": .number(CampaignLimits.eventIDLength)]))
        }
        switch (op, value) {
        case (.exists, _):
            break
        case (_, nil):
            problems.append(FieldProblem(path: "\(path).value", key: "filter_value_required"))
        case (.gt, .some(let value)), (.gte, .some(let value)), (.lt, .some(let value)), (.lte, .some(let value)):
            if case .number = value {} else {
                problems.append(FieldProblem(path: "\(path).value", key: "filter_needs_number_\(op.rawValue)"))
            }
        case (.contains, .some(let value)):
            if case .string = value {} else {
                problems.append(FieldProblem(path: "\(path).value", key: "filter_needs_text"))
            }
        case (.eq, _), (.ne, _):
            break
        }
        return problems
    }
}

extension Targeting {
    /// What is wrong with the rules, with paths from the campaign (`targeting.percentage`); a campaign's
    /// texts are checked for control characters besides (`Campaign.problems`).
    public func problems() -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if let percentage, !(1...100).contains(percentage) {
            problems.append(FieldProblem(path: "targeting.percentage", key: "percentage_range"))
        }
        if let rule = appVersion {
            if rule.value.isEmpty {
                problems.append(FieldProblem(path: "targeting.appVersion.value", key: "app_version_required"))
            } else if rule.value.scalarCount > CampaignLimits.appVersionRuleLength {
                problems.append(FieldProblem(path: "targeting.appVersion.value", key: "app_version_too_long", arguments: ["limit": .number(CampaignLimits.appVersionRuleLength)]))
            } else if rule.op == .regex, (try? NSRegularExpression(pattern: rule.value)) == nil {
                problems.append(FieldProblem(path: "targeting.appVersion.value", key: "app_version_regex_invalid"))
            }
        }
        for (index, language) in (languages ?? []).enumerated() where language.wholeMatch(of: /[a-z]{2,3}(-[A-Za-z0-9]{2,8})?/) == nil {
            problems.append(FieldProblem(path: "targeting.languages.\(index)", key: "language_code_invalid", arguments: ["code": .text(language)]))
        }
        for (index, country) in (countries ?? []).enumerated() where country.wholeMatch(of: /[A-Z]{2}/) == nil {
            problems.append(FieldProblem(path: "targeting.countries.\(index)", key: "country_code_invalid", arguments: ["code": .text(country)]))
        }
        for (path, list, limit) in [("languages", languages, CampaignLimits.languages), ("countries", countries, CampaignLimits.countries)]
        where (list ?? []).count > limit {
            problems.append(FieldProblem(path: "targeting.\(path)", key: "too_many_\(path)", arguments: ["limit": .number(limit)]))
        }
        if (userProperties ?? []).count > CampaignLimits.userPropertyFilters {
            problems.append(FieldProblem(path: "targeting.userProperties", key: "too_many_user_properties", arguments: ["limit": .number(CampaignLimits.userPropertyFilters)]))
        }
        for (index, filter) in (userProperties ?? []).enumerated() {
            problems += filter.problems(at: "targeting.userProperties.\(index)")
        }
        if let range = daysSinceFirstOpen {
            let allowed = CampaignLimits.daysSinceFirstOpen
            for (path, days) in [("min", range.min), ("max", range.max)] {
                guard let days else { continue }
                if days < 0 {
                    problems.append(FieldProblem(path: "targeting.daysSinceFirstOpen.\(path)", key: "days_negative"))
                } else if days > allowed.upperBound {
                    problems.append(FieldProblem(path: "targeting.daysSinceFirstOpen.\(path)", key: "days_too_many", arguments: ["limit": .number(allowed.upperBound)]))
                }
            }
            if let min = range.min, let max = range.max, min > max {
                problems.append(FieldProblem(path: "targeting.daysSinceFirstOpen.max", key: "days_max_below_min"))
            }
        }
        return problems
    }
}

extension MessageTranslation {
    /// Whether this version sets the message part at `path` (`title.text`, `primaryAction.url`, `imageUrl`) over
    /// `message`, the default version. A button the default lacks is the version's own, each of its parts: a
    /// version that gives a modal a button with an action and no text must hear of the text at its path.
    func sets(_ path: String, over message: Message) -> Bool {
        let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
        switch (parts.first, parts.count > 1 ? parts[1] : nil) {
        case ("title", "text"): return title != nil
        case ("body", "text"): return body != nil
        case ("imageUrl", nil): return imageUrl != nil
        case ("landscapeImageUrl", nil): return landscapeImageUrl != nil
        case ("primaryAction", "text"): return primaryAction?.text != nil || (primaryAction != nil && message.primaryAction == nil)
        case ("primaryAction", "url"): return primaryAction?.url != nil || (primaryAction != nil && message.primaryAction == nil)
        case ("secondaryAction", "text"): return secondaryAction?.text != nil || (secondaryAction != nil && message.secondaryAction == nil)
        case ("secondaryAction", "url"): return secondaryAction?.url != nil || (secondaryAction != nil && message.secondaryAction == nil)
        case ("action", "url"): return action != nil
        default: return false
        }
    }
}

extension String {
    /// The rest of the string after `prefix`, or nil when it does not start with it.
    func dropPrefix(_ prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}

/// C0 and C1 control characters, which are not text in any script: refused in what Herald stores.
public enum ControlCharacters {
    /// The first control character of `text`; tab, line feed and carriage return count only when not `multiline`.
    public static func first(in text: String, multiline: Bool) -> Unicode.Scalar? {
        text.unicodeScalars.first { scalar in
            switch scalar.value {
            case 0x09, 0x0A, 0x0D: !multiline
            case 0x00...0x1F, 0x7F...0x9F: true
            default: false
            }
        }
    }

    /// How a refused character is named in messages: `U+0001`.
    public static func name(_ scalar: Unicode.Scalar) -> String {
        "U+\(String(format: "%04X", scalar.value))"
    }
}

/// Analytics event IDs: a letter first, then letters, digits and underscores, at most 40, no reserved prefix.
public enum EventID {
    public static func problem(_ event: String) -> String? { problemText(event)?.message }

    public static func problemText(_ event: String) -> ProblemText? {
        if event.isEmpty { return ProblemText("event_required") }
        if event.scalarCount > CampaignLimits.eventIDLength { return ProblemText("event_too_long", ["limit": .number(CampaignLimits.eventIDLength)]) }
        // By bytes rather than a regex literal, which Swift parses again each time it is evaluated: for
        // every event of every batch that was a tenth of ingestion's CPU.
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        guard let first = event.utf8.first, isLetter(first),
              event.utf8.allSatisfy({ isLetter($0) || (0x30...0x39).contains($0) || $0 == 0x5F }) else {
            return ProblemText("event_format")
        }
        if let prefix = CampaignLimits.reservedEventPrefixes.first(where: { event.lowercased().hasPrefix($0) }) {
            return ProblemText("event_reserved", ["prefix": .text(prefix)])
        }
        return nil
    }
}

/// `#RRGGBB` or `#AARRGGBB`.
public enum ColorValue {
    public static func problem(_ color: String) -> String? { problemText(color)?.message }

    public static func problemText(_ color: String) -> ProblemText? {
        let digits = color.utf8.dropFirst()
        let valid = color.utf8.first == 0x23 && (digits.count == 6 || digits.count == 8)
            && digits.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
        return valid ? nil : ProblemText("color_invalid")
    }
}

/// Images are fetched by devices over https only.
public enum ImageURL {
    public static func problem(_ url: String) -> String? { problemText(url)?.message }

    public static func problemText(_ url: String) -> ProblemText? {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
              let host = components.host, !host.isEmpty else {
            return ProblemText("image_url_invalid")
        }
        return nil
    }
}

/// Actions open an https URL or an app deep link (`myapp://path`), never script or data.
public enum ActionURL {
    static let refusedSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "http", "about", "blob"]

    public static func problem(_ url: String) -> String? { problemText(url)?.message }

    public static func problemText(_ url: String) -> ProblemText? {
        let written = url.prefix { $0 != ":" }.lowercased().trimmingCharacters(in: .whitespaces)
        if refusedSchemes.contains(written) && url.contains(":") {
            return written == "http" ? ProblemText("action_http") : ProblemText("action_scheme_refused", ["scheme": .text(written)])
        }
        guard let separator = url.range(of: "://"), let components = URLComponents(string: url),
              let scheme = components.scheme?.lowercased(), scheme.count == url.distance(from: url.startIndex, to: separator.lowerBound),
              scheme.wholeMatch(of: /[a-z][a-z0-9+.-]*/) != nil else {
            return ProblemText("action_url_invalid")
        }
        if scheme == "https" && (components.host ?? "").isEmpty { return ProblemText("action_no_host") }
        return nil
    }
}
