import Foundation
import HeraldStorage
import HeraldDomain
import PostgresNIO

/// Installations and their push tokens on PostgreSQL.
struct PostgresInstallationStore: InstallationStore {
    let database: PostgresAppDatabase

    private static let columns = """
        id, app_id, installation_id, platform, push_provider, push_token, app_version, language, country, time_zone,
        notifications_allowed, token_removed_at, token_removed_reason, created_at, updated_at, registered_at
        """

    private static func installation(_ row: PostgresRow) throws -> Installation {
        let (id, appID, installationID, platform, provider, token, appVersion, language, country, timeZone, allowed, removedAt, removedReason,
             createdAt, updatedAt, registeredAt) = try row.decode(
            (Int64, Int64, String, String, String?, String?, String?, String?, String?, String?, Bool, Date?, String?, Date, Date, Date).self)
        return try Installation(
            rowID: id, appID: appID, installationID: installationID, platform: platform, pushProvider: provider, pushToken: token,
            appVersion: appVersion, language: language, country: country, timeZone: timeZone, notificationsAllowed: allowed,
            tokenRemovedAt: removedAt, tokenRemovedReason: removedReason, createdAt: createdAt, updatedAt: updatedAt,
            registeredAt: registeredAt)
    }

    func upsert(appID: Int64, installationID: String, registration: InstallationRegistration, now: Date) throws -> (installation: Installation, created: Bool) {
        try registration.refuseNUL(installationID: installationID)
        let upsert = InstallationUpsert(appID: appID, installationID: installationID, registration: registration, now: now)
        return try database.installationRegistrations.submit(upsert) { group in
            try database.write { session in
                // A group takes its tokens' locks in one order, so two instances' groups cannot each hold one the other waits for.
                let tokens = Set(group.compactMap { upsert in
                    upsert.registration.pushProvider.flatMap { provider in upsert.registration.pushToken.map { Self.tokenLock(appID: upsert.appID, provider, $0) } }
                })
                for token in tokens.sorted() { try session.lock(token) }
                return try group.map {
                    try Self.upsert(appID: $0.appID, installationID: $0.installationID, registration: $0.registration, now: $0.now, in: session)
                }
            }
        }
    }

    /// What a registration taking over `token` holds, so two installations registering one token at once,
    /// on two instances, are written one after the other.
    private static func tokenLock(appID: Int64, _ provider: PushProvider, _ token: String) -> String {
        "installations token \(appID) \(provider.rawValue) \(token)"
    }

    /// What `withTokens` waits for, per app: a registration holds it shared from before its row takes an id
    /// until it commits, and a page of installations is read under it alone. Ids come from a sequence in
    /// the order they are taken, not the order they commit, so without it a page read while a registration
    /// was in flight could list a later id, and the push planner, paging by id, would pass over the
    /// earlier one for good once it committed.
    static func numberingLock(appID: Int64) -> String { "installations numbering \(appID)" }

    /// `upsert` inside the caller's transaction.
    static func upsert(
        appID: Int64, installationID: String, registration: InstallationRegistration, now: Date, in session: PostgresSession
    ) throws -> (installation: Installation, created: Bool) {
        try registration.refuseNUL(installationID: installationID)
        let stamp = now.storedPrecision
        try session.lock(numberingLock(appID: appID), shared: true)
        if let provider = registration.pushProvider, let token = registration.pushToken {
            // Two installations registering one token at once, on two instances: the second waits, then takes it over.
            try session.lock(tokenLock(appID: appID, provider, token))
            try session.execute(
                """
                UPDATE installations SET push_token = NULL, push_provider = NULL, updated_at = \(stamp)
                WHERE app_id = \(appID) AND push_provider = \(provider.rawValue) AND push_token = \(token)
                AND installation_id <> \(installationID)
                """)
        }
        // A new token is live whatever happened to the last one; without one, a pruned token's record stays.
        let hasToken = registration.pushToken != nil
        guard let row = try session.rows(
            """
            INSERT INTO installations AS i
                (app_id, installation_id, platform, push_provider, push_token, app_version, language, country, time_zone,
                 notifications_allowed, created_at, updated_at, registered_at)
            VALUES (\(appID), \(installationID), \(registration.platform.rawValue), \(registration.pushProvider?.rawValue),
                    \(registration.pushToken), \(registration.appVersion), \(registration.language), \(registration.country),
                    \(registration.timeZone), \(registration.notificationsAllowed), \(stamp), \(stamp), \(stamp))
            ON CONFLICT (app_id, installation_id) DO UPDATE SET
                platform = excluded.platform,
                push_provider = CASE WHEN excluded.push_token IS NOT NULL OR i.token_removed_at IS NULL
                    THEN excluded.push_provider ELSE i.push_provider END,
                push_token = excluded.push_token, app_version = excluded.app_version, language = excluded.language,
                country = excluded.country, time_zone = excluded.time_zone, notifications_allowed = excluded.notifications_allowed,
                token_removed_at = CASE WHEN \(hasToken) THEN NULL ELSE i.token_removed_at END,
                token_removed_reason = CASE WHEN \(hasToken) THEN NULL ELSE i.token_removed_reason END,
                updated_at = excluded.updated_at, registered_at = excluded.registered_at
            RETURNING \(unescaped: Self.columns), (xmax = 0) AS created
            """
        ).first else {
            throw InstallationStoreError.unreadable("installation \(installationID) of app \(appID) after saving it")
        }
        let created = try row.decode((Int64, Int64, String, String, String?, String?, String?, String?, String?, String?, Bool, Date?, String?,
                                      Date, Date, Date, Bool).self).16
        return (try Self.installation(row), created)
    }

