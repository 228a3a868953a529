import Foundation
import HeraldDomain
@testable import HeraldStorage
import TestSupport
import Testing

/// The storage contract for silent refreshes, on every engine: an app's refreshes are at least its spacing
/// apart, and a change inside the quiet period after one is carried by one refresh at the period's end.
extension StorageContractTests {
    /// An app with `devices` installations holding tokens (iPhones on APNs, Android phones on FCM).
    private func appWithDevices(_ stores: any Stores, name: String = "Shop", devices: Int) throws -> App {
        let shop = try stores.apps.create(name: name, platforms: [.ios, .android], actor: .commandLine, now: Self.start)
        for index in 0..<devices {
            _ = try stores.installations.upsert(
                appID: shop.id, installationID: "iid-\(index)",
                registration: InstallationRegistration.sample(index.isMultiple(of: 2) ? .ios : .android, provider: index.isMultiple(of: 2) ? .apns : .fcm,
                                                token: "tok-\(index)"),
                now: Self.start)
        }
        return shop
    }

    @Test(arguments: StorageEngine.available)
    func refreshesAreSpacedAndAChangeInTheQuietPeriodIsCarriedToItsEnd(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let outbox = database.stores.pushOutbox
        let shop = try appWithDevices(database.stores, devices: 3)
        let spacing: TimeInterval = 600
        func sendDue(at time: Date) throws -> Int {
            let claimed = try outbox.claim(limit: 100, now: time)
            try outbox.record(claimed.map { ($0, .sent(at: time)) }, now: time)
            return claimed.count
        }

        // The first refresh goes at once.
        #expect(try outbox.queueRefresh(appID: shop.id, now: Self.start, spacing: spacing) == 3)
        #expect(try outbox.nextDue()?.asStored == Self.start.asStored)
        #expect(try sendDue(at: Self.start) == 3)

        // Changes a minute and two minutes later: one refresh, at the end of the ten quiet minutes.
        let quietEnd = Self.start.addingTimeInterval(spacing)
        #expect(try outbox.queueRefresh(appID: shop.id, now: Self.start.addingTimeInterval(60), spacing: spacing) == 3)
        #expect(try outbox.nextDue()?.asStored == quietEnd.asStored)
        #expect(try outbox.queueRefresh(appID: shop.id, now: Self.start.addingTimeInterval(120), spacing: spacing) == 0, "carried by the one to come")
        #expect(try sendDue(at: Self.start.addingTimeInterval(599)) == 0)
        #expect(try sendDue(at: quietEnd) == 3)

        // A device registered while a refresh waits joins it; a change long after goes at once again.
        #expect(try outbox.queueRefresh(appID: shop.id, now: quietEnd.addingTimeInterval(1), spacing: spacing) == 3)
        _ = try database.stores.installations.upsert(
            appID: shop.id, installationID: "iid-new", registration: InstallationRegistration.sample(token: "tok-new"), now: quietEnd.addingTimeInterval(2))
        #expect(try outbox.queueRefresh(appID: shop.id, now: quietEnd.addingTimeInterval(3), spacing: spacing) == 1)
        #expect(try sendDue(at: quietEnd.addingTimeInterval(spacing)) == 4)
        let later = quietEnd.addingTimeInterval(3 * spacing)
        #expect(try outbox.queueRefresh(appID: shop.id, now: later, spacing: spacing) == 4)
        #expect(try outbox.nextDue()?.asStored == later.asStored)

        // Another app's refreshes are its own.
        let blog = try database.stores.apps.create(name: "Blog", platforms: [.ios], actor: .commandLine, now: Self.start)
        _ = try database.stores.installations.upsert(appID: blog.id, installationID: "b-1", registration: InstallationRegistration.sample(token: "tok-b"), now: later)
        #expect(try outbox.queueRefresh(appID: blog.id, now: later, spacing: spacing) == 1)
    }

