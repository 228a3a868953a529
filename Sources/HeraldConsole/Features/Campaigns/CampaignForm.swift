import Foundation
import HeraldDomain
import HeraldHTTP

/// The composer's fields are named by their JSON path (`message.title.text`, `data.0.key`,
/// `triggers.1.filters.0.op`, `message.translations.fa.title.text`), so one decoder turns a form into a
/// Campaign and the domain's validation serves forms and JSON alike. `encode` is the inverse, for editing.
/// The message's fields are read and written through their description in `ComposerFields`.
enum CampaignForm {
    /// A set of radio buttons and the field whose value only counts when one of them is chosen: the
    /// start date and "At a date and time", the days between showings and "At most once every N days".
    struct Choice: Sendable {
        let choices: ComposerField
        /// The option that uses `field`.
        let usingValue: String
        let field: ComposerField
        /// The problem's key (`validation.<key>`) when a value is typed under each other option.
        let unusedKeys: [String: String]

        var name: String { choices.path }
        var values: [String] { choices.options }

        func label(of value: String, _ localizer: Localizer) -> String {
            values.contains(value) ? localizer(choices.optionKey(value)) : value
        }
    }

    static let startChoice = Choice(
        choices: ComposerFields.startMode, usingValue: "at", field: ComposerFields.start, unusedKeys: ["publish": "start_unused"])
    static let endChoice = Choice(
        choices: ComposerFields.endMode, usingValue: "at", field: ComposerFields.end, unusedKeys: ["never": "end_unused"])
    static let frequencyChoice = Choice(
        choices: ComposerFields.frequency, usingValue: Frequency.Kind.everyNDays.rawValue, field: ComposerFields.frequencyDays,
        unusedKeys: [Frequency.Kind.once.rawValue: "days_unused_once", Frequency.Kind.always.rawValue: "days_unused_always"])

    /// At most this many language versions are read from a form (validation allows fewer; the rest is
    /// refused there, not dropped here).
    static let versionLimit = CampaignLimits.languageVersions + 1

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

        let channel = Channel(form: form)
        var message = Campaign.noMessage
        var push: PushNotification?
        switch channel {
        case .inApp:
            message = Message(layout: Message.Layout(rawValue: text(ComposerFields.layout.path)) ?? .card)
            for field in ComposerFields.message {
                guard let access = field.access, let value = optional(field.path) else { continue }
                // A number that is not one is said, not dropped in silence.
                if field.kind == .number && integer(field.path, "seconds_whole") == nil { continue }
                access.write(&message, value)
            }
            message.translations = versions(form, .inApp, empty: MessageTranslation(), access: \.versionAccess)
        case .push:
            var notification = PushNotification()
            for field in ComposerFields.push {
                guard let access = field.pushAccess, let value = optional(field.path) else { continue }
                if field.kind == .number && integer(field.path, "badge_whole") == nil { continue }
                access.write(&notification, value)
            }
            notification.silent = form[ComposerFields.pushSilent.path] == "true"
            notification.inDeviceTimeZone = form[ComposerFields.pushInDeviceTimeZone.path] == "true"
            notification.translations = versions(form, .push, empty: PushTranslation(), access: \.pushVersionAccess)
            push = notification
        }

        /// Whether the field of `choice` counts; a value typed while another option is chosen is never
        /// dropped in silence (the composer's script chooses the option as you type; without script, this says so).
        func uses(_ choice: Choice, chosen: String) -> Bool {
            if chosen == choice.usingValue { return true }
            if !text(choice.field.path).isEmpty {
                problems.append(FieldProblem(path: choice.field.path, key: choice.unusedKeys[chosen] ?? "field_unused"))
            }
            return false
        }

        let timeZoneName = optional(ComposerFields.timeZone.path) ?? "UTC"
        var schedule = Schedule(timeZone: timeZoneName)
        for choice in [Self.startChoice, Self.endChoice] {
            let chosen = text(choice.name).isEmpty ? choice.values[0] : text(choice.name)
            guard uses(choice, chosen: chosen) else { continue }
            // With an unknown time zone no local time can be read; validation names the zone, not this field.
            guard let zone = TimeZoneName.zone(timeZoneName) else { continue }
            switch LocalDateTime.parse(text(choice.field.path), in: zone) {
            case .success(let date):
                if choice.field.path == Self.startChoice.field.path { schedule.start = date } else { schedule.end = date }
            case .failure(let problem):
                problems.append(FieldProblem(choice.field.path, problem.text(timeZone: timeZoneName)))
            }
        }

