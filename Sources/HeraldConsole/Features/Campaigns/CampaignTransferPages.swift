import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// Export campaigns as a JSON download; import a JSON file, or only check it first.
struct CampaignTransferPages: Sendable {
    let services: Services

    private var transfer: CampaignTransfer { CampaignTransfer(database: services.database) }

    func exportOne(_ context: RequestContext) throws -> Response {
        let id = try context.id("id")
        guard let stored = try services.database.campaigns.find(id: id) else { throw HTTPError.notFound }
        var campaign = stored.campaign
        campaign.status = stored.status(at: context.now)
        let export = CampaignExport(schemaVersion: CampaignJSON.schemaVersion, exportedAt: context.now, campaigns: [campaign])
        return try download(export, filename: "campaign-\(id).json")
    }

    /// The list's filters apply: what you see is what you export. Streamed, whatever the number of campaigns.
    func exportList(_ context: RequestContext) throws -> Response {
        // The export streams every campaign the filters let through, whatever the page.
        let filter = CampaignQuery.read(context.request.query).query
        var response = Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]),
                                stream: transfer.exportStream(filter, now: context.now))
        response.headers.add("Content-Disposition", Self.attachment("campaigns-\(UTCTime.day(context.now)).json"))
        return response
    }

    private func download(_ export: CampaignExport, filename: String) throws -> Response {
        var response = Response.json(Array(try transfer.encode(export)))
        response.headers.add("Content-Disposition", Self.attachment(filename))
        return response
    }

    private static func attachment(_ filename: String) -> String {
        "attachment; filename=\"\(filename)\""
    }

    struct ImportView: Sendable {
        struct Planned: Sendable {
            let name: String
            let layout: String
        }

        struct CampaignProblems: Sendable {
            /// HTML: "Campaign 2: <name>".
            let heading: String
            let problems: [FieldProblemRow]
        }

        struct FieldProblemRow: Sendable {
            let path: String
            let message: String
        }

        let apps: [SelectOption]
        let dryRun: Bool
        let fileError: String?
        let appError: String?
        let checked: Bool
        let planned: [Planned]
        let failing: [CampaignProblems]
        let canImport: Bool
    }

    func importForm(_ context: RequestContext) throws -> Response {
        // The first submit of a valid file imports it: checking only is the option a careful user ticks.
        try render(context, appID: context.request.query["app"].flatMap(Int64.init), dryRun: false, plan: nil, fileError: nil, appError: nil)
    }

    func importFile(_ context: RequestContext) throws -> Response {
        let parts = (try? context.request.multipartParts()) ?? []
        let dryRun = context.form["dryRun"] == "true"
        let appID = context.form["app"].flatMap(Int64.init)
        let localizer = context.localizer
        guard let appID, try services.database.apps.find(id: appID) != nil else {
            return try render(context, appID: nil, dryRun: dryRun, plan: nil, fileError: nil,
                              appError: localizer("campaigns.import.choose_app"), status: 422)
        }
        guard let file = parts.first(where: { $0.name == "file" && !$0.body.isEmpty }) else {
            return try render(context, appID: appID, dryRun: dryRun, plan: nil,
                              fileError: localizer("campaigns.import.choose_file"), appError: nil, status: 422)
        }
        let plan = try transfer.plan(Data(file.body), appID: appID)
        if dryRun || !plan.canImport {
            return try render(context, appID: appID, dryRun: dryRun, plan: plan, fileError: plan.unreadableReason.map { Self.sentence($0, localizer) },
                              appError: nil, status: plan.canImport ? 200 : 422)
        }
        let ids = try transfer.apply(plan, actor: context.actor, now: context.now)
        try services.flash(context, .success, localizer.plural("campaigns.import.imported", count: ids.count))
        return .redirect(to: "/campaigns?app=\(appID)&status=draft")
    }

    private func render(
        _ context: RequestContext, appID: Int64?, dryRun: Bool, plan: ImportPlan?, fileError: String?, appError: String?, status: Int = 200
    ) throws -> Response {
        let apps = try services.database.apps.all()
        let localizer = context.localizer
        let failing = Dictionary(grouping: plan?.problems ?? [], by: \.campaign).sorted { $0.key < $1.key }.map { number, problems in
            ImportView.CampaignProblems(
                heading: localizer.markup("campaigns.import.campaign", [
                    "number": Markup.escape(localizer.number(number)), "name": Markup.user(problems.first?.name ?? ""),
                ]),
                problems: problems.map {
                    ImportView.FieldProblemRow(path: $0.path, message: $0.text.flatMap(localizer.message(for:)) ?? $0.message)
                })
        }
        let model = ImportView(
            apps: apps.map { SelectOption(value: String($0.id), label: $0.name, selected: $0.id == (appID ?? apps.first?.id)) },
            dryRun: dryRun, fileError: fileError, appError: appError, checked: plan != nil,
            planned: plan?.campaigns.map { ImportView.Planned(name: $0.name, layout: localizer.title($0.message.layout)) } ?? [],
            failing: failing, canImport: plan?.canImport ?? false)
        return try services.page(.importCampaigns, title: localizer("campaigns.import.title"), model: model, context: context, status: status)
    }

    /// Why a file could not be read, in the user's language.
    static func sentence(_ reason: ImportPlan.Unreadable, _ localizer: Localizer) -> String {
        switch reason {
        case .noApp(let id): localizer("campaigns.import.no_app", ["id": String(id)])
        case .noCampaigns: localizer("campaigns.import.no_campaigns")
        case .newerVersion(let version):
            localizer("campaigns.import.newer_version", [
                "version": localizer.number(version), "supported": localizer.number(CampaignJSON.schemaVersion),
            ])
        case .malformed(_, let field?, _):
            localizer("campaigns.import.unreadable", ["reason": Localizer.isolated(field.path) + ": " + localizer.message(for: field)])
        case .malformed(_, nil, let phrase?):
            localizer("campaigns.import.unreadable", ["reason": localizer(phrase)])
        case .malformed:
            // The JSON reader's own reason is English only; the API and the command line give it.
            localizer("campaigns.import.not_json")
        }
    }
}
