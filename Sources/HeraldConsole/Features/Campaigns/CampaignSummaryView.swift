import Foundation
import HeraldDomain
import HeraldStorage

/// The read-only summary of a campaign, with the actions its state allows. Every value people typed is
/// isolated in its own element (`<bdi>`, or `dir="ltr"` for URLs, colors, event ids and zones), so a
/// Persian button text cannot reorder the URL beside it.
struct CampaignSummaryView: Sendable {
    struct Row: Sendable {
        /// HTML.
        let label: String
        /// HTML.
        let value: String
    }

    /// Why the campaign cannot be published: the rule's message and the field's path.
    struct Problem: Sendable {
        let message: String
        let path: String
    }

    struct Section: Sendable {
        let title: String
        let rows: [Row]
        let empty: String?
    }

    let id: Int64
    let name: String
    let description: String?
    let status: String
    let statusTitle: String
    /// HTML: the revision, who saved it and when.
    let saved: String
    let sections: [Section]
    let canEdit: Bool
    let editable: Bool
    let canPublish: Bool
    let canPause: Bool
    let canResume: Bool
    let canStop: Bool
    let canArchive: Bool
    let canDelete: Bool
    let errors: [Problem]
    /// What the problems stop: publishing, unless said otherwise (a test send).
    let errorsTitle: String
    /// A push campaign's sending, once it has begun.
    let push: PushProgressView?
    let testSends: TestSendPanel?
    /// A push draft's audience (`AudienceView`), said beside Publish.
    let audience: String?
    /// What may keep a draft or live campaign from showing (`CampaignWarning`), in the reader's language.
    let warnings: [String]

