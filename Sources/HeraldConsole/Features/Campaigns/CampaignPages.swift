import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/campaigns`: list, compose, review, publish and manage campaigns.
struct CampaignPages: Sendable {
    let services: Services
    static let pageSize = 25

    private var store: any CampaignStore { services.database.campaigns }

    // MARK: List

    struct ListRow: Sendable {
        let id: Int64
        let name: String
        let status: String
        let statusTitle: String
        let layout: String
        let app: String
        let priority: String
        /// HTML: times in `<time>`.
        let schedule: String
        let editedBy: String
        /// HTML: a `<time>`.
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
        let filter = CampaignQuery.read(query, pageSize: Self.pageSize).query
        let (campaigns, total) = try store.list(filter, now: context.now)
        let apps = try services.database.apps.all()
        let role = context.user?.role ?? .viewer
        let localizer = context.localizer
        let rows = campaigns.map {
            ListRow(
                id: $0.id, name: $0.name, status: $0.status.rawValue, statusTitle: localizer.title($0.status),
                layout: $0.layout == Campaign.pushLayout ? localizer("common.push_notification")
                    : Message.Layout(rawValue: $0.layout).map(localizer.title) ?? $0.layout,
                app: $0.appName, priority: localizer.number($0.priority), schedule: Self.scheduleText(start: $0.startAt, end: $0.endAt, localizer),
                editedBy: localizer.actorMarkup($0.updatedBy), editedAt: localizer.timeMarkup($0.updatedAt))
        }
        func href(page: Int) -> String {
            var pairs = query.pairs.filter { $0.name != "page" }.map { ($0.name, $0.value) }
            pairs.append(("page", String(page)))
            return "/campaigns?" + FormData(pairs).urlencoded
        }
        let model = ListView(
            rows: rows, countText: localizer.plural("campaigns.index.count", count: total), hasApps: !apps.isEmpty, canEdit: role.includes(.editor), canRegisterApps: role.includes(.admin),
            filtered: filter.appID != nil || filter.status != nil || !filter.search.isEmpty, search: filter.search,
            exportHref: "/campaigns/export?" + FormData(query.pairs.filter { ["app", "status", "q"].contains($0.name) }.map { ($0.name, $0.value) }).urlencoded,
            apps: [SelectOption(value: "", label: localizer("common.all_apps"), selected: filter.appID == nil)]
                + apps.map { SelectOption(value: String($0.id), label: $0.name, selected: $0.id == filter.appID) },
            statuses: [SelectOption(value: "", label: localizer("campaigns.index.any_state"), selected: filter.status == nil)]
                + CampaignStatus.allCases.map { SelectOption(value: $0.rawValue, label: localizer.title($0), selected: $0 == filter.status) },
            sorts: [
                ("updated", "campaigns.index.sort_updated"), ("name", "common.name"), ("priority", "campaigns.index.column_priority"),
                ("start", "campaigns.index.sort_start"),
            ].map {
                SelectOption(value: $0.0, label: localizer($0.1), selected: $0.0 == filter.sort.rawValue)
            },
            pagination: PaginationView.make(page: filter.page, pageSize: Self.pageSize, total: total, localizer: localizer, href: href(page:)))
        return try services.page(.campaigns, title: localizer("campaigns.index.title"), model: model, context: context)
    }

    // MARK: Compose

    func new(_ context: RequestContext) throws -> Response {
        let apps = try services.database.apps.all()
        guard !apps.isEmpty else {
            try services.flash(context, .info, context.localizer("campaigns.flash.register_app_first"))
            return .redirect(to: context.user?.role.includes(.admin) == true ? "/apps/new" : "/campaigns")
        }
        let channel = Channel(rawValue: context.request.query["channel"] ?? "") ?? .inApp
        // A schedule is first written in the marketer's own zone (their settings, else the browser's at their
        // first sign-in): a UTC default made every "9:00" a guess at an offset.
        var form = FormData([
            (ComposerFields.channel.path, channel.rawValue), ("priority", "5"), ("frequency.type", "once"),
            (ComposerFields.timeZone.path, context.user?.timeZone ?? "UTC"),
        ])
        if channel == .inApp { form.pairs.append((ComposerFields.layout.path, Message.Layout.card.rawValue)) }
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
            return try renderComposer(context, form: form, problems: [FieldProblem(path: "app", key: "app_required")], stored: nil, status: 422)
        }
        let publish = intent == Self.publishIntent || intent == Self.publishAnywayIntent
        let (campaign, problems) = decode(form, app: appID, publish: publish, context)
        guard problems.isEmpty else { return try renderComposer(context, form: form, problems: problems, stored: nil, status: 422) }
        if intent == Self.publishIntent, let warnings = try publishWarnings(campaign, id: nil, context) {
            return try renderComposer(context, form: form, problems: [], stored: nil, publishWarnings: warnings)
        }
        let id = try store.create(campaign, state: publish ? .published : .draft, actor: context.actor, now: context.now)
        try services.flash(context, .success, context.localizer(
            publish ? "campaigns.flash.published" : "campaigns.flash.saved_draft", ["name": context.localizer.quoted(campaign.name)]))
        return .redirect(to: "/campaigns/\(id)")
    }

    func edit(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        guard stored.state != .archived else {
            throw HTTPError(409, context.localizer("campaigns.errors.archived_not_editable"))
        }
        var form = CampaignForm.encode(stored.campaign)
        form.pairs.append(("revision", String(stored.revision)))
        return try renderComposer(context, form: form, problems: [], stored: stored)
    }

    func update(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        guard stored.state != .archived else {
            throw HTTPError(409, context.localizer("campaigns.errors.archived_not_editable"))
        }
        var form = context.form
        // A saved campaign keeps its app and its channel, whatever the form says.
        form.pairs.removeAll { $0.name == ComposerFields.app.path || $0.name == ComposerFields.channel.path }
        form.pairs.append((ComposerFields.app.path, String(stored.campaign.app)))
        form.pairs.append((ComposerFields.channel.path, stored.campaign.channel.rawValue))
        let intent = form["intent"] ?? "draft"
        if let (changed, problems) = rearranged(form, intent: intent, context) {
            return try renderComposer(context, form: changed, problems: problems, stored: stored, status: problems.isEmpty ? 200 : 422)
        }
        let publishing = (intent == Self.publishIntent || intent == Self.publishAnywayIntent) && stored.state == .draft
        // A live campaign is on devices: every save must keep it publishable.
        let live = stored.state == .published || stored.state == .paused
        var (campaign, problems) = decode(form, app: stored.campaign.app, publish: publishing || live, context)
        campaign.id = stored.id
        guard problems.isEmpty else { return try renderComposer(context, form: form, problems: problems, stored: stored, status: 422) }
        if publishing && intent == Self.publishIntent, let warnings = try publishWarnings(campaign, id: stored.id, context) {
            return try renderComposer(context, form: form, problems: [], stored: stored, publishWarnings: warnings)
        }
        guard let base = form["revision"].flatMap(Int.init) else {
            throw HTTPError(400, context.localizer("composer.errors.lost_revision"))
        }
        do {
            try store.update(campaign, expectedRevision: base, state: publishing ? .published : nil, actor: context.actor, now: context.now)
        } catch CampaignStoreError.staleRevision(_, let current) {
            return try renderConflict(context, form: form, stored: stored, base: base, current: current)
        }
        try services.flash(context, .success, context.localizer(
            publishing ? "campaigns.flash.published" : "campaigns.flash.saved_changes", ["name": context.localizer.quoted(campaign.name)]))
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
            author: Array(Set(newer.map(\.author))).sorted().map(context.localizer.actor).joined(separator: ", "),
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

    /// `POST /campaigns/push-bytes`: the notification the composer's form now holds, measured against each
    /// provider's limit, for the counters its script updates as the marketer types.
    func pushBytes(_ context: RequestContext) throws -> Response {
        var (campaign, _) = CampaignForm.decode(context.form, app: 0)
        campaign.id = context.form[ComposerView.campaignIDName].flatMap(Int64.init)
        var response = Response.json(try PushBytesView.json(PushBytesView.all(campaign, context.localizer)))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// `POST /campaigns/audience`: how many registered installations the composer's targeting reaches now,
    /// worded for the line its script updates as the marketer changes targeting (`{"text": "…"}`, empty
    /// before an app is chosen or while a targeting field is wrong).
    func audience(_ context: RequestContext) throws -> Response {
        let text = try AudienceView.text(
            for: context.form, appID: context.form["app"].flatMap(Int64.init), estimator: services.audience, localizer: context.localizer, now: context.now)
        var response = Response.json(Array(try JSONSerialization.data(withJSONObject: ["text": text ?? ""])))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    private func decode(_ form: FormData, app: Int64, publish: Bool, _ context: RequestContext) -> (Campaign, [FieldProblem]) {
        var (campaign, problems) = CampaignForm.decode(form, app: app)
        let readProblems = Set(problems.map(\.path))
        let rules = publish ? CampaignLifecycle.publishProblems(campaign, now: context.now) : campaign.problems(for: .draft)
        problems += rules.filter { !readProblems.contains($0.path) }
        return (campaign, problems)
    }

    /// The composer's buttons: publish, and publish though the app cannot reach its devices (after being told).
    static let publishIntent = "publish"
    static let publishAnywayIntent = "publish_anyway"

    private func renderComposer(
        _ context: RequestContext, form: FormData, problems: [FieldProblem], stored: StoredCampaign?,
        conflict: ConflictView? = nil, publishWarnings: [String]? = nil, status: Int = 200
    ) throws -> Response {
        let localizer = context.localizer
        let newHeading = Channel(form: form) == .push ? "composer.heading_new_push" : "composer.heading_new"
        let apps = try services.database.apps.all()
        // The app the form names, or the one its menu shows first (`ComposerView`).
        let appID = form["app"].flatMap(Int64.init) ?? stored?.campaign.app ?? apps.first?.id
        let model = ComposerView(
            form: form, problems: problems,
            heading: stored.map { localizer("composer.heading_edit", ["name": Localizer.isolated($0.campaign.name)]) } ?? localizer(newHeading),
            action: stored.map { "/campaigns/\($0.id)" } ?? "/campaigns", campaignID: stored?.id,
            revision: form["revision"].flatMap(Int.init), isLive: stored.map { $0.state == .published || $0.state == .paused } ?? false,
            apps: apps, conflict: conflict, publishWarnings: publishWarnings,
            audience: try AudienceView.text(for: form, appID: appID, estimator: services.audience, localizer: localizer, now: context.now),
            localizer: localizer)
        return try services.page(.composer, title: model.heading, model: model, context: context, status: status)
    }

    // MARK: Review and lifecycle

    func show(_ context: RequestContext) throws -> Response {
        try renderSummary(context, stored: try campaign(context), problems: [])
    }

    struct PublishConfirmation: Sendable {
        let id: Int64
        let heading: String
        let warnings: [String]
        /// Push campaigns are asked about in the words of sending; in-app ones in those of showing.
        let isPush: Bool
        /// Whom publishing sends to, for a push draft (`pushDraftAudience`).
        let audience: String?
    }

    /// For a push draft, how many registered installations publishing would send to, said beside Publish
    /// and on its confirmation; nil for any other campaign.
    private func pushDraftAudience(_ stored: StoredCampaign, _ context: RequestContext) throws -> String? {
        guard stored.campaign.channel == .push, stored.state == .draft else { return nil }
        return try AudienceView.text(for: stored.campaign, estimator: services.audience, localizer: context.localizer, now: context.now)
    }

    /// Publishes; a push campaign whose app cannot reach its devices is first shown with what is missing, and
    /// published when that page's button confirms it (`confirmed`).
    func publish(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        if stored.state == .draft && context.form["confirmed"] != "yes",
           let warnings = try publishWarnings(stored.campaign, id: stored.id, context) {
            let heading = context.localizer("campaigns.publish_check.title", ["name": context.localizer.quoted(stored.campaign.name)])
            return try services.page(
                .confirmPublish, title: heading, model: PublishConfirmation(
                    id: stored.id, heading: heading, warnings: warnings, isPush: stored.campaign.channel == .push,
                    audience: try pushDraftAudience(stored, context)),
                context: context)
        }
        return try perform(.publish, context, message: "campaigns.flash.published")
    }

    /// What publishing `campaign` (stored as `id`) now would leave unreached, in the reader's language; nil when nothing.
    private func publishWarnings(_ campaign: Campaign, id: Int64?, _ context: RequestContext) throws -> [String]? {
        let warnings = try localizedWarnings(campaign, id: id, context)
        return warnings.isEmpty ? nil : warnings
    }

    private func localizedWarnings(_ campaign: Campaign, id: Int64?, _ context: RequestContext) throws -> [String] {
        let warnings = try CampaignWarning.warnings(for: campaign, id: id, services: services, now: context.now)
        guard !warnings.isEmpty else { return [] }
        let app = try services.database.apps.find(id: campaign.app)?.name ?? String(campaign.app)
        return warnings.map { $0.localized(context.localizer, app: app) }
    }

    func pause(_ context: RequestContext) throws -> Response {
        try perform(.pause, context, message: "campaigns.flash.paused")
    }

    func resume(_ context: RequestContext) throws -> Response {
        try perform(.resume, context, message: "campaigns.flash.resumed")
    }

    func stop(_ context: RequestContext) throws -> Response {
        try perform(.stop, context, message: "campaigns.flash.ended")
    }

    func archive(_ context: RequestContext) throws -> Response {
        try perform(.archive, context, message: "campaigns.flash.archived")
    }

    /// `message` is the key of the sentence that says it is done, with the campaign's `{name}`.
    private func perform(_ action: CampaignLifecycle.Action, _ context: RequestContext, message: String) throws -> Response {
        let stored = try campaign(context)
        let localizer = context.localizer
        do {
            try CampaignLifecycle(store: store, changed: services.push.campaignChanged).perform(action, on: stored, actor: context.actor, now: context.now)
            try services.flash(context, .success, localizer(message, ["name": localizer.quoted(stored.campaign.name)]))
        } catch CampaignLifecycle.Failure.invalid(let problems) {
            return try renderSummary(context, stored: stored, problems: problems, status: 422)
        } catch CampaignLifecycle.Failure.notAllowed {
            try services.flash(context, .error, localizer(
                "campaigns.errors.not_allowed." + action.rawValue, ["status": localizer.title(stored.status(at: context.now))]))
        } catch CampaignLifecycle.Failure.stale {
            try services.flash(context, .error, localizer("campaigns.flash.stale"))
        }
        return .redirect(to: "/campaigns/\(stored.id)")
    }

    func duplicate(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        var copy = stored.campaign
        copy.id = nil
        copy.name = context.localizer("campaigns.copy_name", ["name": copy.name]).prefix(scalars: CampaignLimits.nameLength)
        let id = try store.create(copy, state: .draft, actor: context.actor, now: context.now)
        try services.flash(context, .success, context.localizer("campaigns.flash.duplicated", ["name": context.localizer.quoted(stored.campaign.name)]))
        return .redirect(to: "/campaigns/\(id)")
    }

    struct DeleteConfirmation: Sendable {
        let id: Int64
        /// HTML: the question, the name isolated.
        let heading: String
    }

    func confirmDelete(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        let localizer = context.localizer
        guard stored.state == .draft else { throw HTTPError(409, localizer("campaigns.errors.only_drafts_delete")) }
        let name = stored.campaign.name
        return try services.page(
            .deleteCampaign, title: localizer("campaigns.delete.title", ["name": localizer.quoted(name)]),
            model: DeleteConfirmation(id: stored.id, heading: localizer.markup("campaigns.delete.title", ["name": localizer.quotedMarkup(name)])),
            context: context)
    }

    func delete(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        guard try store.deleteDraft(id: stored.id, actor: context.actor, now: context.now) else {
            throw HTTPError(409, context.localizer("campaigns.errors.only_drafts_delete"))
        }
        try services.flash(context, .success, context.localizer("campaigns.flash.deleted", ["name": context.localizer.quoted(stored.campaign.name)]))
        return .redirect(to: "/campaigns")
    }

    /// The campaign's page; `problems` say why it cannot be published (or, with `errorsTitle`, sent as a
    /// test), and `testSend` keeps the devices a refused test chose, with why it was refused.
    func renderSummary(
        _ context: RequestContext, stored: StoredCampaign, problems: [FieldProblem], errorsTitle: String? = nil,
        testSend: (chosen: Set<String>, error: String?) = ([], nil), status: Int = 200
    ) throws -> Response {
        let app = try services.database.apps.find(id: stored.campaign.app)
        var push: PushProgressView?
        if stored.campaign.channel == .push {
            let progress = try services.database.pushOutbox.progress(campaignID: stored.id)
            // From publishing on: the fan-out may not have begun when the page first shows.
            if stored.state != .draft || progress.planned > 0 {
                push = PushProgressView(
                    campaignID: stored.id, progress: progress, failures: try services.database.pushOutbox.failures(campaignID: stored.id),
                    localizer: context.localizer)
            }
        }
        let role = context.user?.role ?? .viewer
        let tests = TestSendPanel(
            stored: stored, testDevices: try services.database.apps.testDevices(appID: stored.campaign.app),
            sends: try services.database.testSends.recent(campaignID: stored.id, limit: TestSendPanel.shown), canSend: role.includes(.editor),
            canAddDevices: role.includes(.admin), chosen: testSend.chosen, error: testSend.error, now: context.now, localizer: context.localizer)
        let model = CampaignSummaryView(
            stored: stored, appName: app?.name ?? context.localizer("campaigns.show.app_number", ["id": String(stored.campaign.app)]), now: context.now,
            canEdit: role.includes(.editor), problems: problems, errorsTitle: errorsTitle, push: push, testSends: tests,
            audience: try pushDraftAudience(stored, context), warnings: try summaryWarnings(stored, context), localizer: context.localizer)
        return try services.page(.campaign, title: stored.campaign.name, model: model, context: context, status: status)
    }

    /// For a draft, or a campaign that is live and not yet ended, what may keep it from showing.
    private func summaryWarnings(_ stored: StoredCampaign, _ context: RequestContext) throws -> [String] {
        guard [.draft, .scheduled, .running, .paused].contains(stored.status(at: context.now)) else { return [] }
        return try localizedWarnings(stored.campaign, id: stored.id, context)
    }

    // MARK: History

    struct HistoryEntry: Sendable {
        let revision: Int
        /// "Revision 3", in the language's digits.
        let heading: String
        /// HTML: who saved it, and when.
        let byline: String
        let caption: String
        let state: String
        let stateTitle: String
        let changes: [ChangeRow]
        let first: Bool
    }

    struct HistoryView: Sendable {
        let id: Int64
        /// HTML: the heading, the name isolated.
        let heading: String
        let entries: [HistoryEntry]
    }

    func history(_ context: RequestContext) throws -> Response {
        let stored = try campaign(context)
        let revisions = try store.revisions(id: stored.id)
        let localizer = context.localizer
        let entries = revisions.enumerated().map { index, revision in
            let previous = index + 1 < revisions.count ? revisions[index + 1] : nil
            let number = localizer.number(revision.revision)
            return HistoryEntry(
                revision: revision.revision, heading: localizer("campaigns.history.revision", ["revision": number]),
                byline: localizer.markup("campaigns.history.by", ["name": localizer.actorMarkup(revision.author), "time": localizer.timeMarkup(revision.createdAt)]),
                caption: localizer("campaigns.history.changes", ["revision": number]),
                state: revision.state.rawValue, stateTitle: localizer.title(revision.state),
                changes: previous == nil ? [] : CampaignDiff.changes(from: previous, to: revision, localizer),
                first: previous == nil)
        }
        let name = stored.campaign.name
        return try services.page(
            .campaignHistory, title: localizer("campaigns.history.title", ["name": Localizer.isolated(name)]),
            model: HistoryView(id: stored.id, heading: localizer.markup("campaigns.history.title", ["name": Markup.user(name)]), entries: entries),
            context: context)
    }

    private func campaign(_ context: RequestContext) throws -> StoredCampaign {
        guard let stored = try store.find(id: try context.id("id")) else { throw HTTPError.notFound }
        return stored
    }

    /// HTML: when a campaign of the list runs, in the user's zone.
    static func scheduleText(start: Date?, end: Date?, _ localizer: Localizer) -> String {
        switch (start, end) {
        case (let start?, let end?):
            localizer.markup("campaigns.index.from_until", ["start": localizer.timeMarkup(start), "end": localizer.timeMarkup(end)])
        case (let start?, nil):
            localizer.markup("campaigns.index.from", ["start": localizer.timeMarkup(start)])
        case (nil, let end?):
            localizer.markup("campaigns.index.publishing_until", ["end": localizer.timeMarkup(end)])
        case (nil, nil):
            Markup.escape(localizer("campaigns.index.from_publishing"))
        }
    }
}
