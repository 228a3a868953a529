import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/api/v1/campaigns/{id}/test-sends`: send a campaign as it is now to chosen test devices, and read where
/// a test stands on each. A key sees only its own app's campaigns and tests.
struct TestSendAPI: Sendable {
    let services: Services

    /// `{"installationIds": [...]}`.
    struct Body: Decodable {
        let installationIds: [String]

        enum CodingKeys: String, CodingKey, CaseIterable { case installationIds }

        init(from decoder: Decoder) throws {
            installationIds = try decoder.container(knownKeys: CodingKeys.self).decode([String].self, forKey: .installationIds)
        }
    }

    /// A test as the API answers it.
    struct Document: Encodable {
        struct Device: Encodable {
            let installationId: String
            let name: String
            /// `in_feed`, `expired`, `no_token`, `pending`, `sent`, `failed`, `unregistered` or `unknown`.
            let status: String
            /// The provider's reason, for `failed` and `unregistered`.
            let reason: String?
            let sentAt: Date?
        }

        let id: Int64
        let campaignId: Int64
        let channel: String
        let revision: Int
        let sentAt: Date
        let sentBy: String
        /// When an in-app test leaves its devices' feeds (a push test's is when it was sent).
        let expiresAt: Date
        let devices: [Device]

        init(_ send: TestSend, now: Date) {
            id = send.id
            campaignId = send.campaignID
            channel = send.channel.rawValue
            revision = send.revision
            sentAt = send.sentAt
            sentBy = send.sentBy
            expiresAt = send.expiresAt
            devices = send.devices.map { device in
                let status = send.status(of: device, at: now)
                let reason: String? = switch status {
                case .failed(let reason), .unregistered(let reason), .other(_, let reason): reason
                default: nil
                }
                let sentAt: Date? = if case .sent(let at) = status { at } else { nil }
                return Device(installationId: device.installationID, name: device.name, status: status.code, reason: reason, sentAt: sentAt)
            }
        }
    }

    func create(_ context: RequestContext, key: APIKey) throws -> Response {
        let stored = try services.campaign(addressedBy: context, key: key)
        try context.request.requireJSON("the test", shape: #"{"installationIds": ["…"]}"#)
        let body: Body
        do {
            body = try JSONBody.decode(Body.self, from: context.request.body)
        } catch let unknown as UnknownKeyError {
            throw HTTPError(422, "`\(unknown.path)` is not a field of a test send: send {\"installationIds\": [\"…\"]}; nothing was sent.", fields: [
                FieldProblem(unknown.path, "A test send has only `installationIds`."),
            ])
        }
        let sender = CampaignTestSender(database: services.database) { services.push.dispatcher.wake() }
        let sent: TestSend
        do {
            sent = try sender.send(stored, to: body.installationIds, actor: context.actor, now: context.now)
        } catch CampaignTestSender.Failure.archived {
            throw HTTPError(409, "Campaign \(stored.id) is archived: an archived campaign is not sent as a test.")
        } catch CampaignTestSender.Failure.noDevices {
            throw HTTPError(422, "Name at least one test device.", fields: [FieldProblem("installationIds", "Name at least one test device's installation id.")])
        } catch CampaignTestSender.Failure.tooManyDevices {
            throw HTTPError(422, "A test goes to at most \(TestSend.maxDevices) devices.", fields: [
                FieldProblem("installationIds", "Name at most \(TestSend.maxDevices) test devices."),
            ])
        } catch CampaignTestSender.Failure.notTestDevices(let strangers) {
            throw HTTPError(422, "Only the app's test devices receive tests.", fields: strangers.map {
                FieldProblem("installationIds.\($0.index)", "This installation is not a test device of app \(stored.campaign.app): add it on the app's page first.")
            })
        } catch CampaignTestSender.Failure.invalid(let problems) {
            throw HTTPError.invalid(problems)
        }
        var response = try json(Document(sent, now: context.now), status: 201)
        response.headers.add("Location", "/api/v1/campaigns/\(stored.id)/test-sends/\(sent.id)")
        return response
    }

    func show(_ context: RequestContext, key: APIKey) throws -> Response {
        let stored = try services.campaign(addressedBy: context, key: key)
        let id = try context.id("testSendId")
        guard let send = try services.database.testSends.find(id: id), send.campaignID == stored.id else {
            throw HTTPError(404, "Campaign \(stored.id) has no test \(id).")
        }
        var response = try json(Document(send, now: context.now))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    private func json(_ value: some Encodable, status: Int = 200) throws -> Response {
        .json(Array(try CampaignJSON.encoder().encode(value)), status: status)
    }
}
