import Foundation
import HeraldDomain
import HeraldHTTP

/// The composer's fields are named by their JSON path (`message.title.text`, `data.0.key`,
/// `triggers.1.filters.0.op`), so one decoder turns a form into a Campaign and the domain's
/// validation serves forms and JSON alike. `encode` is the inverse, for editing.
enum CampaignForm {
    /// A set of radio buttons and the field whose value only counts when one of them is chosen: the
    /// start date and "At a date and time", the days between showings and "At most once every N days".
    struct Choice: Sendable {
        let name: String
        let options: [(value: String, label: String)]
        /// The option that uses `field`.
        let usingField: String
        let field: String
        let fieldWords: String
        /// The problem's key (`validation.<key>`) by the option chosen instead of `usingField`.
        let unusedKeys: [String: String]

        var usingLabel: String { options.first { $0.value == usingField }?.label ?? usingField }

        func label(of value: String) -> String { options.first { $0.value == value }?.label ?? value }
    }

    static let startChoice = Choice(
        name: "schedule.startMode", options: [("publish", "When published"), ("at", "At a date and time")],
        usingField: "at", field: "schedule.start", fieldWords: "a start", unusedKeys: ["publish": "start_unused"])
    static let endChoice = Choice(
        name: "schedule.endMode", options: [("never", "Never"), ("at", "At a date and time")],
        usingField: "at", field: "schedule.end", fieldWords: "an end", unusedKeys: ["never": "end_unused"])
    static let frequencyChoice = Choice(
        name: "frequency.type",
        options: [(Frequency.Kind.once.rawValue, "Once per device"), (Frequency.Kind.everyNDays.rawValue, "At most once every N days"),
                  (Frequency.Kind.always.rawValue, "Every time it triggers")],
        usingField: Frequency.Kind.everyNDays.rawValue, field: "frequency.days", fieldWords: "days between showings",
        unusedKeys: [Frequency.Kind.once.rawValue: "days_unused_once", Frequency.Kind.always.rawValue: "days_unused_always"])

