import Foundation
import HeraldDomain
import HeraldStorage

/// The state changes people and API keys can make, with the rules for each: shared by the
/// console's buttons and the management API.
struct CampaignLifecycle: Sendable {
    enum Action: String, CaseIterable, Sendable {
        case publish, pause, resume, stop, archive
    }

    enum Failure: Error, Equatable {
        /// The campaign's state does not allow the action.
        case notAllowed(String)
        /// Publishing found problems.
        case invalid([FieldProblem])
        /// Someone changed the campaign in between.
        case stale
    }

    let store: any CampaignStore
    /// Told of every change made (push campaigns start sending; devices may be asked to refresh).
    var changed: @Sendable (StoredCampaign, CampaignState) -> Void = { _, _ in }

    /// Everything that stops `campaign` from being published at `now`.
    static func publishProblems(_ campaign: Campaign, now: Date) -> [FieldProblem] {
        var problems = campaign.problems(for: .publish)
        if let end = campaign.schedule.end, end <= now {
            problems.append(FieldProblem(path: "schedule.end", key: "end_passed"))
        }
        return problems
    }

    /// Applies `action`, as a new revision; returns the new state.
    @discardableResult
    func perform(_ action: Action, on stored: StoredCampaign, actor: AuditActor, now: Date) throws -> CampaignState {
        let next: CampaignState
        switch action {
        case .publish:
            guard stored.state == .draft else {
                throw Failure.notAllowed("Only drafts can be published; this campaign is \(stored.status(at: now).rawValue).")
            }
            let problems = Self.publishProblems(stored.campaign, now: now)
            guard problems.isEmpty else { throw Failure.invalid(problems) }
            next = .published
        case .pause:
            guard stored.state == .published else { throw Failure.notAllowed("Only published campaigns can be paused.") }
            next = .paused
        case .resume:
            guard stored.state == .paused else { throw Failure.notAllowed("Only paused campaigns can be resumed.") }
            next = .published
        case .stop:
            guard stored.state == .published || stored.state == .paused else {
                throw Failure.notAllowed("Only published or paused campaigns can be stopped.")
            }
            next = .stopped
        case .archive:
            guard stored.state != .archived else { throw Failure.notAllowed("This campaign is already archived.") }
            next = .archived
        }
        do {
            try store.update(stored.campaign, expectedRevision: stored.revision, state: next, actor: actor, now: now)
        } catch CampaignStoreError.staleRevision {
            throw Failure.stale
        }
        changed(stored, next)
        return next
    }
}
