import Foundation
@testable import HeraldConsole
import HeraldDomain
import PropertyBased
@testable import HeraldStorage
import TestSupport
import Testing

/// Push campaigns sent at each device's time, with starts across Herald's whole range (its two ends
/// included), published at any time, for devices in any of the system's time zones: each device's due time
/// is never before the publication, never outside the range, is the start's wall-clock time on the device
/// (its next occurrence when it has passed), and is missing only where that time never comes inside the
/// range. Planned into the outbox of each engine, the rows come out in the order of their instants and
/// exactly those due by a cut.
@Suite("Generated inputs: device-time push due times")
struct PushDueTimeProperty {
    static let zones = TimeZone.knownTimeZoneIdentifiers.filter { TimeZoneName.zone($0) != nil }
    static let devices = 8

    struct Case: CustomStringConvertible {
        var start: Date
        var scheduleZone: String
        var now: Date
        var deviceZones: [String]
        var cut: Date

        var description: String {
            "start \(UTCTime.rfc3339(start)) in \(scheduleZone), published \(UTCTime.rfc3339(now)), devices in \(deviceZones), cut \(UTCTime.rfc3339(cut))"
        }
    }

    /// An instant anywhere in the range, or within days of either end, to the millisecond.
    static func instant(_ draw: inout Draw) -> Date {
        let range = UTCTime.supported
        let seconds: Double = switch draw.int(0...3) {
        case 0: range.lowerBound.timeIntervalSince1970 + draw.double(0...(4 * 86_400))
        case 1: range.upperBound.timeIntervalSince1970 - draw.double(0...(4 * 86_400))
        case 2: draw.double(1_700_000_000...2_100_000_000)
        default: draw.double(range.lowerBound.timeIntervalSince1970...range.upperBound.timeIntervalSince1970)
        }
        return Date(timeIntervalSince1970: (seconds * 1000).rounded(.down) / 1000)
    }

    static func generator() -> Generator<Case, Shrink.None<Case>> {
        Generated.cases { draw in
            let start = instant(&draw)
            let now = draw.chance(0.3) ? start.addingTimeInterval(draw.double(-3 * 86_400...(10 * 86_400))) : instant(&draw)
            let clampedNow = min(max(now, UTCTime.supported.lowerBound), UTCTime.supported.upperBound)
            return Case(
                start: start, scheduleZone: draw.pick(zones), now: clampedNow, deviceZones: (0..<devices).map { _ in draw.pick(zones) },
                cut: clampedNow.addingTimeInterval(draw.double(0...(2 * 86_400))))
        }
    }

    /// Whether the device's zone changes its offset within a day of `date` (a wall-clock time may not exist then).
    static func nearTransition(_ zone: TimeZone, _ date: Date) -> Bool {
        zone.secondsFromGMT(for: date.addingTimeInterval(-86_400)) != zone.secondsFromGMT(for: date.addingTimeInterval(86_400))
    }

    @Test(arguments: StorageEngine.available)
    func dueTimesAreTheDevicesWallClockInsideTheRangeAndSortAsInstants(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let stores = database.stores
        let shop = try stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Date())
        let installations = try (0..<Self.devices).map { index in
            try stores.installations.upsert(
                appID: shop.id, installationID: "iid-\(index)",
                registration: InstallationRegistration(platform: .ios, pushProvider: .apns, pushToken: String(format: "%064x", index), notificationsAllowed: true),
                now: Date()).installation
        }
        var run = GeneratedRun("device-time due times on \(engine.rawValue)", cases: 120)
        run.run(Self.generator()) { scenario, run in
            var scheduleCalendar = Calendar(identifier: .gregorian)
            scheduleCalendar.timeZone = TimeZone(identifier: scenario.scheduleZone)!
            let wallClock = scheduleCalendar.dateComponents([.hour, .minute, .second], from: scenario.start)
            let campaign = Campaign(
                app: shop.id, name: "Morning", schedule: Schedule(start: scenario.start, timeZone: scenario.scheduleZone),
                push: PushNotification(title: "Good morning", inDeviceTimeZone: true))
            var entries: [(installation: Installation, due: Date?)] = []
            for (installation, zoneName) in zip(installations, scenario.deviceZones) {
                let due = PushAudience.due(campaign, timeZone: zoneName, publishedAt: scenario.now, now: scenario.now)
                entries.append((installation, due))
                guard let due else {
                    // Only where the wall-clock time is past the range's end on every day from the publication on.
                    let end = UTCTime.supported.upperBound.addingTimeInterval(-2 * 86_400)
                    run.expect(max(scenario.start, scenario.now) > end, "no due time for \(zoneName) far from the range's end", input: scenario)
                    run.note("never inside the range")
                    continue
                }
                run.expect(UTCTime.supported.contains(due), "due \(due) for \(zoneName) is outside the range", input: scenario)
                run.expect(due >= scenario.now, "due \(UTCTime.rfc3339(due)) for \(zoneName) is before the publication", input: scenario)
                if scenario.start < scenario.now {
                    run.expect(due.timeIntervalSince(scenario.now) <= 86_400 + 3600, "a passed start is not its next occurrence for \(zoneName)", input: scenario)
                }
                let zone = TimeZone(identifier: zoneName)!
                var deviceCalendar = Calendar(identifier: .gregorian)
                deviceCalendar.timeZone = zone
                if !Self.nearTransition(zone, due) && !Self.nearTransition(scheduleCalendar.timeZone, scenario.start) {
                    let local = deviceCalendar.dateComponents([.hour, .minute, .second], from: due)
                    run.expect(local == wallClock, "due at \(local) in \(zoneName), not the start's \(wallClock)", input: scenario)
                }
                run.note(scenario.start < scenario.now ? "start passed" : "start to come")
            }

            // Planned into the outbox: claimed in the order of the instants, exactly those due by the cut.
            let id = try stores.campaigns.create(campaign, state: .published, actor: .commandLine, now: Date())
            try stores.pushOutbox.plan(campaignID: id, appID: shop.id, entries: entries, through: nil, complete: true, now: scenario.now)
            let byInstant = entries.compactMap { entry in entry.due.map { (entry.installation.installationID, $0.storedMilliseconds) } }
                .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
            let firstClaim = try stores.pushOutbox.claim(limit: 100, now: scenario.cut)
            let rest = try stores.pushOutbox.claim(limit: 100, now: UTCTime.supported.upperBound)
            let cutMilliseconds = scenario.cut.storedMilliseconds
            run.expect(Set(firstClaim.map(\.installationID)) == Set(byInstant.filter { $0.1 <= cutMilliseconds }.map(\.0)),
                       "the cut claimed \(firstClaim.map(\.installationID))", input: scenario)
            let order = (firstClaim + rest).map(\.installationID)
            // Rows claimed together come in due order; equal instants in row order, which is the installations'.
            run.expect(order == byInstant.map(\.0), "claimed \(order), not in the instants' order \(byInstant)", input: scenario)
            try stores.pushOutbox.record((firstClaim + rest).map { ($0, .sent(at: scenario.now)) }, now: scenario.now)
            let skipped = try stores.pushOutbox.progress(campaignID: id).skipped
            run.expect(skipped == entries.count - byInstant.count, "\(skipped) skipped, not those without a due time", input: scenario)
        }
    }
}
