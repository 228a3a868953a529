import HeraldHTTP
import HeraldStorage

/// `/healthz` (the process answers) and `/readyz` (the database answers).
struct Health: Sendable {
    let database: AppDatabase

    func alive(_ context: RequestContext) -> Response {
        .text("ok\n")
    }

    func ready(_ context: RequestContext) -> Response {
        database.isReachable() ? .text("ready\n") : .text("the database does not answer\n", status: 503)
    }
}
