import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `/system`, for admins: which build runs, since when, how large the database is and what it holds,
/// what retention did last, when the last backup was made, and whether metrics are served: what an
/// operator checks first, on one page.
struct SystemPage: Sendable {
    let services: Services

    struct Model: Sendable {
        let version: String
        let commit: String
        let running: String
        let runningISO: String
        let databasePath: String
        let databaseSize: String
        let storedEvents: String
        let oldestEvent: String
        let retention: String
        /// That installations expire too; nil when nothing expires.
        let retentionInstallations: String?
        let lastRetention: String
        /// How many installations the last run deleted; nil before the first run.
        let lastInstallationRetention: String?
        let lastBackup: String
        let metrics: String
        let metricsURL: String?
    }

    func show(_ context: RequestContext) throws -> Response {
        let localizer = context.localizer
        let sizes = try services.database.storageSize()
        let summary = try services.database.events.rawEventSummary()
        let backup = try services.database.auditLog.latest(action: "database.backup")
        func megabytes(_ bytes: Int64) -> String {
            localizer("system.megabytes", ["size": localizer.number(Double(bytes) / 1e6, fractionDigits: 1)])
        }
        let days = services.configuration.retentionDays
        // Read once: a run finishing meanwhile would otherwise give the two lines different runs.
        let lastRun = services.retention.latestRun
        let model = Model(
            version: HeraldBuild.version,
            commit: HeraldBuild.commit,
            running: localizer("system.running_since", ["time": localizer.dateTime(services.startedAt)]),
            runningISO: UTCTime.rfc3339(services.startedAt),
            databasePath: services.database.location,
            databaseSize: sizes.log.map { localizer("system.database_size", ["database": megabytes(sizes.database), "log": megabytes($0)]) }
                ?? localizer("system.database_size_on_server", ["database": megabytes(sizes.database)]),
            storedEvents: localizer.number(summary.count),
            oldestEvent: summary.oldestReceivedAt.map { localizer.dateTime($0) } ?? localizer("system.no_events"),
            retention: days == 0 ? localizer("system.retention_forever") : localizer.plural("system.retention_days", count: days),
            retentionInstallations: days == 0 ? nil : localizer("system.retention_installations"),
            lastRetention: lastRun.map {
                localizer.plural("system.retention_run", count: $0.eventsDeleted, ["time": localizer.dateTime($0.finishedAt)])
            } ?? localizer("system.retention_not_run"),
            lastInstallationRetention: lastRun.map {
                localizer.plural("system.retention_run_installations", count: $0.installationsDeleted)
            },
            lastBackup: backup.map {
                localizer("system.backup_at", ["time": localizer.dateTime($0.occurredAt), "path": Localizer.isolated($0.subject)])
            } ?? localizer("system.no_backup"),
            metrics: services.configuration.metricsAddress == nil ? localizer("system.metrics_off") : localizer("system.metrics_on"),
            metricsURL: services.configuration.metricsAddress.map { "http://\($0)/metrics" })
        return try services.page(.system, title: localizer("system.title"), model: model, context: context)
    }
}