    init(
        stored: StoredCampaign, appName: String, now: Date, canEdit: Bool, problems: [FieldProblem], errorsTitle: String? = nil,
        push: PushProgressView? = nil, testSends: TestSendPanel? = nil, audience: String? = nil, warnings: [String] = [],
        localizer: Localizer
    ) {
        self.audience = audience
        self.warnings = warnings
        let campaign = stored.campaign
        let status = stored.status(at: now)
        let l = localizer
        id = stored.id
        name = campaign.name
        description = campaign.description
        self.status = status.rawValue
        statusTitle = l.title(status)
        saved = l.markup("campaigns.show.saved", [
            "revision": Markup.escape(l.number(stored.revision)), "name": l.actorMarkup(stored.updatedBy), "time": l.timeMarkup(stored.updatedAt),
        ])
        self.canEdit = canEdit
        editable = stored.state != .archived
        canPublish = stored.state == .draft
        canPause = stored.state == .published && status != .ended
        canResume = stored.state == .paused && status != .ended
        canStop = stored.state == .published || stored.state == .paused
        canArchive = stored.state != .archived
        canDelete = stored.state == .draft
        errors = problems.map { Problem(message: l.message(for: $0), path: $0.path) }
        self.errorsTitle = errorsTitle ?? l("campaigns.show.errors_title")
        self.push = push
        self.testSends = testSends

        /// A row whose label is a catalog key and whose value is HTML; nothing when there is no value.
        func row(_ key: String, _ value: String?) -> Row? {
            guard let value, !value.isEmpty else { return nil }
            return Row(label: Markup.escape(l("campaigns.summary." + key)), value: value)
        }
        func words(_ key: String) -> String { Markup.escape(l(key)) }
        let message = campaign.message
        func colored(_ html: String, _ color: String?) -> String {
            guard let color else { return html }
            return l.markup("campaigns.summary.text_color", ["text": html, "color": Markup.ltr(color)])
        }
        func button(_ button: Message.Button?) -> String? {
            guard let button else { return nil }
            let target = button.url.map { Markup.ltr($0) } ?? words("campaigns.summary.button_dismiss")
            // The catalogs of right-to-left languages point the arrow their way.
            var html = l.markup("campaigns.summary.button", ["text": l.quotedMarkup(button.text), "target": target])
            if button.textColor != nil || button.buttonColor != nil {
                let colors = l.markup("campaigns.summary.button_colors", [
                    "text": button.textColor.map { Markup.ltr($0) } ?? "–", "button": button.buttonColor.map { Markup.ltr($0) } ?? "–",
                ])
                html += " (" + colors + ")"
            }
            return html
        }
        func text(_ text: Message.Text?) -> String? {
            text.map { colored(Markup.user($0.text), $0.color) }
        }
        /// The translatable parts of `version` that `shows`: all of the default version's, a language
        /// version's own (what it leaves out is the default's, shown above it).
        func translatableRows(_ version: Message, shows: (Message.Field) -> Bool) -> [Row?] {
            [
                shows(.title) ? row("title", text(version.title)) : nil,
                shows(.body) ? row("body", text(version.body)) : nil,
                shows(.imageUrl) ? row(version.layout == .card ? "portrait_image" : "image", version.imageUrl.map { Markup.ltr($0) }) : nil,
                shows(.landscapeImageUrl) ? row("landscape_image", version.landscapeImageUrl.map { Markup.ltr($0) }) : nil,
                shows(.primaryAction) ? row("primary_button", button(version.primaryAction)) : nil,
                shows(.secondaryAction) ? row("secondary_button", button(version.secondaryAction)) : nil,
                shows(.action) ? row("tap_action", version.action.map { Markup.ltr($0.url) }) : nil,
            ]
        }
        let messageRows: [Row?] = [row("layout", words("common.layout." + message.layout.rawValue))]
            + translatableRows(message) { _ in true }
            + [
                row("background", message.backgroundColor.map { Markup.ltr($0) }),
                row("hides_after", message.dismiss.map { Markup.escape(l.plural("campaigns.summary.seconds", count: $0.seconds)) }),
                row("slides_from", message.slideFrom.map { words("campaigns.summary.edge." + $0.rawValue) }),
                row("orientation", message.orientation.map { words("campaigns.summary.orientations." + $0.rawValue) }),
            ]
        let languageVersions = (message.translations ?? [:]).sorted { $0.key < $1.key }.map { tag, translation in
            let own = translation.overriddenFields
            return Section(
                title: l("campaigns.summary.version_of", ["tag": LanguageNames.name(of: tag, in: l)]),
                rows: translatableRows(message.applying(translation), shows: own.contains).compactMap { $0 },
                empty: l("campaigns.summary.version_same"))
        }
        func eventWhere(_ name: String, _ filters: [PropertyFilter]) -> String {
            let event = Markup.ltr(name)
            return filters.isEmpty ? event : l.markup("campaigns.summary.event_where", [
                "event": event, "filters": Self.joined(filters.map { Self.describe($0, l) }, l),
            ])
        }
        let triggerRows = campaign.triggers.map { Row(label: words("campaigns.summary.when"), value: eventWhere($0.event, $0.filters)) }
        let goalRows = campaign.conversion.map { goal in
            [
                Row(label: words("campaigns.summary.goal_event"), value: eventWhere(goal.event, goal.filters)),
                Row(label: words("campaigns.summary.goal_window"),
                    value: Markup.escape(l.plural("campaigns.summary.goal_hours", count: goal.windowHours))),
            ]
        } ?? []
        let targeting = campaign.targeting
        let days = targeting.daysSinceFirstOpen.map {
            l.markup("campaigns.summary.days_range", [
                "min": Markup.escape(l.number($0.min ?? 0)), "max": $0.max.map { Markup.escape(l.number($0)) } ?? words("campaigns.summary.any"),
            ])
        }
        let targetingRows: [Row?] = [
            row("platforms", targeting.platforms.map { $0.map { Markup.escape(l.title($0)) }.joined(separator: ", ") }),
            row("app_version", targeting.appVersion.map { l.markup("campaigns.summary.version." + $0.op.rawValue, ["value": Markup.ltr($0.value)]) }),
            row("languages", targeting.languages.map { $0.map { Markup.ltr($0) }.joined(separator: " ") }),
            row("countries", targeting.countries.map { $0.map { Markup.ltr($0) }.joined(separator: " ") }),
            row("user_properties", targeting.userProperties.map { Self.joined($0.map { Self.describe($0, l) }, l) }),
            row("days_since_first_open", days),
            row("rollout", targeting.percentage.map {
                l.markup("campaigns.summary.rollout_value", ["percent": Markup.escape(l.percent(Double($0) / 100))])
            }),
            row("test_on_device", campaign.testOnDevice ? words("campaigns.summary.test_devices_only") : nil),
        ]
        let frequency = switch campaign.frequency.type {
        case .once: words("campaigns.summary.once")
        case .everyNDays: Markup.escape(l.plural("campaigns.summary.every_days", count: campaign.frequency.days ?? 0))
        case .always: words("campaigns.summary.always")
        }
        let zone = campaign.schedule.timeZone
        let scheduleRows: [Row?] = [
            row("starts", campaign.schedule.start.map { l.scheduleMarkup($0, zone: zone) } ?? words("campaigns.summary.when_published")),
            row("ends", campaign.schedule.end.map { l.scheduleMarkup($0, zone: zone) } ?? words("campaigns.summary.never")),
            row("time_zone", Markup.ltr(zone, code: false)),
        ]
        let deliveryRows: [Row?] = [
            Row(label: words("common.app"), value: Markup.user(appName)),
            row("priority", l.markup("campaigns.summary.priority_value", ["priority": Markup.escape(l.number(campaign.priority))])),
            row("frequency", frequency),
        ]
        let customData = Section(
            title: l("campaigns.summary.custom_data"),
            rows: campaign.data.pairs.map { Row(label: Markup.user($0.key), value: Markup.user($0.value)) },
            empty: l("campaigns.summary.no_custom_data"))
        let targetingSection = Section(
            title: l("campaigns.summary.targeting"), rows: targetingRows.compactMap { $0 }, empty: l("campaigns.summary.everyone"))
        if let notification = campaign.push {
            let pushDelivery = [deliveryRows[0], row("device_time", notification.inDeviceTimeZone ? words("campaigns.summary.device_time_value") : nil)]
            sections = Self.notificationSections(notification, row: row, words: words, l) + [
                customData,
                Section(title: l("campaigns.summary.schedule"), rows: (scheduleRows + pushDelivery).compactMap { $0 }, empty: nil),
                targetingSection,
            ]
        } else {
            sections = [Section(title: l("campaigns.summary.message"), rows: messageRows.compactMap { $0 }, empty: nil)] + languageVersions + [
                customData,
                Section(title: l("campaigns.summary.triggers"), rows: triggerRows, empty: l("campaigns.summary.no_trigger")),
                Section(title: l("campaigns.summary.goal"), rows: goalRows, empty: l("campaigns.summary.no_goal")),
                Section(title: l("campaigns.summary.schedule"), rows: scheduleRows.compactMap { $0 }, empty: nil),
                Section(title: l("campaigns.summary.delivery"), rows: deliveryRows.compactMap { $0 }, empty: nil),
                targetingSection,
            ]
        }
    }

