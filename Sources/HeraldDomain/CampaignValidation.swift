import Foundation

/// One thing wrong with a campaign: where (its JSON path, which is also the form field's name) and why.
public struct FieldProblem: Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let message: String

    public init(_ path: String, _ message: String) {
        self.path = path
        self.message = message
    }

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
}

extension Campaign {
    /// Every problem with this campaign for `mode`, in form order. Empty means it can be saved (or published).
    public func problems(for mode: ValidationMode) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        func add(_ path: String, _ message: String) { problems.append(FieldProblem(path, message)) }

        let trimmedName = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmedName.isEmpty { add("name", "Give the campaign a name, so your team can find it.") }
        if name.count > CampaignLimits.nameLength { add("name", "Use at most \(CampaignLimits.nameLength) characters for the name.") }
        if (description ?? "").count > CampaignLimits.descriptionLength {
            add("description", "Use at most \(CampaignLimits.descriptionLength) characters for the description.")
        }
        if !(1...10).contains(priority) { add("priority", "Choose a priority from 1 (highest) to 10 (lowest).") }

        // What is judged is what is stored: fields the layout does not use are dropped when saving (`content`).
        problems += message.keepingLayoutFields.problems(for: mode)
        problems += dataProblems()
        problems += triggerProblems(for: mode)
        problems += scheduleProblems()
        problems += frequencyProblems()
        problems += targeting.problems()
        problems += controlCharacterProblems()
        return problems
    }

    /// Every text of the campaign with its path, and whether it may hold line breaks.
    var texts: [(path: String, text: String, multiline: Bool)] {
        var texts: [(String, String, Bool)] = [("name", name, false), ("description", description ?? "", true)]
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
            return refused.map { FieldProblem(path, "Remove the control character U+\(String(format: "%04X", $0.value))\(multiline ? "" : " (this field is one line)").") }
        }
    }

    private func dataProblems() -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if data.pairs.count > CampaignLimits.dataPairs {
            problems.append(FieldProblem("data", "Use at most \(CampaignLimits.dataPairs) custom data pairs; this campaign has \(data.pairs.count)."))
        }
        var seen: Set<String> = []
        for (index, pair) in data.pairs.enumerated() {
            if pair.key.isEmpty {
                problems.append(FieldProblem("data.\(index).key", "Give this value a key, or remove the row."))
            } else if seen.contains(pair.key) {
                problems.append(FieldProblem("data.\(index).key", "The key “\(pair.key)” is used twice; keys must be unique."))
            }
            seen.insert(pair.key)
            if pair.key.count > CampaignLimits.dataKeyLength {
                problems.append(FieldProblem("data.\(index).key", "Use at most \(CampaignLimits.dataKeyLength) characters for a key."))
            }
            if pair.value.count > CampaignLimits.dataValueLength {
                problems.append(FieldProblem("data.\(index).value", "Use at most \(CampaignLimits.dataValueLength) characters for a value."))
            }
        }
        return problems
    }

    private func triggerProblems(for mode: ValidationMode) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if mode == .publish && triggers.isEmpty {
            problems.append(FieldProblem("triggers", "Add at least one trigger: the event that shows the message."))
        }
        if triggers.count > CampaignLimits.triggers {
            problems.append(FieldProblem("triggers", "Use at most \(CampaignLimits.triggers) triggers."))
        }
        for (index, trigger) in triggers.enumerated() {
            if let problem = EventID.problem(trigger.event) {
                problems.append(FieldProblem("triggers.\(index).event", problem))
            }
            if trigger.filters.count > CampaignLimits.filtersPerTrigger {
                problems.append(FieldProblem("triggers.\(index).filters", "Use at most \(CampaignLimits.filtersPerTrigger) filters per trigger."))
            }
            if Trigger.builtInEvents.contains(trigger.event) && !trigger.filters.isEmpty {
                problems.append(FieldProblem("triggers.\(index).filters", "Built-in events carry no properties; remove the filters or use a purchase or custom event."))
            }
            for (filterIndex, filter) in trigger.filters.enumerated() {
                problems += filter.problems(at: "triggers.\(index).filters.\(filterIndex)")
            }
        }
        return problems
    }

    private func scheduleProblems() -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if schedule.timeZone.utf8.count > 64 || TimeZone(identifier: schedule.timeZone) == nil {
            problems.append(FieldProblem("schedule.timeZone", "“\(schedule.timeZone.prefix(64))” is not a time zone; choose one such as Europe/Paris or UTC."))
        }
        for (path, date) in [("schedule.start", schedule.start), ("schedule.end", schedule.end)] {
            if let date, !UTCTime.supported.contains(date) {
                problems.append(FieldProblem(path, "Choose a date \(UTCTime.supportedText)."))
            }
        }
        if let start = schedule.start, let end = schedule.end, end <= start {
            problems.append(FieldProblem("schedule.end", "The end must be after the start."))
        }
        return problems
    }

    private func frequencyProblems() -> [FieldProblem] {
        guard frequency.type == .everyNDays else { return [] }
        guard let days = frequency.days, CampaignLimits.frequencyDays.contains(days) else {
            return [FieldProblem("frequency.days", "Enter how many days apart, from 1 to 365.")]
        }
        return []
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
        if translations.count > CampaignLimits.languageVersions {
            problems.append(FieldProblem("message.translations", "Use at most \(CampaignLimits.languageVersions) language versions besides the default."))
        }
        var seen: Set<String> = []
        for (tag, version) in translations.sorted(by: { $0.key < $1.key }) {
            let path = "message.translations.\(tag)"
            guard LanguageTag.isValid(tag) else {
                problems.append(FieldProblem(path, "“\(tag.prefix(40))” is not a language tag such as fa, de or pt-BR."))
                continue
            }
            if !seen.insert(tag.lowercased()).inserted {
                problems.append(FieldProblem(path, "There is already a version for \(tag); keep one."))
            }
            for problem in applying(version).defaultVersionProblems(for: mode) {
                guard let part = problem.path.dropPrefix("message."), version.sets(part, over: self) else { continue }
                problems.append(FieldProblem("\(path).\(part)", problem.message))
            }
        }
        return problems
    }

    private func defaultVersionProblems(for mode: ValidationMode) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        func add(_ path: String, _ message: String) { problems.append(FieldProblem("message.\(path)", message)) }

        for (path, text, limit) in [("title", title, CampaignLimits.titleLength), ("body", body, CampaignLimits.bodyLength)] {
            guard let text else { continue }
            if text.text.count > limit { add("\(path).text", "Use at most \(limit) characters.") }
            if let color = text.color, !color.isEmpty, let problem = ColorValue.problem(color) { add("\(path).color", problem) }
        }
        for (path, url) in [("imageUrl", imageUrl), ("landscapeImageUrl", landscapeImageUrl)] {
            if let url, !url.isEmpty, let problem = ImageURL.problem(url) { add(path, problem) }
        }
        for (path, url) in [("imageUrl", imageUrl), ("landscapeImageUrl", landscapeImageUrl), ("action.url", action?.url),
                            ("primaryAction.url", primaryAction?.url), ("secondaryAction.url", secondaryAction?.url)] {
            if let url, url.count > CampaignLimits.urlLength { add(path, "Use at most \(CampaignLimits.urlLength) characters for a link.") }
        }
        if let color = backgroundColor, !color.isEmpty, let problem = ColorValue.problem(color) { add("backgroundColor", problem) }
        for (path, button) in [("primaryAction", primaryAction), ("secondaryAction", secondaryAction)] {
            guard let button else { continue }
            if button.text.count > CampaignLimits.buttonTextLength {
                add("\(path).text", "Use at most \(CampaignLimits.buttonTextLength) characters for a button.")
            }
            if let color = button.textColor, !color.isEmpty, let problem = ColorValue.problem(color) { add("\(path).textColor", problem) }
            if let color = button.buttonColor, !color.isEmpty, let problem = ColorValue.problem(color) { add("\(path).buttonColor", problem) }
            if let url = button.url, !url.isEmpty, let problem = ActionURL.problem(url) { add("\(path).url", problem) }
        }
        if let action, !action.url.isEmpty, let problem = ActionURL.problem(action.url) { add("action.url", problem) }
        if let dismiss, !CampaignLimits.dismissSeconds.contains(dismiss.seconds) {
            add("dismiss.seconds", "Choose from \(CampaignLimits.dismissSeconds.lowerBound) to \(CampaignLimits.dismissSeconds.upperBound) seconds.")
        }

        guard mode == .publish else { return problems }
        // What delivery components need to draw the layout; they drop messages without it. Blank counts as missing.
        func blank(_ value: String?) -> Bool { (value ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        let fields = layout.fields
        let needsTitle = layout != .imageOnly && layout != .slideup
        if needsTitle && blank(title?.text) { add("title.text", "A \(layout.title.lowercased()) message needs a title.") }
        if layout == .slideup && blank(body?.text) { add("body.text", "A slide-up needs its text.") }
        if [.card, .imageOnly, .fullscreen].contains(layout) && blank(imageUrl) {
            add("imageUrl", layout == .card
                ? "A card needs a portrait image (an https URL); devices drop a card without one."
                : "A \(layout.title.lowercased()) message needs an image (an https URL); devices drop it without one.")
        }
        if layout == .card {
            if blank(backgroundColor) { add("backgroundColor", "A card needs a background color.") }
            if blank(primaryAction?.text) { add("primaryAction.text", "A card needs the text of its primary button.") }
            if blank(primaryAction?.url) { add("primaryAction.url", "A card's primary button needs an action (an https URL or app link).") }
        } else if fields.contains(.primaryAction), let button = primaryAction {
            // Elsewhere the primary button is optional, but a button and its action go together.
            if blank(button.text) && !blank(button.url) { add("primaryAction.text", "Give the button a text, or remove its action.") }
            if !blank(button.text) && blank(button.url) { add("primaryAction.url", "Give the button an action, or remove its text.") }
        }
        if let button = secondaryAction, blank(button.text), !blank(button.url) {
            add("secondaryAction.text", "Give the second button a text, or remove its action.")
        }
        return problems
    }
}

