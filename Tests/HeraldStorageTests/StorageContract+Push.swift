import Foundation
import HeraldDomain
@testable import HeraldStorage
import Synchronization
import TestSupport
import Testing

/// The storage contract for installations and the push outbox, on every engine.
extension StorageContractTests {
    @Test(arguments: StorageEngine.available)
    func installationsRegisterTakeOverTokensAndArePruned(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: Self.start)
        let blog = try database.stores.apps.create(name: "Blog", platforms: [.ios], actor: .commandLine, now: Self.start)
        let installations = database.stores.installations
        let (first, created) = try installations.upsert(appID: shop.id, installationID: "iid-1", registration: InstallationRegistration.sample(token: "tok-A"), now: Self.start)
        #expect(created)
        #expect(first.asStored == Installation(
            rowID: first.rowID, appID: shop.id, installationID: "iid-1", platform: .ios, pushProvider: .apns, pushToken: "tok-A", appVersion: "2.1.0",
            language: "fa", country: "IR", timeZone: "Asia/Tehran", notificationsAllowed: true, tokenRemovedAt: nil, tokenRemovedReason: nil,
            createdAt: Self.start, updatedAt: Self.start, registeredAt: Self.start).asStored)
        #expect(try installations.installation(appID: shop.id, id: "iid-1")?.asStored == first.asStored)
        #expect(try installations.installation(appID: blog.id, id: "iid-1") == nil)

        // Registered again: replaced, not created; created time kept.
        let later = Self.start.addingTimeInterval(60)
        let (again, createdAgain) = try installations.upsert(
            appID: shop.id, installationID: "iid-1", registration: InstallationRegistration.sample(token: "tok-A", language: "de", allowed: false), now: later)
        #expect(!createdAgain)
        #expect(again.rowID == first.rowID)
        #expect(again.language == "de")
        #expect(again.notificationsAllowed == false)
        #expect(again.createdAt.asStored == Self.start.asStored)
        #expect(again.updatedAt.asStored == later.asStored)

        // A reinstall gets the same token: the new installation takes it over; another app's same token is its own.
        _ = try installations.upsert(appID: blog.id, installationID: "iid-9", registration: InstallationRegistration.sample(token: "tok-A"), now: later)
        let (second, _) = try installations.upsert(appID: shop.id, installationID: "iid-2", registration: InstallationRegistration.sample(token: "tok-A"), now: later)
        #expect(second.pushToken == "tok-A")
        let robbed = try #require(try installations.installation(appID: shop.id, id: "iid-1"))
        #expect(robbed.pushToken == nil)
        #expect(robbed.pushProvider == nil)
        #expect(robbed.tokenRemovedAt == nil)
        #expect(try installations.installation(appID: blog.id, id: "iid-9")?.pushToken == "tok-A")

        // Pruned: the token goes, its provider and the reason (200 characters, a NUL kept as U+FFFD) stay.
        let reason = "Unregistered\u{0}" + String(repeating: "ß", count: 300)
        #expect(try installations.removeToken(appID: shop.id, provider: .apns, token: "tok-A", reason: reason, now: later))
        #expect(try installations.removeToken(appID: shop.id, provider: .apns, token: "tok-A", reason: reason, now: later) == false)
        #expect(try installations.removeToken(appID: shop.id, provider: .fcm, token: "tok-B", reason: reason, now: later) == false)
        let pruned = try #require(try installations.installation(appID: shop.id, id: "iid-2"))
        #expect(pruned.pushToken == nil)
        #expect(pruned.pushProvider == .apns)
        #expect(pruned.tokenRemovedAt?.asStored == later.asStored)
        #expect(pruned.tokenRemovedReason == "Unregistered\u{FFFD}" + String(repeating: "ß", count: 187))
        #expect(try installations.installation(appID: blog.id, id: "iid-9")?.pushToken == "tok-A", "another app's token stays")

        // Registered without a token: the record of the pruned one stays; with a new one, it is cleared.
        let (tokenless, _) = try installations.upsert(appID: shop.id, installationID: "iid-2", registration: InstallationRegistration.sample(token: nil), now: later)
        #expect(tokenless.pushProvider == .apns)
        #expect(tokenless.tokenRemovedReason != nil)
        let (renewed, _) = try installations.upsert(
            appID: shop.id, installationID: "iid-2", registration: InstallationRegistration.sample(.android, provider: .fcm, token: "tok-F"), now: later)
        #expect(renewed.pushProvider == .fcm)
        #expect(renewed.platform == .android)
        #expect(renewed.tokenRemovedAt == nil)
        #expect(renewed.tokenRemovedReason == nil)

        var counts = InstallationCounts()
        counts.installations = 2
        counts.withToken = [.apns: 0, .fcm: 1]
        counts.notificationsAllowed = 1
        counts.tokensRemoved = 0
        #expect(try installations.counts(appID: shop.id) == counts)
        _ = try installations.removeToken(appID: shop.id, provider: .fcm, token: "tok-F", reason: "gone", now: later)
        counts.withToken = [.apns: 0, .fcm: 0]
        counts.tokensRemoved = 1
        #expect(try installations.counts(appID: shop.id) == counts)
        #expect(try installations.counts(appID: 9_999) == InstallationCounts().with(withToken: [.apns: 0, .fcm: 0]))

        // PostgreSQL's text cannot hold a NUL: a registration with one is refused on every engine, and none is found.
        #expect(throws: InstallationStoreError.unstorable(field: "installationId")) {
            try installations.upsert(appID: shop.id, installationID: "iid\u{0}", registration: InstallationRegistration.sample(token: "tok-N"), now: later)
        }
        #expect(throws: InstallationStoreError.unstorable(field: "pushToken")) {
            try installations.upsert(appID: shop.id, installationID: "iid-3", registration: InstallationRegistration.sample(token: "tok\u{0}"), now: later)
        }
        #expect(try installations.installation(appID: shop.id, id: "iid\u{0}") == nil)
        #expect(try installations.installation(appID: shop.id, id: "iid-3") == nil)
        #expect(try installations.removeToken(appID: shop.id, provider: .apns, token: "tok\u{0}", reason: "", now: later) == false)
    }

    @Test(arguments: StorageEngine.available)
    func installationsThatStopRegisteringExpireOldestFirstInSteps(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: Self.start)
        let blog = try database.stores.apps.create(name: "Blog", platforms: [.ios], actor: .commandLine, now: Self.start)
        let installations = database.stores.installations
        let day: TimeInterval = 86_400
        func register(_ app: App, _ id: String, token: String, daysIn days: Double) throws -> Installation {
            let registered = try installations.upsert(
                appID: app.id, installationID: id, registration: InstallationRegistration.sample(token: token), now: Self.start.addingTimeInterval(days * day))
            return registered.installation
        }
        // Registered once, then again unchanged inside the period: the second registration keeps it.
        _ = try register(shop, "kept-by-registering", token: "tok-1", daysIn: 0)
        let again = try register(shop, "kept-by-registering", token: "tok-1", daysIn: 25)
        #expect(again.registeredAt.asStored == Self.start.addingTimeInterval(25 * day).asStored)
        _ = try register(shop, "gone-first", token: "tok-2", daysIn: 0)
        _ = try register(blog, "gone-second-other-app", token: "tok-3", daysIn: 1)
        // Its token pruned by a provider inside the period: the server's change is not a registration.
        _ = try register(shop, "gone-third-pruned-later", token: "tok-4", daysIn: 5)
        #expect(try installations.removeToken(appID: shop.id, provider: .apns, token: "tok-4", reason: "Unregistered", now: Self.start.addingTimeInterval(28 * day)))
        // Its token taken over by a reinstall inside the period: also the server's change.
        _ = try register(shop, "gone-fourth-token-taken", token: "tok-5", daysIn: 6)
        _ = try register(shop, "reinstall", token: "tok-5", daysIn: 29)
        _ = try register(shop, "registered-late", token: "tok-6", daysIn: 29.9)

        let cutoff = Self.start.addingTimeInterval(20 * day)
        #expect(try installations.deleteUnregistered(since: cutoff, limit: 0) == 0)
        #expect(try installations.deleteUnregistered(since: cutoff, limit: 2) == 2)
        #expect(try installations.installation(appID: shop.id, id: "gone-first") == nil)
        #expect(try installations.installation(appID: blog.id, id: "gone-second-other-app") == nil)
        #expect(try installations.installation(appID: shop.id, id: "gone-third-pruned-later") != nil, "oldest first: the third waits for the next step")

        // Retention 20 days at day 40 has the same cutoff: two more in steps of two (a full one, then a short one).
        let retention = Retention(database: database.stores, days: 20, rowsPerStep: 2, pauseBetweenSteps: .zero)
        let run = try #require(try retention.run(now: Self.start.addingTimeInterval(40 * day)))
        #expect(run == Retention.Run(finishedAt: Self.start.addingTimeInterval(40 * day), eventsDeleted: 0, installationsDeleted: 2, steps: 3))
        #expect(try installations.installation(appID: shop.id, id: "gone-third-pruned-later") == nil)
        #expect(try installations.installation(appID: shop.id, id: "gone-fourth-token-taken") == nil)
        for kept in ["kept-by-registering", "reinstall", "registered-late"] {
            #expect(try installations.installation(appID: shop.id, id: kept) != nil, "\(kept)")
        }
        #expect(try installations.counts(appID: shop.id).installations == 3)
        #expect(try installations.withTokens(appID: shop.id, pageSize: 10).installations.map(\.installationID) == [
            "kept-by-registering", "reinstall", "registered-late",
        ])
        // The one that was deleted registers again later: a new installation, as a new phone would be.
        let back = try installations.upsert(
            appID: shop.id, installationID: "gone-first", registration: InstallationRegistration.sample(token: "tok-2"), now: Self.start.addingTimeInterval(41 * day))
        #expect(back.created)
        #expect(try Retention(database: database.stores, days: 20, pauseBetweenSteps: .zero).run(now: Self.start.addingTimeInterval(41 * day))?.installationsDeleted == 0)
    }

    @Test(arguments: StorageEngine.available)
    func installationsWithTokensComeInPages(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: Self.start)
        let installations = database.stores.installations
        for index in 0..<12 {
            let provider: PushProvider = index.isMultiple(of: 3) ? .fcm : .apns
            _ = try installations.upsert(
                appID: shop.id, installationID: "iid-\(index)",
                registration: InstallationRegistration.sample(provider == .fcm ? .android : .ios, provider: provider, token: index == 5 ? nil : "tok-\(index)"),
                now: Self.start)
        }
        var seen: [String] = []
        var after: Int64?
        repeat {
            let page = try installations.withTokens(appID: shop.id, provider: .apns, after: after, pageSize: 3)
            seen += page.installations.map(\.installationID)
            #expect(page.installations.count <= 3)
            after = page.next
        } while after != nil
        #expect(seen == ["iid-1", "iid-2", "iid-4", "iid-7", "iid-8", "iid-10", "iid-11"])
        #expect(try installations.withTokens(appID: shop.id, provider: .fcm, pageSize: 100).installations.map(\.installationID) == ["iid-0", "iid-3", "iid-6", "iid-9"])
        #expect(try installations.withTokens(appID: shop.id, pageSize: 100).installations.count == 11)
        #expect(try installations.withTokens(appID: shop.id, pageSize: 0).installations.count == 1, "a page holds at least one")
        let all = try installations.withTokens(appID: shop.id, pageSize: .max)
        #expect(all.installations.count == 11)
        #expect(all.next == nil)
        #expect(all.installations.map(\.rowID) == all.installations.map(\.rowID).sorted())
    }

    /// A published push campaign with `count` installations planned into the outbox, due at `start`.
    private func plannedPush(_ database: EngineDatabase, count: Int, now: Date) throws -> (app: App, campaign: Int64) {
        let stores = database.stores
        let shop = try stores.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: now)
        for index in 0..<count {
            _ = try stores.installations.upsert(
                appID: shop.id, installationID: "iid-\(index)",
                registration: InstallationRegistration.sample(index.isMultiple(of: 2) ? .ios : .android, provider: index.isMultiple(of: 2) ? .apns : .fcm,
                                                token: "tok-\(index)"),
                now: now)
        }
        let campaign = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Sale 🎉", push: PushNotification(title: "Sale")), state: .published, actor: .commandLine, now: now)
        var after: Int64?
        repeat {
            let page = try stores.installations.withTokens(appID: shop.id, after: after, pageSize: 50)
            try stores.pushOutbox.plan(
                campaignID: campaign, appID: shop.id, entries: page.installations.map { ($0, now) }, through: page.installations.last?.rowID,
                complete: page.next == nil, now: now)
            after = page.next
        } while after != nil
        return (shop, campaign)
    }

    @Test(arguments: StorageEngine.available)
    func theOutboxPlansClaimsAndRecords(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let stores = database.stores
        let outbox = stores.pushOutbox
        let shop = try stores.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: Self.start)
        var devices: [Installation] = []
        for index in 0..<5 {
            devices.append(try stores.installations.upsert(
                appID: shop.id, installationID: "iid-\(index)",
                registration: InstallationRegistration.sample(index < 3 ? .ios : .android, provider: index < 3 ? .apns : .fcm, token: "tok-\(index)",
                                                language: index == 0 ? nil : "fa"),
                now: Self.start).installation)
        }
        let later = Self.start.addingTimeInterval(3600)
        let push = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Push", push: PushNotification(title: "Hi")), state: .published, actor: .commandLine, now: Self.start)
        let scheduled = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Later", schedule: Schedule(start: later), push: PushNotification(title: "Later")), state: .published,
            actor: .commandLine, now: Self.start)
        _ = try stores.campaigns.create(Self.inApp(shop.id, "In-app"), state: .published, actor: .commandLine, now: Self.start)
        _ = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Draft push", push: PushNotification(title: "Draft")), state: .draft, actor: .commandLine, now: Self.start)
        #expect(try outbox.campaignsToPlan(now: Self.start).map(\.id) == [push])
        #expect(try outbox.campaignsToPlan(now: later).map(\.id) == [push, scheduled])
        #expect(try outbox.plannedThrough(campaignID: push) == 0)

        // Two pages, the first planned twice (a restart): each installation once.
        let firstPage = devices[0..<3].map { (installation: $0, due: Self.start) }
        try outbox.plan(campaignID: push, appID: shop.id, entries: firstPage, through: devices[2].rowID, complete: false, now: Self.start)
        try outbox.plan(campaignID: push, appID: shop.id, entries: firstPage, through: devices[2].rowID, complete: false, now: Self.start)
        #expect(try outbox.plannedThrough(campaignID: push) == devices[2].rowID)
        #expect(try outbox.campaignsToPlan(now: Self.start).map(\.id) == [push])
        let secondPage = devices[3...].map { (installation: $0, due: later) }
        try outbox.plan(campaignID: push, appID: shop.id, entries: secondPage, through: devices[4].rowID, complete: true, now: Self.start)
        #expect(try outbox.campaignsToPlan(now: Self.start).isEmpty)
        var progress = try outbox.progress(campaignID: push)
        #expect(progress.planned == 5)
        #expect(progress.pending == 5)
        #expect(progress.plannedAll)
        #expect(progress.started?.asStored == Self.start.asStored)
        #expect(try outbox.nextDue()?.asStored == Self.start.asStored)

        // Due order, then id; only what is due.
        #expect(try outbox.claim(limit: 0, now: Self.start).isEmpty)
        let claimed = try outbox.claim(limit: 2, now: Self.start)
        #expect(claimed.map(\.installationID) == ["iid-0", "iid-1"])
        #expect(claimed.first == OutboxEntry(
            id: claimed[0].id, appID: shop.id, campaignID: push, installationID: "iid-0", provider: .apns, token: "tok-0", platform: "ios",
            language: nil, attempts: 1))
        #expect(try outbox.progress(campaignID: push).sending == 2)
        // The process stops with them at a provider: their outcome is unknown, and they are not claimed again.
        #expect(try outbox.settleInterrupted() == 2)
        #expect(try outbox.settleInterrupted() == 0)
        let rest = try outbox.claim(limit: 10, now: Self.start)
        #expect(rest.map(\.installationID) == ["iid-2"])
        #expect(try outbox.claim(limit: 10, now: Self.start).isEmpty)
        let due = try outbox.claim(limit: 10, now: later)
        #expect(due.map(\.installationID) == ["iid-3", "iid-4"])

        let retryAt = later.addingTimeInterval(30)
        try outbox.record([
            (rest[0], .unregistered(reason: "Unregistered")),
            (due[0], .sent(at: later)),
            (due[1], .retry(at: retryAt, reason: "429 too many")),
        ], now: later)
        try outbox.record([], now: later)
        #expect(try stores.installations.installation(appID: shop.id, id: "iid-2")?.pushToken == nil, "the dead token is pruned")
        #expect(try stores.installations.installation(appID: shop.id, id: "iid-2")?.tokenRemovedReason == "Unregistered")
        #expect(try outbox.nextDue()?.asStored == retryAt.asStored)
        #expect(try outbox.claim(limit: 10, now: later).isEmpty)
        let retried = try outbox.claim(limit: 10, now: retryAt)
        #expect(retried.map(\.installationID) == ["iid-4"])
        #expect(retried.first?.attempts == 2)
        try outbox.record([(retried[0], .failed(reason: "BadDeviceToken"))], now: retryAt)
        #expect(try outbox.nextDue() == nil)

        progress = try outbox.progress(campaignID: push)
        #expect(progress.planned == 5)
        #expect((progress.pending, progress.sending, progress.sent, progress.failed, progress.unregistered, progress.unknown) == (0, 0, 1, 1, 1, 2))
        #expect(progress.isDone)
        let failures = try outbox.failures(campaignID: push)
        #expect(failures.map { "\($0.state) \($0.reason) \($0.count)" } == ["unknown interrupted 2", "failed BadDeviceToken 1", "unregistered Unregistered 1"])
        #expect(try outbox.failures(campaignID: push, limit: 1).count == 1)
        let breakdown = try outbox.sentBreakdown(campaignID: push)
        #expect(breakdown.byPlatform.map { "\($0.platform) \($0.targeted) \($0.sent)" } == ["android 2 1", "ios 3 0"])
        #expect(breakdown.byDay.map { "\($0.day) \($0.sent)" } == ["2026-09-21 1"])
        #expect(try outbox.progress(campaignID: 9_999) == PushProgress())
    }

    @Test(arguments: StorageEngine.available)
    func refreshesCapsAndDeadTokensInTheOutbox(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let stores = database.stores
        let outbox = stores.pushOutbox
        let (shop, first) = try plannedPush(database, count: 3, now: Self.start)
        // A silent refresh for each installation with a token, none while one is pending.
        #expect(try outbox.queueRefresh(appID: shop.id, now: Self.start, spacing: 0) == 3)
        #expect(try outbox.queueRefresh(appID: shop.id, now: Self.start, spacing: 0) == 0)
        let claimed = try outbox.claim(limit: 10, now: Self.start)
        #expect(claimed.count == 6)
        #expect(claimed.filter { $0.campaignID == nil }.count == 3)
        try outbox.record(claimed.map { ($0, .sent(at: Self.start)) }, now: Self.start)
        #expect(try outbox.queueRefresh(appID: shop.id, now: Self.start, spacing: 0) == 3, "none pending any more")

        // A cap of one campaign push a day: the next campaign is skipped for these devices; refreshes do not count.
        try stores.apps.setPushSettings(AppPushSettings(dailyCap: 1), appID: shop.id, actor: .commandLine, now: Self.start)
        let second = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Second", push: PushNotification(title: "Again")), state: .published, actor: .commandLine, now: Self.start)
        let page = try stores.installations.withTokens(appID: shop.id, pageSize: 10)
        let soon = Self.start.addingTimeInterval(60)
        try outbox.plan(campaignID: second, appID: shop.id, entries: page.installations.map { ($0, soon) }, through: nil, complete: true, now: soon)
        let capped = try outbox.claim(limit: 10, now: soon)
        #expect(capped.allSatisfy { $0.campaignID == nil }, "only the refreshes")
        #expect(capped.count == 3)
        #expect(try outbox.progress(campaignID: second).skipped == 3)
        #expect(try outbox.failures(campaignID: second).map { "\($0.state) \($0.reason) \($0.count)" } == ["skipped frequency_cap 3"])

        // A day later the cap allows one again; a dead token ends the device's other pending rows too.
        try stores.apps.setPushSettings(AppPushSettings(), appID: shop.id, actor: .commandLine, now: Self.start)
        let third = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Third", push: PushNotification(title: "Third")), state: .published, actor: .commandLine, now: Self.start)
        let fourth = try stores.campaigns.create(
            Campaign(app: shop.id, name: "Fourth", push: PushNotification(title: "Fourth")), state: .published, actor: .commandLine, now: Self.start)
        let dayLater = Self.start.addingTimeInterval(86_500)
        try outbox.plan(campaignID: third, appID: shop.id, entries: page.installations.map { ($0, soon) }, through: nil, complete: true, now: soon)
        try outbox.plan(campaignID: fourth, appID: shop.id, entries: page.installations.map { ($0, dayLater) }, through: nil, complete: true, now: soon)
        let thirdRows = try outbox.claim(limit: 1, now: soon)
        #expect(thirdRows.map(\.campaignID) == [third])
        try outbox.record([(thirdRows[0], .unregistered(reason: "Unregistered"))], now: soon)
        #expect(try outbox.progress(campaignID: fourth).unregistered == 1)
        #expect(try outbox.progress(campaignID: fourth).pending == 2)

        // A paused campaign's rows wait until it is published again.
        try stores.campaigns.setState(id: third, to: .paused, actor: .commandLine, now: soon)
        #expect(try outbox.claim(limit: 10, now: soon).isEmpty)
        try stores.campaigns.setState(id: third, to: .published, actor: .commandLine, now: soon)
        #expect(try outbox.claim(limit: 10, now: soon).count == 2)
        _ = first
    }

    /// Claims racing from many threads through two handles (two instances): every row is claimed exactly once.
    @Test(arguments: StorageEngine.available)
    func racingClaimsTakeEveryRowOnce(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let handles = [database.stores, try database.open()]
        let (_, campaign) = try plannedPush(database, count: 120, now: Self.start)
        let claimed = Mutex<[Int64]>([])
        let errors = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            while true {
                do {
                    let entries = try handles[index % 2].pushOutbox.claim(limit: 7, now: Self.start)
                    if entries.isEmpty { return }
                    claimed.withLock { $0 += entries.map(\.id) }
                } catch {
                    // SQLite's busy timeout can end a claim under this much contention: it claimed nothing.
                    if errors.add(1, ordering: .relaxed).newValue > 50 { return }
                }
            }
        }
        let ids = claimed.withLock { $0 }
        #expect(ids.count == 120)
        #expect(Set(ids).count == 120)
        #expect(try database.stores.pushOutbox.progress(campaignID: campaign).sending == 120)
    }
}

