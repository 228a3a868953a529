import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// A checkbox that is a field of its own (its id is the field's, so the error summary links to it),
/// with its hint and its problem beside it.
struct SwitchInput: Sendable {
    let id: String
    let name: String
    let label: String
    let hint: String?
    let checked: Bool
    let error: String?

    init(_ field: ComposerField, _ inputs: ComposerInputs) {
        id = FieldView.id(for: field.path)
        name = field.path
        label = field.label(inputs.localizer)
        hint = field.hintKey.map { inputs.localizer($0) }
        checked = inputs.form[field.path] == "true"
        error = inputs.error(field.path)
    }
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
    let property: FieldView
    let op: ComposerSelect
    let type: ComposerSelect
    let value: FieldView
}

struct TriggerRow: Sendable {
    let index: Int
    /// Counted from 1, for people.
    let number: String
    let legend: String
    let prefix: String
    let event: FieldView
    let filters: [FilterRow]
    let filtersPrefix: String
    let canMoveUp: Bool
}

struct DataRow: Sendable {
    let index: Int
    let prefix: String
    let key: FieldView
    let value: FieldView
    let canMoveUp: Bool
}

struct ChangeRow: Sendable {
    let path: String
    /// The field's label where the composer has one ("Title", "Persian (fa) — Title"); else the path is shown.
    let fieldLabel: String?
    let before: String
    let after: String
}

struct ConflictView: Sendable {
    let author: String
    let time: String
    let changes: [ChangeRow]
}

/// The `<template>` elements the script clones for new rows: each a blank row at `path`, which the
/// script renumbers (`data.0` → `data.3`), so no markup or field path is written in the script.
struct RowTemplates: Sendable {
    let data: DataRow
    let trigger: TriggerRow
    let filter: FilterRow
}

/// Everything the composer template shows.
struct ComposerView: Sendable {
    /// The form's name for the saved campaign's id, which measures a notification as saving will.
    static let campaignIDName = "composer.campaign"

    let heading: String
    let action: String
    let isNew: Bool
    let campaignID: String?
    /// `in_app` or `push`: which content the composer writes (chosen before it opens, never switched in it).
    let channel: String
    let isPush: Bool
    let pushFields: [FieldView]
    let pushSilent: SwitchInput
    let pushInDeviceTimeZone: SwitchInput
    /// The default version's payload count (the language versions' are in their panels).
    let defaultBytes: PushBytesView?
    let pushProblem: String?
    /// Fields a notification's composer does not show, kept as the form had them (a push is sent once
    /// to each device: the in-app message's priority and frequency do not apply, and are not dropped).
    let keptFields: [HiddenField]

    struct HiddenField: Sendable {
        let name: String
        let value: String
    }
    let revision: String
    let isLive: Bool
    let errors: [ErrorSummaryItem]
    let conflict: ConflictView?
    /// What publishing this push campaign would leave unreached, after a first Publish: its button then
    /// publishes anyway.
    let publishCheck: PublishCheck?

    struct PublishCheck: Sendable {
        let warnings: [String]
    }
    let name: FieldView
    let description: FieldView
    let app: ComposerSelect?
    let appName: String?
    let priority: ComposerSelect
    let layouts: [LayoutChoice]
    let layoutError: String?
    let messageFields: [FieldView]
    let messageSelects: [ComposerSelect]
    let versions: ComposerVersions
    let dataRows: [DataRow]
    let dataError: String?
    let triggers: [TriggerRow]
    let triggersError: String?
    let conversionEvent: FieldView
    let conversionFilters: [FilterRow]
    let conversionWindow: FieldView
    let rowTemplates: RowTemplates
    let builtInEvents: [String]
    let startMode: [ChoiceView]
    let start: FieldView
    let endMode: [ChoiceView]
    let end: FieldView
    let timeZone: FieldView
    let frequencyTypes: [ChoiceView]
    let frequencyDays: FieldView
    let platforms: [ChoiceView]
    let appVersionOp: ComposerSelect
    let appVersionValue: FieldView
    let languages: FieldView
    let countries: FieldView
    let userProperties: [FilterRow]
    let minDays: FieldView
    let maxDays: FieldView
    let percentage: FieldView
    let testOnDevice: Bool
    let testOnDeviceLabel: String
    let testOnDeviceHint: String
    let timeZones: [String]
    /// The script's words (`<script type="application/json">`: data, not code, which the policy allows).
    let scriptStrings: String
    /// How many registered installations the targeting reaches (`AudienceView`); empty before an app is chosen.
    let audience: String