    /// A push campaign's notification and each of its language versions, as sections of rows.
    static func notificationSections(
        _ notification: PushNotification, row: (String, String?) -> Row?, words: (String) -> String, _ l: Localizer
    ) -> [Section] {
        func rows(_ version: PushNotification, own: PushTranslation?) -> [Row] {
            let shows = { (field: String) in own.map { $0.sets(field) } ?? true }
            return [
                shows("title") ? row("title", version.title.map(Markup.user)) : nil,
                shows("subtitle") ? row("subtitle", version.subtitle.map(Markup.user)) : nil,
                shows("body") ? row("body", version.body.map(Markup.user)) : nil,
                shows("imageUrl") ? row("image", version.imageUrl.map { Markup.ltr($0) }) : nil,
                shows("url") ? row("link", version.url.map { Markup.ltr($0) }) : nil,
                own == nil ? row("badge", version.badge.map { Markup.escape(l.number($0)) }) : nil,
                own == nil ? row("sound", version.sound.map { Markup.ltr($0) }) : nil,
                own == nil ? row("category", version.category.map { Markup.ltr($0) }) : nil,
                own == nil ? row("thread", version.threadId.map { Markup.ltr($0) }) : nil,
                own == nil && version.silent ? row("silent", words("campaigns.summary.silent_value")) : nil,
            ].compactMap { $0 }
        }
        let versions = (notification.translations ?? [:]).sorted { $0.key < $1.key }.map { tag, translation in
            Section(title: l("campaigns.summary.version_of", ["tag": tag]), rows: rows(notification.applying(translation), own: translation), empty: nil)
        }
        return [Section(title: l("campaigns.summary.notification"), rows: rows(notification.applying(PushTranslation()), own: nil), empty: nil)] + versions
    }

    /// HTML: one property filter, the property as an id and the value as the user wrote it.
    static func describe(_ filter: PropertyFilter, _ localizer: Localizer) -> String {
        let property = Markup.ltr(filter.property)
        guard filter.op != .exists, let value = filter.value else {
            return localizer.markup("campaigns.summary.filter.exists", ["property": property])
        }
        let written = switch value {
        case .string(let text): Markup.user(text)
        case .number: Markup.ltr(value.text)
        case .bool(let flag): Markup.escape(localizer(flag ? "campaigns.summary.true" : "campaigns.summary.false"))
        }
        return localizer.markup("campaigns.summary.filter." + filter.op.rawValue, ["property": property, "value": written])
    }

    /// HTML: conditions that all hold ("a and b and c").
    static func joined(_ parts: [String], _ localizer: Localizer) -> String {
        guard var result = parts.first else { return "" }
        for part in parts.dropFirst() {
            result = localizer.markup("common.and", ["first": result, "second": part])
        }
        return result
    }
}
