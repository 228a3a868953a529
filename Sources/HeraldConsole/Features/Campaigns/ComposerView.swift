import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// One input of the composer. `layouts` lists the message layouts that use it (empty: all),
/// so the script can show only the chosen layout's fields.
struct ComposerField: Sendable {
    let id: String
    let name: String
    let label: String
    let type: String
    let value: String
    let hint: String?
    let error: String?
    let placeholder: String?
    let datalist: String?
    let inputMode: String?
    let isColor: Bool
    /// The SVG fill for the swatch (`#RRGGBB`) and its opacity, for `#AARRGGBB` colors.
    let swatchFill: String?
    let swatchOpacity: String
    /// nil for fields every layout has. (Not named `layouts`: Mustache would then find the page's
    /// `layouts` list when this is nil.)
    let usedByLayouts: String?
    let hidden: Bool
    /// The hint and the error, for `aria-describedby`, so screen readers read both.
    let describedBy: String?
    /// The id of the radio button that typing into this field chooses (the composer's script does it).
    let chooses: String?
}

struct SelectOption: Sendable {
    let value: String
    let label: String
    let selected: Bool
}

struct ComposerSelect: Sendable {
    let id: String
    let name: String
    let label: String
    let options: [SelectOption]
    let error: String?
    let usedByLayouts: String?
    let hidden: Bool
}

struct LayoutChoice: Sendable {
    let id: String
    let value: String
    let title: String
    let summary: String
    let checked: Bool
}

struct FilterRow: Sendable {
    let prefix: String
    let index: Int
    let property: ComposerField
    let op: ComposerSelect
    let type: ComposerSelect
    let value: ComposerField
}

struct TriggerRow: Sendable {
    let index: Int
    /// Counted from 1, for people.
    let number: Int
    let prefix: String
    let event: ComposerField
    let filters: [FilterRow]
    let filtersPrefix: String
    let canMoveUp: Bool
}

struct DataRow: Sendable {
    let index: Int
    let prefix: String
    let key: ComposerField
    let value: ComposerField
    let canMoveUp: Bool
}

struct ChangeRow: Sendable {
    let path: String
    let before: String
    let after: String
}

struct ConflictView: Sendable {
    let author: String
    let time: String
    let changes: [ChangeRow]
}

/// Everything the composer template shows.
struct ComposerView: Sendable {
    let heading: String
    let action: String
    let isNew: Bool
    let revision: String
    let isLive: Bool
    let errors: [ErrorSummaryItem]
    let conflict: ConflictView?
    let name: ComposerField
    let description: ComposerField
    let app: ComposerSelect?
    let appName: String?
    let priority: ComposerSelect
    let layouts: [LayoutChoice]
    let layoutError: String?
    let messageFields: [ComposerField]
    let messageSelects: [ComposerSelect]
    let dataRows: [DataRow]
    let dataError: String?
    let triggers: [TriggerRow]
    let triggersError: String?
    let builtInEvents: [String]
    let startMode: [ChoiceView]
    let start: ComposerField
    let endMode: [ChoiceView]
    let end: ComposerField
    let timeZone: ComposerField
    let frequencyTypes: [ChoiceView]
    let frequencyDays: ComposerField
    let platforms: [ChoiceView]
    let appVersionOp: ComposerSelect
    let appVersionValue: ComposerField
    let languages: ComposerField
    let countries: ComposerField
    let userProperties: [FilterRow]
    let minDays: ComposerField
    let maxDays: ComposerField
    let percentage: ComposerField
    let testOnDevice: Bool
    let timeZones: [String]