extension PropertyFilter {
    func texts(at path: String) -> [(path: String, text: String, multiline: Bool)] {
        var texts = [("\(path).property", property, false)]
        if case .string(let text) = value { texts.append(("\(path).value", text, false)) }
        return texts
    }

    func problems(at path: String) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if case .string(let text) = value, text.count > CampaignLimits.filterTextLength {
            problems.append(FieldProblem("\(path).value", "Use at most \(CampaignLimits.filterTextLength) characters for a value."))
        }
        if property.isEmpty {
            problems.append(FieldProblem("\(path).property", "Name the property to compare, or remove the filter."))
        } else if property.count > CampaignLimits.eventIDLength {
            problems.append(FieldProblem("\(path).property", "Use at most \(CampaignLimits.eventIDLength) characters for a property."))
        }
        switch (op, value) {
        case (.exists, _):
            break
        case (_, nil):
            problems.append(FieldProblem("\(path).value", "Enter the value to compare with."))
        case (.gt, .some(let value)), (.gte, .some(let value)), (.lt, .some(let value)), (.lte, .some(let value)):
            if case .number = value {} else {
                problems.append(FieldProblem("\(path).value", "“\(op.title)” compares numbers: set the value's type to number."))
            }
        case (.contains, .some(let value)):
            if case .string = value {} else {
                problems.append(FieldProblem("\(path).value", "“contains” compares text: set the value's type to string."))
            }
        case (.eq, _), (.ne, _):
            break
        }
        return problems
    }
}