    /// The campaign the form describes, and what could not even be read (a number that is not one).
    static func decode(_ form: FormData, app: Int64) -> (campaign: Campaign, problems: [FieldProblem]) {
        var problems: [FieldProblem] = []
        func text(_ path: String) -> String { (form[path] ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }
        func optional(_ path: String) -> String? { text(path).isEmpty ? nil : text(path) }
        func integer(_ path: String, _ key: String) -> Int? {
            guard let raw = optional(path) else { return nil }
            guard let value = Int(raw) else {
                problems.append(FieldProblem(path: path, key: key))
                return nil
            }
            return value
        }

        let layout = Message.Layout(rawValue: text("message.layout")) ?? .card
        var message = Message(layout: layout)
        message.title = textValue(form, "message.title")
        message.body = textValue(form, "message.body")
        message.imageUrl = optional("message.imageUrl")
        message.landscapeImageUrl = optional("message.landscapeImageUrl")
        message.backgroundColor = optional("message.backgroundColor")
        message.primaryAction = button(form, "message.primaryAction")
        message.secondaryAction = button(form, "message.secondaryAction")
        message.action = optional("message.action.url").map(Message.Action.init(url:))
        message.dismiss = integer("message.dismiss.seconds", "seconds_whole").map(Message.Dismiss.init(seconds:))
        message.slideFrom = Message.SlideEdge(rawValue: text("message.slideFrom"))
        message.orientation = Message.Orientation(rawValue: text("message.orientation"))

        /// Whether the field of `choice` counts; a value typed while another option is chosen is never
        /// dropped in silence (the composer's script chooses the option as you type; without script, this says so).
        func uses(_ choice: Choice, chosen: String) -> Bool {
            if chosen == choice.usingField { return true }
            if !text(choice.field).isEmpty {
                problems.append(FieldProblem(path: choice.field, key: choice.unusedKeys[chosen] ?? "field_unused"))
            }
            return false
        }

        let timeZoneName = optional("schedule.timeZone") ?? "UTC"
        var schedule = Schedule(timeZone: timeZoneName)
        for choice in [Self.startChoice, Self.endChoice] {
            let chosen = text(choice.name).isEmpty ? choice.options[0].value : text(choice.name)
            guard uses(choice, chosen: chosen) else { continue }
            // With an unknown time zone no local time can be read; validation names the zone, not this field.
            guard let zone = LocalDateTime.zone(timeZoneName) else { continue }
            switch LocalDateTime.parse(text(choice.field), in: zone) {
            case .success(let date):
                if choice.field == Self.startChoice.field { schedule.start = date } else { schedule.end = date }
            case .failure(let problem):
                problems.append(FieldProblem(choice.field, problem.text(timeZone: timeZoneName)))
            }
        }

        let frequencyType = Frequency.Kind(rawValue: text(Self.frequencyChoice.name)) ?? .once
        let frequency = Frequency(
            type: frequencyType,
            days: uses(Self.frequencyChoice, chosen: frequencyType.rawValue) ? integer("frequency.days", "days_whole") : nil)

        var targeting = Targeting()
        let platforms = form.values("targeting.platforms").compactMap(Platform.init(rawValue:))
        targeting.platforms = platforms.isEmpty ? nil : platforms
        if let value = optional("targeting.appVersion.value") {
            targeting.appVersion = Targeting.VersionRule(
                op: Targeting.VersionRule.Operator(rawValue: text("targeting.appVersion.op")) ?? .equals, value: value)
        }
        targeting.languages = list(text("targeting.languages"))
        targeting.countries = list(text("targeting.countries"))
        let userProperties = FormRows.rows(form, "targeting.userProperties").enumerated().compactMap { index, row in
            filter(row, path: "targeting.userProperties.\(index)", problems: &problems)
        }
        targeting.userProperties = userProperties.isEmpty ? nil : userProperties
        let minDays = integer("targeting.daysSinceFirstOpen.min", "days_whole")
        let maxDays = integer("targeting.daysSinceFirstOpen.max", "days_whole")
        if minDays != nil || maxDays != nil { targeting.daysSinceFirstOpen = Targeting.DayRange(min: minDays, max: maxDays) }
        targeting.percentage = integer("targeting.percentage", "percentage_whole")

        let triggers = FormRows.rows(form, "triggers").enumerated().compactMap { index, row -> Trigger? in
            let event = (row["event"] ?? "").trimmingCharacters(in: .whitespaces)
            let filterRows = FormRows.rows(row, "filters")
            if event.isEmpty && filterRows.isEmpty { return nil }
            let filters = filterRows.enumerated().compactMap { filterIndex, filterRow in
                filter(filterRow, path: "triggers.\(index).filters.\(filterIndex)", problems: &problems)
            }
            return Trigger(event: event, filters: filters)
        }

        let data = FormRows.rows(form, "data").compactMap { row -> CustomData.Pair? in
            let key = (row["key"] ?? "").trimmingCharacters(in: .whitespaces)
            let value = row["value"] ?? ""
            return key.isEmpty && value.isEmpty ? nil : CustomData.Pair(key: key, value: value)
        }

        let priority = integer("priority", "priority_range") ?? 5
        let campaign = Campaign(
            app: app, name: text("name"), description: optional("description"), priority: priority, schedule: schedule,
            triggers: triggers, frequency: frequency, targeting: targeting, testOnDevice: form["testOnDevice"] == "true",
            message: message.keepingLayoutFields, data: CustomData(data))
        return (campaign, problems)
    }

    /// The form fields that show `campaign` in the composer.
    static func encode(_ campaign: Campaign) -> FormData {
        var form = FormData()
        func put(_ path: String, _ value: String?) {
            if let value { form.pairs.append((path, value)) }
        }
        put("name", campaign.name)
        put("description", campaign.description)
        put("app", String(campaign.app))
        put("priority", String(campaign.priority))
        let message = campaign.message
        put("message.layout", message.layout.rawValue)
        for (path, text) in [("message.title", message.title), ("message.body", message.body)] {
            put("\(path).text", text?.text)
            put("\(path).color", text?.color)
        }
        put("message.imageUrl", message.imageUrl)
        put("message.landscapeImageUrl", message.landscapeImageUrl)
        put("message.backgroundColor", message.backgroundColor)
        for (path, button) in [("message.primaryAction", message.primaryAction), ("message.secondaryAction", message.secondaryAction)] {
            put("\(path).text", button?.text)
            put("\(path).textColor", button?.textColor)
            put("\(path).buttonColor", button?.buttonColor)
            put("\(path).url", button?.url)
        }
        put("message.action.url", message.action?.url)
        put("message.dismiss.seconds", message.dismiss.map { String($0.seconds) })
        put("message.slideFrom", message.slideFrom?.rawValue)
        put("message.orientation", message.orientation?.rawValue)
        for (index, pair) in campaign.data.pairs.enumerated() {
            put("data.\(index).key", pair.key)
            put("data.\(index).value", pair.value)
        }
        for (index, trigger) in campaign.triggers.enumerated() {
            put("triggers.\(index).event", trigger.event)
            for (filterIndex, filter) in trigger.filters.enumerated() {
                putFilter(filter, at: "triggers.\(index).filters.\(filterIndex)", into: &form)
            }
        }
        let schedule = campaign.schedule
        put("schedule.timeZone", schedule.timeZone)
        put("schedule.startMode", schedule.start == nil ? "publish" : "at")
        put("schedule.start", schedule.start.map { LocalDateTime.format($0, timeZone: schedule.timeZone) })
        put("schedule.endMode", schedule.end == nil ? "never" : "at")
        put("schedule.end", schedule.end.map { LocalDateTime.format($0, timeZone: schedule.timeZone) })
        put("frequency.type", campaign.frequency.type.rawValue)
        put("frequency.days", campaign.frequency.days.map(String.init))
        let targeting = campaign.targeting
        for platform in targeting.platforms ?? [] { put("targeting.platforms", platform.rawValue) }
        put("targeting.appVersion.op", targeting.appVersion?.op.rawValue)
        put("targeting.appVersion.value", targeting.appVersion?.value)
        put("targeting.languages", targeting.languages?.joined(separator: ", "))
        put("targeting.countries", targeting.countries?.joined(separator: ", "))
        for (index, filter) in (targeting.userProperties ?? []).enumerated() {
            putFilter(filter, at: "targeting.userProperties.\(index)", into: &form)
        }
        put("targeting.daysSinceFirstOpen.min", targeting.daysSinceFirstOpen?.min.map(String.init))
        put("targeting.daysSinceFirstOpen.max", targeting.daysSinceFirstOpen?.max.map(String.init))
        put("targeting.percentage", targeting.percentage.map(String.init))
        if campaign.testOnDevice { put("testOnDevice", "true") }
        return form
    }

    private static func putFilter(_ filter: PropertyFilter, at path: String, into form: inout FormData) {
        form.pairs.append(("\(path).property", filter.property))
        form.pairs.append(("\(path).op", filter.op.rawValue))
        form.pairs.append(("\(path).type", filter.value?.typeName ?? "string"))
        form.pairs.append(("\(path).value", filter.value?.text ?? ""))
    }

    private static func textValue(_ form: FormData, _ path: String) -> Message.Text? {
        let text = form["\(path).text"] ?? ""
        let color = (form["\(path).color"] ?? "").trimmingCharacters(in: .whitespaces)
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty && color.isEmpty { return nil }
        return Message.Text(text: text.trimmingCharacters(in: .whitespacesAndNewlines), color: color.isEmpty ? nil : color)
    }

    private static func button(_ form: FormData, _ path: String) -> Message.Button? {
        let fields = ["text", "textColor", "buttonColor", "url"].map { (form["\(path).\($0)"] ?? "").trimmingCharacters(in: .whitespaces) }
        if fields.allSatisfy(\.isEmpty) { return nil }
        func optional(_ value: String) -> String? { value.isEmpty ? nil : value }
        return Message.Button(text: fields[0], textColor: optional(fields[1]), buttonColor: optional(fields[2]), url: optional(fields[3]))
    }

    private static func filter(_ row: FormData, path: String, problems: inout [FieldProblem]) -> PropertyFilter? {
        let property = (row["property"] ?? "").trimmingCharacters(in: .whitespaces)
        let raw = (row["value"] ?? "").trimmingCharacters(in: .whitespaces)
        if property.isEmpty && raw.isEmpty { return nil }
        let op = FilterOperator(rawValue: row["op"] ?? "") ?? .eq
        guard op != .exists else { return PropertyFilter(property: property, op: op) }
        if raw.isEmpty { return PropertyFilter(property: property, op: op) }
        switch row["type"] ?? "string" {
        case "number":
            guard let number = Double(raw), number.isFinite else {
                problems.append(FieldProblem(path: "\(path).value", key: "filter_not_number"))
                return PropertyFilter(property: property, op: op, value: .string(raw))
            }
            return PropertyFilter(property: property, op: op, value: .number(number))
        case "bool":
            guard raw == "true" || raw == "false" else {
                problems.append(FieldProblem(path: "\(path).value", key: "filter_not_bool"))
                return PropertyFilter(property: property, op: op, value: .string(raw))
            }
            return PropertyFilter(property: property, op: op, value: .bool(raw == "true"))
        default:
            return PropertyFilter(property: property, op: op, value: .string(raw))
        }
    }

    /// Comma- or space-separated codes.
    private static func list(_ text: String) -> [String]? {
        let items = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init).filter { !$0.isEmpty }
        return items.isEmpty ? nil : items
    }
}