extension InstallationCounts {
    func with(withToken counts: [PushProvider: Int]) -> InstallationCounts {
        var copy = self
        copy.withToken = counts
        return copy
    }
}

extension StorageContractTests {
    @Test(arguments: StorageEngine.available)
    func racingRegistrationsAreEachStoredOnceAndTokensEndWithOneHolder(_ engine: StorageEngine) throws {
        // Registrations racing from threads through two handles (two instances on PostgreSQL), written in
        // groups: some register one installation twice, some take over one token.
        let database = try EngineDatabase(engine)
        let handles = [database.stores, try database.open()]
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Self.start)
        let created = Mutex<[String: Int]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 60) { index in
            let id = "iid-\(index % 40)", token = index.isMultiple(of: 3) ? "shared-token" : "tok-\(index)"
            do {
                let outcome = try handles[index % 2].installations.upsert(
                    appID: shop.id, installationID: id, registration: InstallationRegistration.sample(token: token), now: Self.start)
                if outcome.created { created.withLock { $0[id, default: 0] += 1 } }
                if outcome.installation.installationID != id || outcome.installation.pushToken != token {
                    failures.withLock { $0.append("\(id) answered \(outcome.installation.installationID) \(outcome.installation.pushToken ?? "-")") }
                }
            } catch {
                failures.withLock { $0.append("\(id): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(created.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<40).map { ("iid-\($0)", 1) }))
        let installations = database.stores.installations
        #expect(try installations.counts(appID: shop.id).installations == 40)
        let holders = try installations.withTokens(appID: shop.id, pageSize: Installation.maxPageSize).installations
        #expect(holders.filter { $0.pushToken == "shared-token" }.count == 1)
    }
}