        let frequencyType = Frequency.Kind(rawValue: text(Self.frequencyChoice.name)) ?? .once
        let frequency = Frequency(
            type: frequencyType,
            days: uses(Self.frequencyChoice, chosen: frequencyType.rawValue) ? integer(ComposerFields.frequencyDays.path, "days_whole") : nil)

        var targeting = Targeting()
        let platforms = form.values(ComposerFields.platforms.path).compactMap(Platform.init(rawValue:))
        targeting.platforms = platforms.isEmpty ? nil : platforms
        if let value = optional(ComposerFields.appVersion.path) {
            targeting.appVersion = Targeting.VersionRule(
                op: Targeting.VersionRule.Operator(rawValue: text(ComposerFields.appVersionOperator.path)) ?? .equals, value: value)
        }
        targeting.languages = list(text(ComposerFields.languages.path))
        targeting.countries = list(text(ComposerFields.countries.path))
        let userProperties = FormRows.rows(form, "targeting.userProperties").enumerated().compactMap { index, row in
            filter(row, path: "targeting.userProperties.\(index)", problems: &problems)
        }
        targeting.userProperties = userProperties.isEmpty ? nil : userProperties
        let minDays = integer(ComposerFields.minDays.path, "days_whole")
        let maxDays = integer(ComposerFields.maxDays.path, "days_whole")
        if minDays != nil || maxDays != nil { targeting.daysSinceFirstOpen = Targeting.DayRange(min: minDays, max: maxDays) }
        targeting.percentage = integer(ComposerFields.percentage.path, "percentage_whole")

        let triggers = FormRows.rows(form, "triggers").enumerated().compactMap { index, row -> Trigger? in
            let event = (row["event"] ?? "").trimmingCharacters(in: .whitespaces)
            let filterRows = FormRows.rows(row, "filters")
            if event.isEmpty && filterRows.isEmpty { return nil }
            let filters = filterRows.enumerated().compactMap { filterIndex, filterRow in
                filter(filterRow, path: "triggers.\(index).filters.\(filterIndex)", problems: &problems)
            }
            return Trigger(event: event, filters: filters)
        }

        // No event and no filters: no goal (the window's default stays in its field, unread). A notification
        // has none, and its composer shows no goal fields.
        let goalEvent = text(ComposerFields.conversionEvent.path).trimmingCharacters(in: .whitespaces)
        let goalFilters = FormRows.rows(form, "conversion.filters").enumerated().compactMap { index, row in
            filter(row, path: "conversion.filters.\(index)", problems: &problems)
        }
        let conversion = channel == .push || (goalEvent.isEmpty && goalFilters.isEmpty) ? nil : ConversionGoal(
            event: goalEvent, filters: goalFilters,
            windowHours: integer(ComposerFields.conversionWindow.path, "hours_whole") ?? ConversionGoal.defaultWindowHours)

        let data = FormRows.rows(form, "data").compactMap { row -> CustomData.Pair? in
            let key = (row["key"] ?? "").trimmingCharacters(in: .whitespaces)
            let value = row["value"] ?? ""
            return key.isEmpty && value.isEmpty ? nil : CustomData.Pair(key: key, value: value)
        }