    /// Builds the composer from form fields (and the problems to show beside them).
    init(
        form: FormData, problems: [FieldProblem], heading: String, action: String, isNew: Bool, revision: Int?,
        isLive: Bool, apps: [App], conflict: ConflictView?
    ) {
        let layout = Message.Layout(rawValue: form["message.layout"] ?? "") ?? .card
        func error(_ path: String) -> String? { problems.first { $0.path == path }?.message }
        func errorUnder(_ path: String) -> String? { problems.first { $0.path == path || $0.path.hasPrefix(path + ".") }?.message }
        func field(
            _ path: String, _ label: String, type: String = "text", hint: String? = nil, placeholder: String? = nil,
            datalist: String? = nil, inputMode: String? = nil, color: Bool = false, uses: Message.Field? = nil, value: String? = nil,
            errorPath: String? = nil, chooses choice: CampaignForm.Choice? = nil
        ) -> ComposerField {
            let current = value ?? form[path] ?? ""
            let swatch = color ? Swatch(current.trimmingCharacters(in: .whitespaces)) : nil
            let layouts = uses.map { field in Message.Layout.allCases.filter { $0.fields.contains(field) }.map(\.rawValue) } ?? []
            let id = FieldView.id(for: path)
            let problem = errorPath.map(errorUnder) ?? error(path)
            let described = [hint.map { _ in "\(id)-hint" }, problem.map { _ in "\(id)-error" }].compactMap { $0 }
            return ComposerField(
                id: id, name: path, label: label, type: type, value: current, hint: hint,
                error: problem, placeholder: placeholder, datalist: datalist, inputMode: inputMode,
                isColor: color, swatchFill: swatch?.fill, swatchOpacity: swatch?.opacity ?? "1",
                usedByLayouts: layouts.isEmpty ? nil : layouts.joined(separator: " "), hidden: !layouts.isEmpty && !layouts.contains(layout.rawValue),
                describedBy: described.isEmpty ? nil : described.joined(separator: " "),
                chooses: choice.map { ChoiceView(name: $0.name, value: $0.usingField, label: "", checked: false).id })
        }
        func choices(_ choice: CampaignForm.Choice) -> [ChoiceView] {
            let chosen = form[choice.name] ?? choice.options[0].value
            return choice.options.map { ChoiceView(name: choice.name, value: $0.value, label: $0.label, checked: $0.value == chosen) }
        }
        func select(_ path: String, _ label: String, _ options: [(String, String)], default defaultValue: String, uses: Message.Field? = nil) -> ComposerSelect {
            let current = form[path] ?? defaultValue
            let layouts = uses.map { field in Message.Layout.allCases.filter { $0.fields.contains(field) }.map(\.rawValue) } ?? []
            return ComposerSelect(
                id: FieldView.id(for: path), name: path, label: label,
                options: options.map { SelectOption(value: $0.0, label: $0.1, selected: $0.0 == current) }, error: error(path),
                usedByLayouts: layouts.isEmpty ? nil : layouts.joined(separator: " "), hidden: !layouts.isEmpty && !layouts.contains(layout.rawValue))
        }
        func filterRows(_ prefix: String) -> [FilterRow] {
            FormRows.rows(form, prefix).enumerated().map { index, row in
                let path = "\(prefix).\(index)"
                return FilterRow(
                    prefix: prefix, index: index,
                    property: field("\(path).property", "Property", placeholder: "product_id", value: row["property"] ?? ""),
                    op: ComposerSelect(
                        id: FieldView.id(for: "\(path).op"), name: "\(path).op", label: "Comparison",
                        options: FilterOperator.allCases.map { SelectOption(value: $0.rawValue, label: $0.title, selected: $0.rawValue == (row["op"] ?? "eq")) },
                        error: error("\(path).op"), usedByLayouts: nil, hidden: false),
                    type: ComposerSelect(
                        id: FieldView.id(for: "\(path).type"), name: "\(path).type", label: "Type",
                        options: [("string", "Text"), ("number", "Number"), ("bool", "True/false")].map {
                            SelectOption(value: $0.0, label: $0.1, selected: $0.0 == (row["type"] ?? "string"))
                        },
                        error: nil, usedByLayouts: nil, hidden: false),
                    value: field("\(path).value", "Value", value: row["value"] ?? ""))
            }
        }

        self.heading = heading
        self.action = action
        self.isNew = isNew
        self.revision = revision.map(String.init) ?? ""
        self.isLive = isLive
        self.errors = problems.map { ErrorSummaryItem(fieldID: FieldView.id(for: Self.fieldName(for: $0.path)), message: $0.message) }
        self.conflict = conflict
        name = field("name", "Campaign name", hint: "Only your team sees it.")
        description = field("description", "Description", hint: "Optional: what the campaign is for.")
        let chosenApp = form["app"] ?? apps.first.map { String($0.id) } ?? ""
        app = isNew ? ComposerSelect(
            id: FieldView.id(for: "app"), name: "app", label: "App",
            options: apps.map { SelectOption(value: String($0.id), label: $0.name, selected: String($0.id) == chosenApp) },
            error: error("app"), usedByLayouts: nil, hidden: false) : nil
        appName = isNew ? nil : apps.first { String($0.id) == chosenApp }?.name
        let priorities: [(String, String)] = (1...10).map { level in
            let label: String = switch level {
            case 1: "1 (highest)"
            case 10: "10 (lowest)"
            default: String(level)
            }
            return (String(level), label)
        }
        priority = select("priority", "Priority", priorities, default: "5")

        layouts = Message.Layout.allCases.map {
            LayoutChoice(id: FieldView.id(for: "message.layout-\($0.rawValue)"), value: $0.rawValue, title: $0.title,
                         summary: $0.summary, checked: $0 == layout)
        }
        layoutError = error("message.layout")
        let imageHint = "An https:// URL. Devices drop messages whose image is missing or not https."
        let linkHint = "An https:// link or an app link such as myapp://offers."
        messageFields = [
            field("message.title.text", "Title", uses: .title),
            field("message.title.color", "Title color", placeholder: "#000000", color: true, uses: .title),
            field("message.body.text", "Body text", uses: .body),
            field("message.body.color", "Body color", placeholder: "#000000", color: true, uses: .body),
            field("message.imageUrl", layout == .card ? "Portrait image URL" : "Image URL", type: "url", hint: imageHint, placeholder: "https://", uses: .imageUrl),
            field("message.landscapeImageUrl", "Landscape image URL", type: "url", hint: "Optional: shown in landscape; the portrait image is used otherwise.", placeholder: "https://", uses: .landscapeImageUrl),
            field("message.backgroundColor", "Background color", placeholder: "#FFFFFF", color: true, uses: .backgroundColor),
            field("message.primaryAction.text", "Primary button text", uses: .primaryAction),
            field("message.primaryAction.url", "Primary button action", hint: linkHint, placeholder: "https://", uses: .primaryAction),
            field("message.primaryAction.textColor", "Primary button text color", placeholder: "#FFFFFF", color: true, uses: .primaryAction),
            field("message.primaryAction.buttonColor", "Primary button color", placeholder: "#1A73E8", color: true, uses: .primaryAction),
            field("message.secondaryAction.text", "Secondary button text", uses: .secondaryAction),
            field("message.secondaryAction.url", "Secondary button action", hint: "Optional: without one, the button dismisses the message.", placeholder: "https://", uses: .secondaryAction),
            field("message.secondaryAction.textColor", "Secondary button text color", placeholder: "#1A73E8", color: true, uses: .secondaryAction),
            field("message.secondaryAction.buttonColor", "Secondary button color", placeholder: "#FFFFFF", color: true, uses: .secondaryAction),
            field("message.action.url", "Tap action", hint: linkHint, placeholder: "https://", uses: .action),
            field("message.dismiss.seconds", "Hide after (seconds)", type: "number", hint: "Empty: the device's default (12 s for banners).", inputMode: "numeric", uses: .dismiss),
        ]
        messageSelects = [
            select("message.slideFrom", "Slides in from", [("bottom", "Bottom"), ("top", "Top")], default: "bottom", uses: .slideFrom),
            select("message.orientation", "Orientation", [("any", "Any"), ("portrait", "Portrait only"), ("landscape", "Landscape only")], default: "any", uses: .orientation),
        ]

        let data = FormRows.rows(form, "data")
        // One empty row to type into, unless the last row is empty already (just added, say).
        let lastIsBlank = data.last.map { ($0["key"] ?? "").isEmpty && ($0["value"] ?? "").isEmpty } ?? false
        dataRows = (lastIsBlank ? data : data + [FormData()]).enumerated().map { index, row in
            DataRow(index: index, prefix: "data.\(index)",
                    key: field("data.\(index).key", "Key", placeholder: "promo_code", value: row["key"] ?? ""),
                    value: field("data.\(index).value", "Value", value: row["value"] ?? ""),
                    canMoveUp: index > 0 && index < data.count)
        }
        dataError = error("data")
        let triggerForms = FormRows.rows(form, "triggers")
        triggers = (triggerForms.isEmpty ? [FormData()] : triggerForms).enumerated().map { index, row in
            let path = "triggers.\(index)"
            return TriggerRow(
                index: index, number: index + 1, prefix: path,
                event: field("\(path).event", "Event", hint: "A built-in event, purchase, or your app's custom event ID.",
                             placeholder: "app_launch", datalist: "herald-events", value: row["event"] ?? ""),
                filters: filterRows("\(path).filters"), filtersPrefix: "\(path).filters", canMoveUp: index > 0)
        }
        triggersError = errorUnder("triggers").flatMap { _ in error("triggers") }
        builtInEvents = Trigger.builtInEvents + [Trigger.purchaseEvent]

        let timeZoneName = form["schedule.timeZone"] ?? "UTC"
        startMode = choices(CampaignForm.startChoice)
        start = field("schedule.start", "Start", type: "datetime-local",
                      hint: "In the time zone below. Used with “\(CampaignForm.startChoice.usingLabel)”.", chooses: CampaignForm.startChoice)
        endMode = choices(CampaignForm.endChoice)
        end = field("schedule.end", "End", type: "datetime-local",
                    hint: "In the time zone below. Used with “\(CampaignForm.endChoice.usingLabel)”.", chooses: CampaignForm.endChoice)
        timeZone = field("schedule.timeZone", "Time zone", hint: "Such as Europe/Paris, America/New_York or Asia/Tehran.", datalist: "herald-time-zones", value: timeZoneName)
        timeZones = TimeZone.knownTimeZoneIdentifiers.sorted()

        frequencyTypes = choices(CampaignForm.frequencyChoice)
        frequencyDays = field("frequency.days", "Days between showings", type: "number",
                              hint: "Used with “\(CampaignForm.frequencyChoice.usingLabel)”.", inputMode: "numeric",
                              chooses: CampaignForm.frequencyChoice)

        let chosenPlatforms = Set(form.values("targeting.platforms"))
        platforms = Platform.allCases.map {
            ChoiceView(name: "targeting.platforms", value: $0.rawValue, label: $0.title, checked: chosenPlatforms.contains($0.rawValue))
        }
        appVersionOp = select("targeting.appVersion.op", "App version", Targeting.VersionRule.Operator.allCases.map {
            ($0.rawValue, $0.rawValue.replacingOccurrences(of: "_", with: " "))
        }, default: "equals")
        appVersionValue = field("targeting.appVersion.value", "Version", hint: "Empty: any version.", placeholder: "2.4.0")
        languages = field("targeting.languages", "Languages", hint: "Codes separated by commas, such as en, fa, pt-BR. Empty: all.", errorPath: "targeting.languages")
        countries = field("targeting.countries", "Countries", hint: "Two-letter codes separated by commas, such as US, IR. Empty: all.", errorPath: "targeting.countries")
        userProperties = filterRows("targeting.userProperties")
        minDays = field("targeting.daysSinceFirstOpen.min", "At least this many days since first open", type: "number", inputMode: "numeric")
        maxDays = field("targeting.daysSinceFirstOpen.max", "At most this many days since first open", type: "number", inputMode: "numeric")
        percentage = field("targeting.percentage", "Percentage of installations", type: "number", hint: "1–100, the same installations each time. Empty: all.", inputMode: "numeric")
        testOnDevice = form["testOnDevice"] == "true"
    }

    /// The form field a problem belongs to (list items such as `targeting.languages.2` share one input).
    static func fieldName(for path: String) -> String {
        for shared in ["targeting.languages", "targeting.countries"] where path.hasPrefix(shared) { return shared }
        return path
    }
}

/// A color swatch drawn as SVG (`fill`), which the Content-Security-Policy allows without inline styles.
struct Swatch {
    let fill: String
    let opacity: String

    init?(_ color: String) {
        guard ColorValue.problem(color) == nil else { return nil }
        let hex = color.dropFirst()
        if hex.count == 8 {
            let alpha = Double(Int(hex.prefix(2), radix: 16) ?? 255) / 255
            fill = "#" + hex.dropFirst(2)
            opacity = String(format: "%.2f", alpha)
        } else {
            fill = color
            opacity = "1"
        }
    }
}