    /// Builds the composer from form fields (and the problems to show beside them).
    init(
        form: FormData, problems: [FieldProblem], heading: String, action: String, campaignID: Int64?, revision: Int?,
        isLive: Bool, apps: [App], conflict: ConflictView?, publishWarnings: [String]? = nil, audience: String? = nil, localizer: Localizer
    ) {
        self.audience = audience ?? ""
        let channel = Channel(form: form)
        var bytes: [PushBytesView] = []
        if channel == .push {
            var (campaign, _) = CampaignForm.decode(form, app: 0)
            campaign.id = campaignID
            bytes = PushBytesView.all(campaign, localizer)
        }
        let inputs = ComposerInputs(form: form, problems: problems, localizer: localizer, pushBytes: bytes)
        self.channel = channel.rawValue
        isPush = channel == .push
        self.campaignID = campaignID.map(String.init)
        pushFields = ComposerFields.push.map { inputs.field($0) }
        pushSilent = SwitchInput(ComposerFields.pushSilent, inputs)
        pushInDeviceTimeZone = SwitchInput(ComposerFields.pushInDeviceTimeZone, inputs)
        defaultBytes = inputs.pushBytes(tag: "")
        pushProblem = inputs.error("push")
        let kept = [ComposerFields.priority, ComposerFields.frequency, ComposerFields.frequencyDays].map(\.path)
        keptFields = channel == .push ? form.pairs.filter { kept.contains($0.name) }.map { HiddenField(name: $0.name, value: $0.value) } : []
        let layout = inputs.layout
        func choices(_ choice: CampaignForm.Choice) -> [ChoiceView] {
            let chosen = form[choice.name] ?? choice.values[0]
            return choice.values.map { ChoiceView(name: choice.name, value: $0, label: choice.label(of: $0, localizer), checked: $0 == chosen) }
        }

        self.heading = heading
        self.action = action
        isNew = campaignID == nil
        self.revision = revision.map(String.init) ?? ""
        self.isLive = isLive
        self.errors = problems.map { ComposerProblems.summaryItem($0, localizer) }
        self.conflict = conflict
        publishCheck = publishWarnings.map(PublishCheck.init)
        name = inputs.field(ComposerFields.name)
        description = inputs.field(ComposerFields.description)
        let chosenApp = form["app"] ?? apps.first.map { String($0.id) } ?? ""
        app = campaignID == nil ? inputs.select(ComposerFields.app, apps.map { (String($0.id), $0.name) }, default: chosenApp) : nil
        appName = campaignID == nil ? nil : apps.first { String($0.id) == chosenApp }?.name
        let priorities: [(String, String)] = (1...10).map { level in
            let number = localizer.number(level)
            let label: String = switch level {
            case 1: localizer("fields.priority.highest", ["level": number])
            case 10: localizer("fields.priority.lowest", ["level": number])
            default: number
            }
            return (String(level), label)
        }
        priority = inputs.select(ComposerFields.priority, priorities, default: "5")

        layouts = Message.Layout.allCases.map {
            LayoutChoice(id: FieldView.id(for: "message.layout-\($0.rawValue)"), value: $0.rawValue,
                         title: localizer(ComposerFields.layout.optionKey($0.rawValue)),
                         summary: localizer("fields.layout.summaries.\($0.rawValue)"), checked: $0 == layout)
        }
        layoutError = inputs.error(ComposerFields.layout.path)
        messageFields = ComposerFields.message.filter { $0.kind != .select }.map { inputs.field($0) }
        messageSelects = ComposerFields.message.filter { $0.kind == .select }.map { field in
            inputs.select(field, field.options.map { ($0, localizer(field.optionKey($0))) }, default: field.options.first ?? "")
        }
        versions = ComposerVersions(form: form, inputs: inputs)

        let data = FormRows.rows(form, "data")
        // One empty row to type into, unless the last row is empty already (just added, say).
        let lastIsBlank = data.last.map { ($0["key"] ?? "").isEmpty && ($0["value"] ?? "").isEmpty } ?? false
        dataRows = (lastIsBlank ? data : data + [FormData()]).enumerated().map { index, row in
            inputs.dataRow(index: index, row: row, canMoveUp: index > 0 && index < data.count)
        }
        dataError = inputs.error("data")
        let triggerForms = FormRows.rows(form, "triggers")
        triggers = (triggerForms.isEmpty ? [FormData()] : triggerForms).enumerated().map { index, row in
            inputs.triggerRow(index: index, row: row)
        }
        triggersError = inputs.errorUnder("triggers").flatMap { _ in inputs.error("triggers") }
        conversionEvent = inputs.field(ComposerFields.conversionEvent, datalist: "herald-events")
        conversionFilters = FormRows.rows(form, "conversion.filters").enumerated().map { index, row in
            inputs.filterRow(prefix: "conversion.filters", index: index, row: row)
        }
        conversionWindow = inputs.field(
            ComposerFields.conversionWindow, value: form[ComposerFields.conversionWindow.path] ?? String(ConversionGoal.defaultWindowHours))
        rowTemplates = RowTemplates(
            data: inputs.dataRow(index: 0, row: FormData(), canMoveUp: false), trigger: inputs.triggerRow(index: 0, row: FormData()),
            filter: inputs.filterRow(prefix: "filters", index: 0, row: FormData()))
        builtInEvents = Trigger.builtInEvents + [Trigger.purchaseEvent]

        let timeZoneName = form[ComposerFields.timeZone.path] ?? "UTC"
        startMode = choices(CampaignForm.startChoice)
        start = inputs.field(ComposerFields.start, chooses: CampaignForm.startChoice)
        endMode = choices(CampaignForm.endChoice)
        end = inputs.field(ComposerFields.end, chooses: CampaignForm.endChoice)
        timeZone = inputs.field(ComposerFields.timeZone, datalist: "herald-time-zones", value: timeZoneName)
        timeZones = TimeZone.knownTimeZoneIdentifiers.sorted()

        frequencyTypes = choices(CampaignForm.frequencyChoice)
        frequencyDays = inputs.field(ComposerFields.frequencyDays, chooses: CampaignForm.frequencyChoice)

        let chosenPlatforms = Set(form.values(ComposerFields.platforms.path))
        platforms = Platform.allCases.map {
            ChoiceView(name: ComposerFields.platforms.path, value: $0.rawValue, label: localizer.title($0), checked: chosenPlatforms.contains($0.rawValue))
        }
        let versionOperators = ComposerFields.appVersionOperator
        appVersionOp = inputs.select(versionOperators, versionOperators.options.map { ($0, localizer(versionOperators.optionKey($0))) }, default: "equals")
        appVersionValue = inputs.field(ComposerFields.appVersion)
        languages = inputs.field(ComposerFields.languages, errorUnder: true)
        countries = inputs.field(ComposerFields.countries, errorUnder: true)
        userProperties = FormRows.rows(form, "targeting.userProperties").enumerated().map { index, row in
            inputs.filterRow(prefix: "targeting.userProperties", index: index, row: row)
        }
        minDays = inputs.field(ComposerFields.minDays)
        maxDays = inputs.field(ComposerFields.maxDays)
        percentage = inputs.field(ComposerFields.percentage)
        testOnDevice = form[ComposerFields.testOnDevice.path] == "true"
        testOnDeviceLabel = ComposerFields.testOnDevice.label(localizer)
        testOnDeviceHint = ComposerFields.testOnDevice.hintKey.map { localizer($0) } ?? ""
        scriptStrings = ComposerScriptStrings.json(localizer)
    }

    /// The form field a problem belongs to (list items such as `targeting.languages.2` share one input).
    static func fieldName(for path: String) -> String {
        for shared in [ComposerFields.languages.path, ComposerFields.countries.path] where path.hasPrefix(shared) { return shared }
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

/// The words the composer's script says (its announcements), as JSON for
/// a `<script type="application/json">` block: the script holds no text of its own.
enum ComposerScriptStrings {
    static let keys = [
        "chose", "row_added", "row_cleared", "row_removed", "row_moved", "version_added", "version_removed",
    ]

    static func json(_ localizer: Localizer) -> String {
        var strings: [String: String] = [:]
        for key in keys { strings[key] = localizer("composer.script.\(key)") }
        guard let data = try? JSONSerialization.data(withJSONObject: strings, options: [.sortedKeys]),
              let text = String(data: data, encoding: .utf8) else { return "{}" }
        // Inside a script element only `</` could end it early; `<` and `&` are escaped all the same.
        return text.replacingOccurrences(of: "<", with: "\\u003c").replacingOccurrences(of: ">", with: "\\u003e")
            .replacingOccurrences(of: "&", with: "\\u0026")
    }
}