        let priority = integer(ComposerFields.priority.path, "priority_range") ?? 5
        let campaign = Campaign(
            app: app, name: text(ComposerFields.name.path), description: optional(ComposerFields.description.path), priority: priority,
            schedule: schedule, triggers: triggers, frequency: frequency, targeting: targeting,
            testOnDevice: form[ComposerFields.testOnDevice.path] == "true", channel: channel, message: message.keepingLayoutFields,
            push: push, data: CustomData(data), conversion: conversion)
        return (campaign, problems)
    }

    /// The language versions' tags as the form lists them (one hidden `message.translations` or
    /// `push.translations` input each), in order, without repeats; the first `versionLimit`.
    static func versionTags(_ form: FormData) -> [String] {
        var tags: [String] = []
        for value in form.values(Channel(form: form).translations) where tags.count < versionLimit {
            let tag = value.trimmingCharacters(in: .whitespaces)
            if !tag.isEmpty && !tags.contains(tag) { tags.append(tag) }
        }
        return tags
    }

    /// The language versions the form holds: a version the composer shows is kept even with every field
    /// empty (the marketer added it and has not translated it yet; devices then get the default).
    private static func versions<Version>(
        _ form: FormData, _ channel: Channel, empty: Version, access: KeyPath<ComposerField, ComposerField.Accessor<Version>?>
    ) -> [String: Version]? {
        var versions: [String: Version] = [:]
        for tag in versionTags(form) {
            var version = empty
            for field in channel.translatable {
                guard let write = field[keyPath: access]?.write, let path = field.versionPath(tag) else { continue }
                let value = (form[path] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                if !value.isEmpty { write(&version, value) }
            }
            versions[tag] = version
        }
        return versions.isEmpty ? nil : versions
    }

    /// The form fields that show `campaign` in the composer.
    static func encode(_ campaign: Campaign) -> FormData {
        var form = FormData()
        func put(_ path: String, _ value: String?) {
            if let value { form.pairs.append((path, value)) }
        }
        put(ComposerFields.name.path, campaign.name)
        put(ComposerFields.description.path, campaign.description)
        put(ComposerFields.app.path, String(campaign.app))
        put(ComposerFields.priority.path, String(campaign.priority))
        put(ComposerFields.channel.path, campaign.channel.rawValue)
        func putVersions<Version>(_ versions: [String: Version]?, _ channel: Channel, _ access: KeyPath<ComposerField, ComposerField.Accessor<Version>?>) {
            for (tag, version) in (versions ?? [:]).sorted(by: { $0.key < $1.key }) {
                put(channel.translations, tag)
                for field in channel.translatable {
                    guard let path = field.versionPath(tag) else { continue }
                    put(path, field[keyPath: access]?.read(version))
                }
            }
        }
        switch campaign.channel {
        case .inApp:
            let message = campaign.message
            put(ComposerFields.layout.path, message.layout.rawValue)
            for field in ComposerFields.message {
                put(field.path, field.access?.read(message))
            }
            putVersions(message.translations, .inApp, \.versionAccess)
        case .push:
            let push = campaign.push ?? PushNotification()
            for field in ComposerFields.push {
                put(field.path, field.pushAccess?.read(push))
            }
            if push.silent { put(ComposerFields.pushSilent.path, "true") }
            if push.inDeviceTimeZone { put(ComposerFields.pushInDeviceTimeZone.path, "true") }
            putVersions(push.translations, .push, \.pushVersionAccess)
        }
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
        if let goal = campaign.conversion {
            put(ComposerFields.conversionEvent.path, goal.event)
            put(ComposerFields.conversionWindow.path, String(goal.windowHours))
            for (index, filter) in goal.filters.enumerated() {
                putFilter(filter, at: "conversion.filters.\(index)", into: &form)
            }
        }
        let schedule = campaign.schedule
        put(ComposerFields.timeZone.path, schedule.timeZone)
        put(startChoice.name, schedule.start == nil ? "publish" : "at")
        put(startChoice.field.path, schedule.start.map { LocalDateTime.format($0, timeZone: schedule.timeZone) })
        put(endChoice.name, schedule.end == nil ? "never" : "at")
        put(endChoice.field.path, schedule.end.map { LocalDateTime.format($0, timeZone: schedule.timeZone) })
        put(frequencyChoice.name, campaign.frequency.type.rawValue)
        put(frequencyChoice.field.path, campaign.frequency.days.map(String.init))
        let targeting = campaign.targeting
        for platform in targeting.platforms ?? [] { put(ComposerFields.platforms.path, platform.rawValue) }
        put(ComposerFields.appVersionOperator.path, targeting.appVersion?.op.rawValue)
        put(ComposerFields.appVersion.path, targeting.appVersion?.value)
        put(ComposerFields.languages.path, targeting.languages?.joined(separator: ", "))
        put(ComposerFields.countries.path, targeting.countries?.joined(separator: ", "))
        for (index, filter) in (targeting.userProperties ?? []).enumerated() {
            putFilter(filter, at: "targeting.userProperties.\(index)", into: &form)
        }
        put(ComposerFields.minDays.path, targeting.daysSinceFirstOpen?.min.map(String.init))
        put(ComposerFields.maxDays.path, targeting.daysSinceFirstOpen?.max.map(String.init))
        put(ComposerFields.percentage.path, targeting.percentage.map(String.init))
        if campaign.testOnDevice { put(ComposerFields.testOnDevice.path, "true") }
        return form
    }

    private static func putFilter(_ filter: PropertyFilter, at path: String, into form: inout FormData) {
        form.pairs.append(("\(path).property", filter.property))
        form.pairs.append(("\(path).op", filter.op.rawValue))
        form.pairs.append(("\(path).type", filter.value?.typeName ?? "string"))
        form.pairs.append(("\(path).value", filter.value?.text ?? ""))
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