/// Repeated groups of fields (`data.0.key`, `data.0.value`, `data.1.key`…) as rows, in index order.
enum FormRows {
    /// The rows under `prefix`, each with the prefix and index removed from its names.
    static func rows(_ form: FormData, _ prefix: String) -> [FormData] {
        var rows: [Int: FormData] = [:]
        let start = prefix + "."
        for (name, value) in form.pairs where name.hasPrefix(start) {
            let rest = name.dropFirst(start.count)
            guard let dot = rest.firstIndex(of: "."), let index = Int(rest[..<dot]) else { continue }
            rows[index, default: FormData()].pairs.append((String(rest[rest.index(after: dot)...]), value))
        }
        return rows.keys.sorted().map { rows[$0]! }
    }

    /// `form` with the rows under `prefix` replaced by `rows`, numbered from 0.
    static func replacing(_ form: FormData, _ prefix: String, with rows: [FormData]) -> FormData {
        var result = FormData(form.pairs.filter { !$0.name.hasPrefix(prefix + ".") }.map { ($0.name, $0.value) })
        for (index, row) in rows.enumerated() {
            for (name, value) in row.pairs { result.pairs.append(("\(prefix).\(index).\(name)", value)) }
        }
        return result
    }

    /// Applies a row button pressed without JavaScript: `add:data`, `remove:triggers.1`, `up:data.2`.
    /// Returns nil when `intent` is not a row operation.
    static func apply(_ intent: String, to form: FormData) -> FormData? {
        let parts = intent.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, ["add", "remove", "up"].contains(parts[0]) else { return nil }
        if parts[0] == "add" {
            var rows = rows(form, parts[1])
            rows.append(FormData([("new", "")]))
            return replacing(form, parts[1], with: rows)
        }
        guard let dot = parts[1].lastIndex(of: "."), let index = Int(parts[1][parts[1].index(after: dot)...]) else { return nil }
        let prefix = String(parts[1][..<dot])
        var rows = rows(form, prefix)
        guard rows.indices.contains(index) else { return form }
        if parts[0] == "remove" {
            rows.remove(at: index)
        } else if index > 0 {
            rows.swapAt(index, index - 1)
        }
        return replacing(form, prefix, with: rows)
    }
}

