import Foundation
import HeraldHTTP
import HeraldStorage

/// `/healthz` (the process answers) and `/readyz` (the database answers reads).
struct Health: Sendable {
    let database: any HeraldDatabase

    func alive(_ context: RequestContext) -> Response {
        .text("ok\n")
    }

    /// Ready while the database answers reads: the feed and reports keep being served when changes
    /// cannot be saved (disk full, read-only), so that is reported in the body, not as not ready.
    func ready(_ context: RequestContext) -> Response {
        guard database.isReachable() else { return .text("the database does not answer\n", status: 503) }
        if database.openedReadOnly {
            return .text("ready, but changes fail: the database was read-only when Herald started; restart Herald once it can write\n")
        }
        guard let failure = database.unavailability.recent(now: context.now) else { return .text("ready\n") }
        let seconds = Int(context.now.timeIntervalSince(failure.at).rounded())
        return .text("ready, but changes fail: \(failure.cause.reason) (last failure \(seconds) s ago)\n")
    }
}
