import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/api/v1/campaigns`: the management API. A key sees and changes only its own app's campaigns.
struct CampaignAPI: Sendable {
    let services: Services

    private var store: any CampaignStore { services.database.campaigns }

    struct Page: Encodable {
        let campaigns: [Campaign]
        let page: Int
        let pageSize: Int
        let total: Int
    }

    func list(_ context: RequestContext, key: APIKey) throws -> Response {
        var (filter, problems) = CampaignQuery.read(context.request.query, pageSize: 50, maxPageSize: 200)
        switch problems.first {
        case .unknownStatus(let status):
            throw HTTPError(400, "Unknown status “\(status)”: use \(CampaignStatus.allCases.map(\.rawValue).joined(separator: ", ")).")
        case .unknownSort(let sort):
            throw HTTPError(400, "Unknown sort “\(sort)”: use \(CampaignQuery.Sort.allCases.map(\.rawValue).joined(separator: ", ")).")
        case .notPositive(let name):
            throw HTTPError(400, "`\(name)` must be a whole number from 1.")
        case nil:
            break
        }
        // A key lists its own app's campaigns, whatever `app` says.
        filter.appID = key.appID
        let (summaries, total) = try store.list(filter, now: context.now)
        let campaigns = try summaries.compactMap { try store.find(id: $0.id) }.map { document($0, now: context.now) }
        return try json(Page(campaigns: campaigns, page: filter.page, pageSize: filter.pageSize, total: total))
    }

    func create(_ context: RequestContext, key: APIKey) throws -> Response {
        var campaign = try decodeBody(context)
        try key.requireOwnApp(campaign.app)
        campaign.id = nil
        try validate(campaign, publish: false, now: context.now)
        let id = try store.create(campaign, state: .draft, actor: context.actor, now: context.now)
        var response = try answer(try services.campaign(id, key: key), now: context.now, status: 201)
        response.headers.add("Location", "/api/v1/campaigns/\(id)")
        return response
    }

    func show(_ context: RequestContext, key: APIKey) throws -> Response {
        try answer(try services.campaign(addressedBy: context, key: key), now: context.now)
    }

    func replace(_ context: RequestContext, key: APIKey) throws -> Response {
        let current = try services.campaign(addressedBy: context, key: key)
        var campaign = try decodeBody(context)
        if campaign.app != current.campaign.app {
            throw HTTPError(422, "A campaign cannot move to another app.", fields: [FieldProblem("app", "Keep \(current.campaign.app).")])
        }
        if let ifMatch = context.request.headers["If-Match"] {
            guard let condition = EntityTagCondition(ifMatch) else {
                throw HTTPError(400, "If-Match must be `*` or ETags this API gave, such as \"r3\".")
            }
            // RFC 9110 §13.1.1: `*` matches any current campaign; ETags are compared strongly (W/ never matches).
            guard condition.matchesStrongly(Self.etag(revision: current.revision)) else {
                if case .tags(let tags) = condition, tags.count == 1, let revision = Self.revision(fromETag: tags[0]) {
                    throw HTTPError(412, "The campaign changed since revision \(revision); it is at revision \(current.revision). GET it again and reapply your change.")
                }
                throw HTTPError(412, "No ETag in If-Match is the campaign's current one, \(Self.etag(revision: current.revision)). GET it again and reapply your change.")
            }
        }
        let expected = current.revision
        campaign.id = current.id
        // A live campaign is on devices: every change must keep it publishable.
        try validate(campaign, publish: current.state == .published || current.state == .paused, now: context.now)
        do {
            try store.update(campaign, expectedRevision: expected, actor: context.actor, now: context.now)
        } catch CampaignStoreError.staleRevision(_, let now) {
            throw HTTPError(412, "The campaign changed while you saved; it is at revision \(now). GET it again and reapply your change.")
        }
        return try answer(try services.campaign(current.id, key: key), now: context.now)
    }

    func delete(_ context: RequestContext, key: APIKey) throws -> Response {
        let current = try services.campaign(addressedBy: context, key: key)
        guard try store.deleteDraft(id: current.id, actor: context.actor, now: context.now) else {
            throw HTTPError(409, "Only drafts can be deleted; this campaign is \(current.status(at: context.now).rawValue). Archive it instead.")
        }
        return Response(status: 204)
    }

    /// `POST /api/v1/campaigns/{id}/{action}` for publish, pause, resume, stop and archive.
    func lifecycle(_ action: CampaignLifecycle.Action) -> KeyHandler {
        { context, key in
            let current = try services.campaign(addressedBy: context, key: key)
            try CampaignLifecycle(store: store, changed: services.push.campaignChanged).perform(action, on: current, actor: context.actor, now: context.now)
            let published = try services.campaign(current.id, key: key)
            guard action == .publish else { return try answer(published, now: context.now) }
            // A script cannot be asked first: it is told what would keep the campaign from reaching devices.
            let warnings = try CampaignWarning.warnings(for: published.campaign, id: published.id, services: services, now: context.now)
                .map { PublishWarning(code: $0.code, message: $0.message) }
            var response = try json(PublishAnswer(campaign: document(published, now: context.now), warnings: warnings))
            response.headers.add("ETag", Self.etag(revision: published.revision).description)
            return response
        }
    }

    // MARK: Helpers

    private func validate(_ campaign: Campaign, publish: Bool, now: Date) throws {
        let problems = publish ? CampaignLifecycle.publishProblems(campaign, now: now) : campaign.problems(for: .draft)
        guard problems.isEmpty else { throw HTTPError.invalid(problems) }
    }

    private func decodeBody(_ context: RequestContext) throws -> Campaign {
        try context.request.requireJSON("the campaign")
        return try JSONBody.decode(Campaign.self, from: context.request.body)
    }

    private func document(_ stored: StoredCampaign, now: Date) -> Campaign {
        var campaign = stored.campaign
        campaign.status = stored.status(at: now)
        campaign.revision = stored.revision
        return campaign
    }

    /// A publish's answer: the campaign's document with `warnings` beside its members (`CampaignWarning`:
    /// what would keep it from reaching devices; empty when nothing does).
    struct PublishAnswer: Encodable {
        let campaign: Campaign
        let warnings: [PublishWarning]

        enum Key: String, CodingKey { case warnings }

        func encode(to encoder: Encoder) throws {
            try campaign.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(warnings, forKey: .warnings)
        }
    }

    struct PublishWarning: Encodable {
        let code: String
        let message: String
    }

    private func answer(_ stored: StoredCampaign, now: Date, status: Int = 200) throws -> Response {
        var response = try json(document(stored, now: now), status: status)
        response.headers.add("ETag", Self.etag(revision: stored.revision).description)
        return response
    }

    private func json(_ value: some Encodable, status: Int = 200) throws -> Response {
        .json(Array(try CampaignJSON.encoder().encode(value)), status: status)
    }

    static func etag(revision: Int) -> EntityTag { EntityTag("r\(revision)") }

    /// The revision a strong tag this API gave names (`"r3"`), for a 412 that says how far behind it is.
    static func revision(fromETag tag: EntityTag) -> Int? {
        guard !tag.isWeak, tag.opaqueTag.hasPrefix("r") else { return nil }
        return Int(tag.opaqueTag.dropFirst())
    }
}

extension Services {
    /// The campaign the address's `{id}` names, in the key's app.
    func campaign(addressedBy context: RequestContext, key: APIKey) throws -> StoredCampaign {
        try campaign(try context.id("id"), key: key)
    }

    /// Campaign `id` in the key's app; another app's is as absent as a missing one.
    func campaign(_ id: Int64, key: APIKey) throws -> StoredCampaign {
        guard let stored = try database.campaigns.find(id: id), stored.campaign.app == key.appID else {
            throw HTTPError(404, "There is no campaign \(id) in this key's app.")
        }
        return stored
    }
}