    func installation(appID: Int64, id: String) throws -> Installation? {
        try database.read { try Self.installation(appID: appID, id: id, in: $0) }
    }

    /// `installation(appID:id:)` inside the caller's transaction (a push test reads its devices' tokens as it queues them).
    static func installation(appID: Int64, id: String, in session: PostgresSession) throws -> Installation? {
        // None was stored with a NUL (`refuseNUL`), and PostgreSQL's text could not be asked for one.
        guard !id.holdsNUL else { return nil }
        return try session.rows("SELECT \(unescaped: Self.columns) FROM installations WHERE app_id = \(appID) AND installation_id = \(id)")
            .first.map(Self.installation)
    }

    @discardableResult
    func removeToken(appID: Int64, provider: PushProvider, token: String, reason: String, now: Date) throws -> Bool {
        guard !token.holdsNUL else { return false }
        return try database.write { try Self.removeToken(appID: appID, provider: provider, token: token, reason: reason, now: now, in: $0) }
    }

    /// `removeToken` inside the caller's transaction (the outbox records the send and prunes at once).
    @discardableResult
    static func removeToken(appID: Int64, provider: PushProvider, token: String, reason: String, now: Date, in session: PostgresSession) throws -> Bool {
        let stamp = now.storedPrecision
        return try session.changes(
            """
            UPDATE installations SET push_token = NULL, token_removed_at = \(stamp), token_removed_reason = \(Installation.storedReason(reason)),
                updated_at = \(stamp)
            WHERE app_id = \(appID) AND push_provider = \(provider.rawValue) AND push_token = \(token)
            """) > 0
    }

    func withTokens(appID: Int64, provider: PushProvider?, after: Int64?, pageSize: Int) throws -> InstallationPage {
        let limit = InstallationPage.limit(pageSize)
        let installations = try database.write { session in
            try session.lock(Self.numberingLock(appID: appID))
            let query: PostgresQuery = if let provider {
                """
                SELECT \(unescaped: Self.columns) FROM installations
                WHERE app_id = \(appID) AND push_provider = \(provider.rawValue) AND push_token IS NOT NULL AND id > \(after ?? 0)
                ORDER BY id LIMIT \(Int64(limit))
                """
            } else {
                """
                SELECT \(unescaped: Self.columns) FROM installations
                WHERE app_id = \(appID) AND push_token IS NOT NULL AND id > \(after ?? 0)
                ORDER BY id LIMIT \(Int64(limit))
                """
            }
            return try session.rows(query).map(Self.installation)
        }
        return InstallationPage(installations, limit: limit)
    }

    func deleteUnregistered(since cutoff: Date, limit: Int) throws -> Int {
        // The outer condition is checked again on a row a registration updated while this waited for it.
        try database.write { session in
            try session.changes(
                """
                DELETE FROM installations WHERE registered_at < \(cutoff.storedPrecision) AND id IN (
                    SELECT id FROM installations WHERE registered_at < \(cutoff.storedPrecision) ORDER BY registered_at LIMIT \(Int64(max(limit, 0))))
                """)
        }
    }

