import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// Export campaigns as a JSON download; import a JSON file, with a dry run first.
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
        let query = context.request.query
        var filter = CampaignQuery()
        filter.appID = query["app"].flatMap(Int64.init)
        filter.status = query["status"].flatMap(CampaignStatus.init(rawValue:))
        filter.search = query["q"] ?? ""
        var response = Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]),
                                stream: transfer.exportStream(filter, now: context.now))
        response.headers.add("Content-Disposition", Self.attachment("campaigns-\(DisplayTime.date(context.now)).json"))
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
            let number: Int
            let name: String
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
        try render(context, appID: context.request.query["app"].flatMap(Int64.init), dryRun: true, plan: nil, fileError: nil, appError: nil)
    }

    func importFile(_ context: RequestContext) throws -> Response {
        let parts = (try? context.request.multipartParts()) ?? []
        let dryRun = context.form["dryRun"] == "true"
        let appID = context.form["app"].flatMap(Int64.init)
        guard let appID, try services.database.apps.find(id: appID) != nil else {
            return try render(context, appID: nil, dryRun: dryRun, plan: nil, fileError: nil, appError: "Choose the app to import into.", status: 422)
        }
        guard let file = parts.first(where: { $0.name == "file" && !$0.body.isEmpty }) else {
            return try render(context, appID: appID, dryRun: dryRun, plan: nil,
                              fileError: "Choose a JSON file exported from Herald.", appError: nil, status: 422)
        }
        let plan = try transfer.plan(Data(file.body), appID: appID)
        if dryRun || !plan.canImport {
            return try render(context, appID: appID, dryRun: dryRun, plan: plan, fileError: plan.unreadable, appError: nil,
                              status: plan.canImport ? 200 : 422)
        }
        let ids = try transfer.apply(plan, actor: context.actor, now: context.now)
        try services.flash(context, .success, ids.count == 1 ? "Imported 1 campaign as a draft." : "Imported \(ids.count) campaigns as drafts.")
        return .redirect(to: "/campaigns?app=\(appID)&status=draft")
    }

    private func render(
        _ context: RequestContext, appID: Int64?, dryRun: Bool, plan: ImportPlan?, fileError: String?, appError: String?, status: Int = 200
    ) throws -> Response {
        let apps = try services.database.apps.all()
        let failing = Dictionary(grouping: plan?.problems ?? [], by: \.campaign).sorted { $0.key < $1.key }.map { number, problems in
            ImportView.CampaignProblems(
                number: number, name: problems.first?.name ?? "",
                problems: problems.map { ImportView.FieldProblemRow(path: $0.path, message: $0.message) })
        }
        let model = ImportView(
            apps: apps.map { SelectOption(value: String($0.id), label: $0.name, selected: $0.id == (appID ?? apps.first?.id)) },
            dryRun: dryRun, fileError: fileError, appError: appError, checked: plan != nil,
            planned: plan?.campaigns.map { ImportView.Planned(name: $0.name, layout: $0.message.layout.title) } ?? [],
            failing: failing, canImport: plan?.canImport ?? false)
        return try services.page(.importCampaigns, title: "Import campaigns", model: model, context: context, status: status)
    }
}
