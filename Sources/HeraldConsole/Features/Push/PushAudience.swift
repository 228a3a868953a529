import Foundation
import HeraldDomain
import HeraldStorage

/// Who gets a push campaign, and when: its targeting evaluated on the server against registered
/// installations, with the rules clients apply to in-app campaigns.
enum PushAudience {
    static func admits(_ installation: Installation, campaign: Campaign, campaignID: Int64, testDevices: Set<String>) -> Bool {
        if campaign.testOnDevice && !testDevices.contains(installation.installationID) { return false }
        // A device whose user turned notifications off shows no alert; a silent push still wakes the app.
        if campaign.push?.silent != true && !installation.notificationsAllowed { return false }
        let device = TargetedDevice(
            platform: installation.platform, appVersion: installation.appVersion ?? "", language: installation.language ?? "",
            country: installation.country ?? "")
        return campaign.targeting.admits(device, installationID: installation.installationID, campaignID: campaignID)
    }

    /// When the notification is due on this device: at once for a test campaign; at the start; or, sent at
    /// each device's time, the start's wall-clock time in the device's zone (the schedule's zone when the
    /// device gave none), at its next occurrence where it has already passed (a start days ago included), so
    /// no device gets it at another hour. Nil when that time never comes inside Herald's range (a start near
    /// 9999-12-31 on a device west of the schedule's zone): such a device is not sent to.
    static func due(_ campaign: Campaign, timeZone: String?, publishedAt: Date, now: Date) -> Date? {
        if campaign.testOnDevice { return now }
        guard let start = campaign.schedule.start else { return publishedAt }
        guard campaign.push?.inDeviceTimeZone == true, let scheduleZone = TimeZoneName.zone(campaign.schedule.timeZone) else { return start }
        let deviceZone = timeZone.flatMap(TimeZoneName.zone) ?? scheduleZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = scheduleZone
        let wallClock = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: start)
        calendar.timeZone = deviceZone
        guard var local = calendar.date(from: wallClock) else { return nil }
        if local < now {
            // The start's time of day on the device's today, or tomorrow when that has passed too.
            var today = calendar.dateComponents([.year, .month, .day], from: now)
            (today.hour, today.minute, today.second, today.nanosecond) = (wallClock.hour, wallClock.minute, wallClock.second, wallClock.nanosecond)
            guard let sameDay = calendar.date(from: today) else { return nil }
            local = sameDay
            // A zone's offset is under a day, so one more day is always enough.
            if local < now {
                guard let nextDay = calendar.date(byAdding: .day, value: 1, to: local) else { return nil }
                local = nextDay
            }
        }
        return UTCTime.supported.contains(local) ? local : nil
    }
}