    /// Issue 34's storm, at the default spacing, over an hour of a simulated clock: a campaign paused or resumed
    /// every second sends each device 3 refreshes an hour (before: a refresh a change, once the previous one was sent).
    @Test(arguments: StorageEngine.available)
    func anHourOfPauseAndResumeGivesThreeRefreshesADevice(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let outbox = database.stores.pushOutbox
        let shop = try appWithDevices(database.stores, devices: 10)
        let spacing = TimeInterval(AppPushSettings.defaultRefreshMinutes * 60)
        var sent = 0
        for second in 0..<3600 {
            let now = Self.start.addingTimeInterval(TimeInterval(second))
            let claimed = try outbox.claim(limit: 100, now: now)
            try outbox.record(claimed.map { ($0, .sent(at: now)) }, now: now)
            sent += claimed.count
            _ = try outbox.queueRefresh(appID: shop.id, now: now, spacing: spacing)
        }
        print("[measured] \(engine.rawValue): 3,600 changes in an hour sent \(sent) refreshes to 10 devices (\(sent / 10) a device)")
        #expect(sent == 30, "3 an hour a device: at 0, 20 and 40 minutes")
        #expect(try outbox.nextDue()?.asStored == Self.start.addingTimeInterval(3600).asStored, "the last changes are carried by one at 60 minutes")
    }

    /// Generated runs of in-app changes at any times, with a dispatcher that sends each refresh when it is due:
    /// every device's refreshes are at least the spacing apart, and each change is followed, within the
    /// spacing, by a refresh on every device.
    @Test(arguments: StorageEngine.available)
    func generatedChangesGetSpacedRefreshes(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let outbox = database.stores.pushOutbox
        var run = GeneratedRun("refresh spacing on \(engine.rawValue)", cases: 25)
        run.run(Generated.cases { draw in
            let spacing = draw.pick([1.0, 60, 1200, 86_400])
            var time = Self.start
            let changes = draw.list(1...30) { draw -> Date in
                // Changes in bursts (the pause/resume loop), and far apart.
                time = time.addingTimeInterval(draw.chance(0.7) ? Double(draw.int(0...2000)) / 1000 * spacing / 10 : draw.double(0...(3 * spacing)))
                return Date(timeIntervalSince1970: (time.timeIntervalSince1970 * 1000).rounded() / 1000)
            }
            return (spacing: spacing, changes: changes)
        }) { scenario, run in
            let shop = try appWithDevices(database.stores, name: "Shop \(UUID().uuidString)", devices: 3)
            var sent: [String: [Date]] = [:]
            /// The dispatcher: each row claimed at its due time, sent at once.
            func sendDue(through time: Date) throws {
                while let due = try outbox.nextDue(), due <= time {
                    let claimed = try outbox.claim(limit: 1000, now: due)
                    guard !claimed.isEmpty else { break }
                    try outbox.record(claimed.map { ($0, .sent(at: due)) }, now: due)
                    for entry in claimed where entry.appID == shop.id { sent[entry.installationID, default: []].append(due.asStored) }
                }
            }
            for change in scenario.changes {
                try sendDue(through: change)
                _ = try outbox.queueRefresh(appID: shop.id, now: change, spacing: scenario.spacing)
            }
            try sendDue(through: .distantFuture)
            for device in (0..<3).map({ "iid-\($0)" }) {
                let times = sent[device, default: []]
                let gaps = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
                run.expect(gaps.allSatisfy { $0 >= scenario.spacing - 0.001 }, "\(device)'s refreshes \(gaps) apart, under \(scenario.spacing)", input: scenario)
                for change in scenario.changes {
                    let carried = times.contains { $0 >= change.asStored && $0.timeIntervalSince(change) <= scenario.spacing + 0.001 }
                    run.expect(carried, "\(device) got no refresh within \(scenario.spacing) s of the change at \(change): \(times)", input: scenario)
                }
                run.note(times.count < scenario.changes.count ? "changes coalesced" : "one refresh a change")
            }
        }
    }
}