/// `datetime-local` values (`2026-12-01T09:00`) read and written in a campaign's time zone.
enum LocalDateTime {
    enum Problem: Error {
        case notADateTime
        /// A wall-clock time the zone skips (clocks moving forward).
        case skipped

        func text(timeZone: String) -> ProblemText {
            switch self {
            case .notADateTime: ProblemText("date_time_invalid")
            case .skipped: ProblemText("time_skipped", ["zone": .text(timeZone)])
            }
        }
    }

    /// The zone named `identifier`, if it is one (names longer than any real zone are not looked up).
    static func zone(_ identifier: String) -> TimeZone? {
        identifier.utf8.count <= 64 ? TimeZone(identifier: identifier) : nil
    }

    static func parse(_ text: String, in zone: TimeZone) -> Result<Date, Problem> {
        let normalized = text.replacingOccurrences(of: " ", with: "T")
        guard normalized.utf8.count <= 19 else { return .failure(.notADateTime) }
        for format in ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss"] {
            if let date = formatter(format, zone).date(from: normalized) { return .success(date) }
            // A time every zone without daylight saving has, which this one lacks, falls in a gap.
            if formatter(format, .gmt).date(from: normalized) != nil { return .failure(.skipped) }
        }
        return .failure(.notADateTime)
    }

    static func format(_ date: Date, timeZone: String) -> String {
        formatter("yyyy-MM-dd'T'HH:mm", TimeZone(identifier: timeZone) ?? .gmt).string(from: date)
    }

    private static func formatter(_ format: String, _ zone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = format
        formatter.isLenient = false
        return formatter
    }
}
