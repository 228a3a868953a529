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

    /// When the notification is due on this device: at once for a test campaign; at the start; or, sent
    /// at each device's time, the start's wall-clock time in the device's zone (the schedule's zone when
    /// the device gave none), the next day where that time has already passed.
    static func due(_ campaign: Campaign, timeZone: String?, publishedAt: Date, now: Date) -> Date {
        if campaign.testOnDevice { return now }
        guard let start = campaign.schedule.start else { return publishedAt }
        guard campaign.push?.inDeviceTimeZone == true, let scheduleZone = TimeZoneName.zone(campaign.schedule.timeZone) else { return start }
        let deviceZone = timeZone.flatMap(TimeZoneName.zone) ?? scheduleZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = scheduleZone
        var wallClock = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: start)
        calendar.timeZone = deviceZone
        wallClock.timeZone = deviceZone
        guard var local = calendar.date(from: wallClock) else { return start }
        // At most a day later: a zone's offset is under a day.
        if local < now, let next = calendar.date(byAdding: .day, value: 1, to: local) { local = next }
        return local
    }
}
