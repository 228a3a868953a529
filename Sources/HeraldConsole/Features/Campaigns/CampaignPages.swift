import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/campaigns`: list, compose, review, publish and manage campaigns.
struct CampaignPages: Sendable {
    let services: Services
    static let pageSize = 25

    private var store: CampaignStore { services.database.campaigns }

    // MARK: List

    struct ListRow: Sendable {
        let id: Int64
        let name: String
        let status: String
        let statusTitle: String
        let layout: String
        let app: String
        let priority: Int
        let schedule: String
        let editedBy: String
        let editedAt: String
    }

    struct ListView: Sendable {
        let rows: [ListRow]
        let countText: String
        let hasApps: Bool
        let canEdit: Bool
        let canRegisterApps: Bool
        let filtered: Bool
        let search: String
        /// Exports what the list shows.
        let exportHref: String
        let apps: [SelectOption]
        let statuses: [SelectOption]
        let sorts: [SelectOption]
        let pagination: PaginationView?
    }

    func index(_ context: RequestContext) throws -> Response {
        let query = context.request.query
        var filter = CampaignQuery()
        filter.appID = query["app"].flatMap(Int64.init)
        filter.status = query["status"].flatMap(CampaignStatus.init(rawValue:))
        filter.search = query["q"] ?? ""
        filter.sort = query["sort"].flatMap(CampaignQuery.Sort.init(rawValue:)) ?? .updated
        filter.page = max(1, query["page"].flatMap(Int.init) ?? 1)
        filter.pageSize = Self.pageSize
        let (campaigns, total) = try store.list(filter, now: context.now)
        let apps = try services.database.apps.all()
        let role = context.user?.role ?? .viewer
        let rows = campaigns.map {
            ListRow(
                id: $0.id, name: $0.name, status: $0.status.rawValue, statusTitle: $0.status.title, layout: Message.Layout(rawValue: $0.layout)?.title ?? $0.layout,
                app: $0.appName, priority: $0.priority, schedule: Self.scheduleText(start: $0.startAt, end: $0.endAt),
                editedBy: $0.updatedBy, editedAt: DisplayTime.dateTime($0.updatedAt))
        }
        func href(page: Int) -> String {
            var pairs = query.pairs.filter { $0.name != "page" }.map { ($0.name, $0.value) }
            pairs.append(("page", String(page)))
            return "/campaigns?" + FormData(pairs).urlencoded
        }
        let model = ListView(
            rows: rows, countText: total == 1 ? "1 campaign" : "\(total) campaigns", hasApps: !apps.isEmpty, canEdit: role.includes(.editor), canRegisterApps: role.includes(.admin),
            filtered: filter.appID != nil || filter.status != nil || !filter.search.isEmpty, search: filter.search,
            exportHref: "/campaigns/export?" + FormData(query.pairs.filter { ["app", "status", "q"].contains($0.name) }.map { ($0.name, $0.value) }).urlencoded,
            apps: [SelectOption(value: "", label: "All apps", selected: filter.appID == nil)]
                + apps.map { SelectOption(value: String($0.id), label: $0.name, selected: $0.id == filter.appID) },
            statuses: [SelectOption(value: "", label: "Any state", selected: filter.status == nil)]
                + CampaignStatus.allCases.map { SelectOption(value: $0.rawValue, label: $0.title, selected: $0 == filter.status) },
            sorts: [("updated", "Last edited"), ("name", "Name"), ("priority", "Priority"), ("start", "Start")].map {
                SelectOption(value: $0.0, label: $0.1, selected: $0.0 == filter.sort.rawValue)
            },
            pagination: PaginationView.make(page: filter.page, pageSize: Self.pageSize, total: total, href: href(page:)))
        return try services.page(.campaigns, title: "Campaigns", model: model, context: context)
    }

    // MARK: Compose

    func new(_ context: RequestContext) throws -> Response {
        let apps = try services.database.apps.all()
        guard !apps.isEmpty else {
            try services.flash(context, .info, "Register an app first: every campaign belongs to one.")
            return .redirect(to: context.user?.role.includes(.admin) == true ? "/apps/new" : "/campaigns")
        }
        var form = FormData([("message.layout", Message.Layout.card.rawValue), ("priority", "5"), ("frequency.type", "once")])
        if let app = context.request.query["app"] { form.pairs.append(("app", app)) }
        return try renderComposer(context, form: form, problems: [], stored: nil)
    }

    func create(_ context: RequestContext) throws -> Response {
        let form = context.form
        let intent = form["intent"] ?? "draft"
        if let (changed, problems) = rearranged(form, intent: intent, context) {
            return try renderComposer(context, form: changed, problems: problems, stored: nil, status: problems.isEmpty ? 200 : 422)
        }
        guard let appID = form["app"].flatMap(Int64.init), try services.database.apps.find(id: appID) != nil else {
            return try renderComposer(context, form: form, problems: [FieldProblem("app", context.localizer("composer.errors.app"))], stored: nil, status: 422)
        }
        let publish = intent == "publish"
        let (campaign, problems) = decode(form, app: appID, publish: publish, context)
        guard problems.isEmpty else { return try renderComposer(context, form: form, problems: problems, stored: nil, status: 422) }
        let id = try store.create(campaign, state: publish ? .published : .draft, actor: context.actor, now: context.now)
        let name = Localizer.isolated(campaign.name)
        try services.flash(context, .success, context.localizer(publish ? "composer.flash.published" : "composer.flash.draft_saved", ["name": name]))
        return .redirect(to: "/campaigns/\(id)")
    }

    func edit(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        guard stored.state != .archived else {
            throw HTTPError(409, "Archived campaigns cannot be edited. Duplicate it to start a new one from it.")
        }
        var form = CampaignForm.encode(stored.campaign)
        form.pairs.append(("revision", String(stored.revision)))
        return try renderComposer(context, form: form, problems: [], stored: stored)
    }

    func update(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        guard stored.state != .archived else {
            throw HTTPError(409, "Archived campaigns cannot be edited. Duplicate it to start a new one from it.")
        }
        var form = context.form
        form.pairs.removeAll { $0.name == "app" }
        form.pairs.append(("app", String(stored.campaign.app)))
        let intent = form["intent"] ?? "draft"
        if let (changed, problems) = rearranged(form, intent: intent, context) {
            return try renderComposer(context, form: changed, problems: problems, stored: stored, status: problems.isEmpty ? 200 : 422)
        }
        let publishing = intent == "publish" && stored.state == .draft
        // A live campaign is on devices: every save must keep it publishable.
        let live = stored.state == .published || stored.state == .paused
        var (campaign, problems) = decode(form, app: stored.campaign.app, publish: publishing || live, context)
        campaign.id = stored.id
        guard problems.isEmpty else { return try renderComposer(context, form: form, problems: problems, stored: stored, status: 422) }
        guard let base = form["revision"].flatMap(Int.init) else {
            throw HTTPError(400, context.localizer("composer.errors.lost_revision"))
        }
        do {
            try store.update(campaign, expectedRevision: base, state: publishing ? .published : nil, actor: context.actor, now: context.now)
        } catch CampaignStoreError.staleRevision(_, let current) {
            return try renderConflict(context, form: form, stored: stored, base: base, current: current)
        }
        let name = Localizer.isolated(campaign.name)
        try services.flash(context, .success, context.localizer(publishing ? "composer.flash.published" : "composer.flash.changes_saved", ["name": name]))
        return .redirect(to: "/campaigns/\(stored.id)")
    }

    /// Someone saved since this editor loaded the form: show what they changed, keep this person's input,
    /// and let them save again on top of the newer version, knowingly.
    private func renderConflict(_ context: RequestContext, form: FormData, stored: StoredCampaign, base: Int, current: Int) throws -> Response {
        let revisions = try store.revisions(id: stored.id)
        let newer = revisions.filter { $0.revision > base }
        let baseRevision = revisions.first { $0.revision == base }
        // Revisions come newest first: the first newer one is the version saved now.
        let changes = newer.first.map { CampaignDiff.changes(from: baseRevision, to: $0, context.localizer) } ?? []
        let conflict = ConflictView(
            author: Array(Set(newer.map(\.author))).sorted().joined(separator: ", "),
            time: newer.first.map { context.localizer.dateTime($0.createdAt) } ?? "", changes: changes)
        var kept = form
        kept.pairs.removeAll { $0.name == "revision" }
        kept.pairs.append(("revision", String(current)))
        return try renderComposer(context, form: kept, problems: [], stored: stored, conflict: conflict, status: 409)
    }

    /// The form after a button that only changes the form (rows, layout, language versions), and what
    /// could not be done; nil for saving and publishing.
    private func rearranged(_ form: FormData, intent: String, _ context: RequestContext) -> (FormData, [FieldProblem])? {
        if let changed = ComposerVersions.apply(intent, to: form, localizer: context.localizer) { return changed }
        return (FormRows.apply(intent, to: form) ?? (intent == "refresh" ? form : nil)).map { ($0, []) }
    }

    private func decode(_ form: FormData, app: Int64, publish: Bool, _ context: RequestContext) -> (Campaign, [FieldProblem]) {
        var (campaign, problems) = CampaignForm.decode(form, app: app, localizer: context.localizer)
        let readProblems = Set(problems.map(\.path))
        let rules = publish ? CampaignLifecycle.publishProblems(campaign, now: context.now) : campaign.problems(for: .draft)
        problems += rules.filter { !readProblems.contains($0.path) }
        return (campaign, problems)
    }

    private func renderComposer(
        _ context: RequestContext, form: FormData, problems: [FieldProblem], stored: StoredCampaign?,
        conflict: ConflictView? = nil, status: Int = 200
    ) throws -> Response {
        let isNew = stored == nil
        let localizer = context.localizer
        let model = ComposerView(
            form: form, problems: problems,
            heading: stored.map { localizer("composer.heading_edit", ["name": Localizer.isolated($0.campaign.name)]) } ?? localizer("composer.heading_new"),
            action: isNew ? "/campaigns" : "/campaigns/\(stored?.id ?? 0)", isNew: isNew,
            revision: form["revision"].flatMap(Int.init), isLive: stored.map { $0.state == .published || $0.state == .paused } ?? false,
            apps: try services.database.apps.all(), conflict: conflict, localizer: localizer)
        return try services.page(.composer, title: model.heading, model: model, context: context, status: status)
    }

    // MARK: Review and lifecycle

    func show(_ context: RequestContext) throws -> Response {
        try renderSummary(context, stored: try campaign(context), problems: [])
    }

    func publish(_ context: RequestContext) throws -> Response {
        try perform(.publish, context, message: { "“\($0)” is published." })
    }

    func pause(_ context: RequestContext) throws -> Response {
        try perform(.pause, context, message: { "“\($0)” is paused: devices stop showing it." })
    }

    func resume(_ context: RequestContext) throws -> Response {
        try perform(.resume, context, message: { "“\($0)” is live again." })
    }

    func stop(_ context: RequestContext) throws -> Response {
        try perform(.stop, context, message: { "“\($0)” has ended." })
    }

    func archive(_ context: RequestContext) throws -> Response {
        try perform(.archive, context, message: { "“\($0)” is archived." })
    }

    private func perform(_ action: CampaignLifecycle.Action, _ context: RequestContext, message: (String) -> String) throws -> Response {
        let stored = try campaign(context)
        do {
            try CampaignLifecycle(store: store).perform(action, on: stored, actor: context.actor, now: context.now)
            try services.flash(context, .success, message(stored.campaign.name))
        } catch CampaignLifecycle.Failure.invalid(let problems) {
            return try renderSummary(context, stored: stored, problems: problems, status: 422)
        } catch CampaignLifecycle.Failure.notAllowed(let reason) {
            try services.flash(context, .error, reason)
        } catch CampaignLifecycle.Failure.stale {
            try services.flash(context, .error, "Someone changed this campaign a moment ago. Review it and try again.")
        }
        return .redirect(to: "/campaigns/\(stored.id)")
    }

    func duplicate(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        var copy = stored.campaign
        copy.id = nil
        copy.name = String("\(copy.name) (copy)".prefix(CampaignLimits.nameLength))
        let id = try store.create(copy, state: .draft, actor: context.actor, now: context.now)
        try services.flash(context, .success, "This draft is a copy of “\(stored.campaign.name)”.")
        return .redirect(to: "/campaigns/\(id)")
    }

    struct DeleteConfirmation: Sendable {
        let id: Int64
        let name: String
    }

    func confirmDelete(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        guard stored.state == .draft else { throw HTTPError(409, "Only drafts can be deleted; archive published campaigns instead.") }
        return try services.page(.deleteCampaign, title: "Delete “\(stored.campaign.name)”?",
                                 model: DeleteConfirmation(id: stored.id, name: stored.campaign.name), context: context)
    }

    func delete(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        guard try store.deleteDraft(id: stored.id, actor: context.actor, now: context.now) else {
            throw HTTPError(409, "Only drafts can be deleted; archive published campaigns instead.")
        }
        try services.flash(context, .success, "The draft “\(stored.campaign.name)” is deleted.")
        return .redirect(to: "/campaigns")
    }

    private func renderSummary(_ context: RequestContext, stored: StoredCampaign, problems: [FieldProblem], status: Int = 200) throws -> Response {
        let app = try services.database.apps.find(id: stored.campaign.app)
        let model = CampaignSummaryView(
            stored: stored, appName: app?.name ?? "App \(stored.campaign.app)", now: context.now,
            canEdit: context.user?.role.includes(.editor) ?? false, problems: problems)
        return try services.page(.campaign, title: stored.campaign.name, model: model, context: context, status: status)
    }

    // MARK: History

    struct HistoryEntry: Sendable {
        let revision: Int
        let title: String
        let byline: String
        let caption: String
        let state: String
        let stateTitle: String
        let changes: [ChangeRow]
        let first: Bool
    }

    struct HistoryView: Sendable {
        let id: Int64
        let name: String
        let heading: String
        let entries: [HistoryEntry]
    }

    func history(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        let localizer = context.localizer
        let revisions = try store.revisions(id: stored.id)
        let entries = revisions.enumerated().map { index, revision in
            let previous = index + 1 < revisions.count ? revisions[index + 1] : nil
            let number = localizer.number(revision.revision)
            return HistoryEntry(
                revision: revision.revision, title: localizer("composer.history.revision", ["number": number]),
                byline: localizer("composer.history.byline", [
                    "author": Localizer.isolated(revision.author), "time": localizer.dateTime(revision.createdAt),
                ]),
                caption: localizer("composer.history.caption", ["number": number]),
                state: revision.state.rawValue, stateTitle: revision.state.title,
                changes: previous == nil ? [] : CampaignDiff.changes(from: previous, to: revision, localizer),
                first: previous == nil)
        }
        let heading = localizer("composer.history.title", ["name": Localizer.isolated(stored.campaign.name)])
        return try services.page(.campaignHistory, title: heading,
                                 model: HistoryView(id: stored.id, name: stored.campaign.name, heading: heading, entries: entries), context: context)
    }

    private func campaign(_ context: RequestContext) throws -> StoredCampaign {
        guard let stored = try store.find(id: try context.id("id")) else { throw HTTPError.notFound }
        return stored
    }

    static func scheduleText(start: Date?, end: Date?) -> String {
        let from = start.map { "from \(DisplayTime.dateTime($0))" } ?? "from publishing"
        let until = end.map { ", until \(DisplayTime.dateTime($0))" } ?? ""
        return from + until
    }
}
