import Foundation
import HeraldDomain
import HeraldStorage

/// The read-only summary of a campaign, with the actions its state allows.
struct CampaignSummaryView: Sendable {
    struct Row: Sendable {
        let label: String
        let value: String
        let code: Bool
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
    let revision: Int
    let updatedBy: String
    let updatedAt: String
    let sections: [Section]
    let canEdit: Bool
    let editable: Bool
    let canPublish: Bool
    let canPause: Bool
    let canResume: Bool
    let canStop: Bool
    let canArchive: Bool
    let canDelete: Bool
    let errors: [ErrorSummaryItem]

    init(stored: StoredCampaign, appName: String, now: Date, canEdit: Bool, problems: [FieldProblem]) {
        let campaign = stored.campaign
        let status = stored.status(at: now)
        id = stored.id
        name = campaign.name
        description = campaign.description
        self.status = status.rawValue
        statusTitle = status.title
        revision = stored.revision
        updatedBy = stored.updatedBy
        updatedAt = DisplayTime.dateTime(stored.updatedAt)
        self.canEdit = canEdit
        editable = stored.state != .archived
        canPublish = stored.state == .draft
        canPause = stored.state == .published && status != .ended
        canResume = stored.state == .paused && status != .ended
        canStop = stored.state == .published || stored.state == .paused
        canArchive = stored.state != .archived
        canDelete = stored.state == .draft
        errors = problems.map { ErrorSummaryItem(fieldID: FieldView.id(for: ComposerView.fieldName(for: $0.path)), message: "\($0.message) (\($0.path))") }

        func row(_ label: String, _ value: String?, code: Bool = false) -> Row? {
            guard let value, !value.isEmpty else { return nil }
            return Row(label: label, value: value, code: code)
        }
        let message = campaign.message
        func button(_ button: Message.Button?) -> String? {
            guard let button else { return nil }
            let colors = [button.textColor, button.buttonColor].compactMap { $0 }.joined(separator: " on ")
            return "“\(button.text)” → \(button.url ?? "dismiss")" + (colors.isEmpty ? "" : " (\(colors))")
        }
        func text(_ text: Message.Text?) -> String? {
            text.map { $0.text + ($0.color.map { " (\($0))" } ?? "") }
        }
        let messageRows: [Row?] = [
            row("Layout", message.layout.title),
            row("Title", text(message.title)),
            row("Body", text(message.body)),
            row(message.layout == .card ? "Portrait image" : "Image", message.imageUrl, code: true),
            row("Landscape image", message.landscapeImageUrl, code: true),
            row("Background", message.backgroundColor, code: true),
            row("Primary button", button(message.primaryAction)),
            row("Secondary button", button(message.secondaryAction)),
            row("Tap action", message.action?.url, code: true),
            row("Hides after", message.dismiss.map { "\($0.seconds) s" }),
            row("Slides from", message.slideFrom?.rawValue),
            row("Orientation", message.orientation?.rawValue),
        ]
        let triggerRows = campaign.triggers.map { trigger in
            Row(label: "When", value: trigger.event + (trigger.filters.isEmpty ? "" : " where " + trigger.filters.map(Self.describe).joined(separator: " and ")), code: false)
        }
        let targeting = campaign.targeting
        let targetingRows: [Row?] = [
            row("Platforms", targeting.platforms?.map(\.title).joined(separator: ", ")),
            row("App version", targeting.appVersion.map { "\($0.op.rawValue.replacingOccurrences(of: "_", with: " ")) \($0.value)" }),
            row("Languages", targeting.languages?.joined(separator: ", ")),
            row("Countries", targeting.countries?.joined(separator: ", ")),
            row("User properties", targeting.userProperties.map { $0.map(Self.describe).joined(separator: " and ") }),
            row("Days since first open", targeting.daysSinceFirstOpen.map { "\($0.min.map(String.init) ?? "0") to \($0.max.map(String.init) ?? "any")" }),
            row("Rollout", targeting.percentage.map { "\($0)% of installations" }),
            row("Test on device", campaign.testOnDevice ? "Only the app's test devices, at once" : nil),
        ]
        let frequency = switch campaign.frequency.type {
        case .once: "Once per device"
        case .everyNDays: "At most once every \(campaign.frequency.days ?? 0) days"
        case .always: "Every time it triggers"
        }
        sections = [
            Section(title: "Message", rows: messageRows.compactMap { $0 }, empty: nil),
            Section(title: "Custom data", rows: campaign.data.pairs.map { Row(label: $0.key, value: $0.value, code: false) }, empty: "No custom data."),
            Section(title: "Triggers", rows: triggerRows, empty: "No trigger yet: it cannot be published without one."),
            Section(title: "Schedule", rows: [
                Row(label: "Starts", value: campaign.schedule.start.map { DisplayTime.dateTime($0) } ?? "When published", code: false),
                Row(label: "Ends", value: campaign.schedule.end.map { DisplayTime.dateTime($0) } ?? "Never", code: false),
                Row(label: "Time zone", value: campaign.schedule.timeZone, code: false),
            ], empty: nil),
            Section(title: "Delivery", rows: [
                Row(label: "App", value: appName, code: false),
                Row(label: "Priority", value: "\(campaign.priority) (1 is highest)", code: false),
                Row(label: "Frequency", value: frequency, code: false),
            ], empty: nil),
            Section(title: "Targeting", rows: targetingRows.compactMap { $0 }, empty: "Everyone who uses the app."),
        ]
    }

    static func describe(_ filter: PropertyFilter) -> String {
        "\(filter.property) \(filter.op.title)" + (filter.value.map { " \($0.text)" } ?? "")
    }
}