extension Targeting {
    func problems() -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if let percentage, !(1...100).contains(percentage) {
            problems.append(FieldProblem("targeting.percentage", "Choose a percentage from 1 to 100."))
        }
        if let rule = appVersion {
            if rule.value.isEmpty {
                problems.append(FieldProblem("targeting.appVersion.value", "Enter the app version to compare with, or clear the rule."))
            } else if rule.value.count > CampaignLimits.appVersionRuleLength {
                problems.append(FieldProblem("targeting.appVersion.value", "Use at most \(CampaignLimits.appVersionRuleLength) characters for an app version rule."))
            } else if rule.op == .regex, (try? NSRegularExpression(pattern: rule.value)) == nil {
                problems.append(FieldProblem("targeting.appVersion.value", "This is not a valid regular expression."))
            }
        }
        for (index, language) in (languages ?? []).enumerated() where language.wholeMatch(of: /[a-z]{2,3}(-[A-Za-z0-9]{2,8})?/) == nil {
            problems.append(FieldProblem("targeting.languages.\(index)", "“\(language)” is not a language code such as en, fa or pt-BR."))
        }
        for (index, country) in (countries ?? []).enumerated() where country.wholeMatch(of: /[A-Z]{2}/) == nil {
            problems.append(FieldProblem("targeting.countries.\(index)", "“\(country)” is not a two-letter country code such as US or IR."))
        }
        for (path, list, limit) in [("languages", languages, CampaignLimits.languages), ("countries", countries, CampaignLimits.countries)]
        where (list ?? []).count > limit {
            problems.append(FieldProblem("targeting.\(path)", "Use at most \(limit) \(path)."))
        }
        if (userProperties ?? []).count > CampaignLimits.userPropertyFilters {
            problems.append(FieldProblem("targeting.userProperties", "Use at most \(CampaignLimits.userPropertyFilters) user property conditions."))
        }
        for (index, filter) in (userProperties ?? []).enumerated() {
            problems += filter.problems(at: "targeting.userProperties.\(index)")
        }
        if let range = daysSinceFirstOpen {
            let allowed = CampaignLimits.daysSinceFirstOpen
            for (path, days) in [("min", range.min), ("max", range.max)] {
                guard let days else { continue }
                if days < 0 {
                    problems.append(FieldProblem("targeting.daysSinceFirstOpen.\(path)", "Days since first open cannot be negative."))
                } else if days > allowed.upperBound {
                    problems.append(FieldProblem("targeting.daysSinceFirstOpen.\(path)", "Use at most \(allowed.upperBound) days."))
                }
            }
            if let min = range.min, let max = range.max, min > max {
                problems.append(FieldProblem("targeting.daysSinceFirstOpen.max", "The maximum must be at least the minimum."))
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
}

/// Analytics event IDs: a letter first, then letters, digits and underscores, at most 40, no reserved prefix.
public enum EventID {
    public static func problem(_ event: String) -> String? {
        if event.isEmpty { return "Choose a built-in event or type a custom event ID." }
        if event.count > CampaignLimits.eventIDLength { return "Use at most \(CampaignLimits.eventIDLength) characters for an event ID." }
        if event.wholeMatch(of: /[A-Za-z][A-Za-z0-9_]*/) == nil {
            return "Event IDs start with a letter and use only letters, digits and underscores."
        }
        if let prefix = CampaignLimits.reservedEventPrefixes.first(where: { event.lowercased().hasPrefix($0) }) {
            return "Event IDs starting with “\(prefix)” are reserved; choose another name."
        }
        return nil
    }
}

/// `#RRGGBB` or `#AARRGGBB`.
public enum ColorValue {
    public static func problem(_ color: String) -> String? {
        color.wholeMatch(of: /#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})/) == nil
            ? "Use a color like #1A73E8 (or #CC1A73E8 with transparency)." : nil
    }
}

/// Images are fetched by devices over https only.
public enum ImageURL {
    public static func problem(_ url: String) -> String? {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
              let host = components.host, !host.isEmpty else {
            return "Use an https:// image URL; devices drop images from other addresses."
        }
        return nil
    }
}

/// Actions open an https URL or an app deep link (`myapp://path`), never script or data.
public enum ActionURL {
    static let refusedSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "http", "about", "blob"]

    public static func problem(_ url: String) -> String? {
        let written = url.prefix { $0 != ":" }.lowercased().trimmingCharacters(in: .whitespaces)
        if refusedSchemes.contains(written) && url.contains(":") {
            return written == "http" ? "Use https:// rather than http://." : "“\(written):” links are not allowed; use an https:// or app link."
        }
        guard let separator = url.range(of: "://"), let components = URLComponents(string: url),
              let scheme = components.scheme?.lowercased(), scheme.count == url.distance(from: url.startIndex, to: separator.lowerBound),
              scheme.wholeMatch(of: /[a-z][a-z0-9+.-]*/) != nil else {
            return "Use an https:// link or an app link such as myapp://offers."
        }
        if scheme == "https" && (components.host ?? "").isEmpty { return "This https link has no host." }
        return nil
    }
}