    func counts(appID: Int64) throws -> InstallationCounts {
        try database.read { session in
            var counts = InstallationCounts()
            if let row = try session.rows(
                """
                SELECT count(*), count(*) FILTER (WHERE notifications_allowed),
                    count(*) FILTER (WHERE push_token IS NULL AND token_removed_at IS NOT NULL)
                FROM installations WHERE app_id = \(appID)
                """
            ).first {
                let (installations, allowed, removed) = try row.decode((Int64, Int64, Int64).self)
                counts.installations = Int(installations)
                counts.notificationsAllowed = Int(allowed)
                counts.tokensRemoved = Int(removed)
            }
            for provider in PushProvider.allCases {
                counts.withToken[provider] = Int(try session.one(
                    """
                    SELECT count(*) FROM installations WHERE app_id = \(appID) AND push_provider = \(provider.rawValue) AND push_token IS NOT NULL
                    """, as: Int64.self) ?? 0)
            }
            return counts
        }
    }

    /// The counts migration 0015 keeps: first the app's appended changes are folded into them (deleted and
    /// summed, the count rows updated in key order, so two estimates folding at once wait for each other
    /// instead of deadlocking; a registration never waits for either), then the largest are read.
    func profiles(appID: Int64, limit: Int) throws -> InstallationProfiles {
        try database.write { session in
            try Self.fold(appID: appID, in: session)
            let groups = try session.rows(
                """
                SELECT platform, app_version, language, country, installations, with_token FROM installation_profiles
                WHERE app_id = \(appID) ORDER BY installations DESC, platform, app_version, language, country LIMIT \(Int64(max(limit, 0)))
                """
            ).compactMap { row in
                let (platform, appVersion, language, country, installations, withToken) = try row.decode(
                    (String, String, String, String, Int64, Int64).self)
                return InstallationProfiles.group(
                    platform: platform, appVersion: appVersion, language: language, country: country,
                    installations: Int(installations), withToken: Int(withToken))
            }
            let totals = try session.rows(
                "SELECT COALESCE(sum(installations), 0)::int8, COALESCE(sum(with_token), 0)::int8 FROM installation_profiles WHERE app_id = \(appID)"
            ).first.map { try $0.decode((Int64, Int64).self) }
            return InstallationProfiles(groups: groups, installations: Int(totals?.0 ?? 0), withToken: Int(totals?.1 ?? 0))
        }
    }

    /// Every app with appended changes, one transaction each, so no fold holds many apps' count rows at once.
    func foldProfileChanges() throws {
        let apps = try database.read { session in
            try session.rows("SELECT DISTINCT app_id FROM installation_profile_changes").map { try $0.decode(Int64.self) }
        }
        for appID in apps {
            try database.write { session in try Self.fold(appID: appID, in: session) }
        }
    }

    /// Moves the app's appended changes into its counts, in one statement: deleted and summed, the count
    /// rows updated in key order; then drops the groups left empty.
    private static func fold(appID: Int64, in session: PostgresSession) throws {
        try session.execute(
            """
            WITH moved AS (
                DELETE FROM installation_profile_changes WHERE app_id = \(appID)
                RETURNING platform, app_version, language, country, installations, with_token
            )
            INSERT INTO installation_profiles AS profile (app_id, platform, app_version, language, country, installations, with_token)
            SELECT \(appID), platform, app_version, language, country, sum(installations), sum(with_token) FROM moved
            GROUP BY platform, app_version, language, country ORDER BY platform, app_version, language, country
            ON CONFLICT (app_id, platform, app_version, language, country) DO UPDATE
            SET installations = profile.installations + excluded.installations, with_token = profile.with_token + excluded.with_token
            """)
        try session.execute("DELETE FROM installation_profiles WHERE app_id = \(appID) AND installations = 0")
    }

    /// Deletes the app's installation `installationID` inside the caller's transaction (an erasure, which
    /// the event store makes); returns whether there was one.
    static func delete(appID: Int64, installationID: String, in session: PostgresSession) throws -> Bool {
        try session.changes("DELETE FROM installations WHERE app_id = \(appID) AND installation_id = \(installationID)") > 0
    }
}
