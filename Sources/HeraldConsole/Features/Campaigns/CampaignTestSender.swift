import Foundation
import HeraldDomain
import HeraldStorage

/// Sends a campaign as it is now to chosen test devices, without touching the live campaign: the rules
/// the campaign page and the API share.
struct CampaignTestSender: Sendable {
    enum Failure: Error, Equatable {
        /// An archived campaign is history: nothing of it is sent again.
        case archived
        /// No device was chosen.
        case noDevices
        /// More than `TestSend.maxDevices` were.
        case tooManyDevices
        /// These installation ids are not test devices of the campaign's app.
        case notTestDevices([Stranger])
        /// Devices would not show the message as it is (a card without its image, an in-app message
        /// without a trigger): the problems publishing would name.
        case invalid([FieldProblem])
    }

    /// A chosen installation id that is no test device, and its place in the request.
    struct Stranger: Equatable {
        let index: Int
        let installationID: String
    }

    let database: any HeraldDatabase
    /// Told when a push test is queued, so its notifications leave at once.
    let queued: @Sendable () -> Void

    /// Sends `stored` to the test devices named by `installationIDs` (repeats count once).
    func send(_ stored: StoredCampaign, to installationIDs: [String], actor: AuditActor, now: Date) throws -> TestSend {
        guard stored.state != .archived else { throw Failure.archived }
        var seen = Set<String>()
        let chosen = installationIDs.enumerated().filter { seen.insert($0.element).inserted }
        guard !chosen.isEmpty else { throw Failure.noDevices }
        guard chosen.count <= TestSend.maxDevices else { throw Failure.tooManyDevices }
        let devices = Dictionary(try database.apps.testDevices(appID: stored.campaign.app).map { ($0.installationID, $0) }) { first, _ in first }
        let strangers = chosen.filter { devices[$0.element] == nil }
        guard strangers.isEmpty else { throw Failure.notTestDevices(strangers.map { Stranger(index: $0.offset, installationID: $0.element) }) }
        let problems = stored.campaign.problems(for: .publish)
        guard problems.isEmpty else { throw Failure.invalid(problems) }
        let sent = try database.testSends.send(stored, to: chosen.compactMap { devices[$0.element] }, actor: actor, now: now)
        if sent.channel == .push { queued() }
        return sent
    }
}
