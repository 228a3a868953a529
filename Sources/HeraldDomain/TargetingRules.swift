import Foundation

/// What a targeting rule may ask of a device that both a client and the server know: the server
/// evaluates push campaigns against registered installations with the same rules the clients apply
/// to in-app campaigns. (User properties and days since first open live only on the device.)
public struct TargetedDevice: Sendable, Equatable {
    public var platform: Platform
    public var appVersion: String
    public var language: String
    public var country: String

    public init(platform: Platform, appVersion: String, language: String, country: String) {
        self.platform = platform
        self.appVersion = appVersion
        self.language = language
        self.country = country
    }
}

extension Targeting {
    /// Whether the platform, app version, language, country and percentage rules admit `device`.
    public func admits(_ device: TargetedDevice, installationID: String, campaignID: Int64) -> Bool {
        if let platforms, !platforms.contains(device.platform) { return false }
        if let rule = appVersion {
            switch rule.op {
            case .equals: if device.appVersion != rule.value { return false }
            case .contains: if !device.appVersion.contains(rule.value) { return false }
            case .notContains: if device.appVersion.contains(rule.value) { return false }
            case .regex: if !VersionPattern.matches(rule.value, device.appVersion) { return false }
            }
        }
        if let languages, !languages.contains(where: { Self.languageMatches($0, device.language) }) { return false }
        if let countries, !countries.contains(where: { $0.uppercased() == device.country.uppercased() }) { return false }
        if let percentage, Self.rolloutBucket(installationID: installationID, campaignID: campaignID) >= percentage { return false }
        return true
    }

    /// `pt` matches `pt-BR`; `pt-BR` matches only `pt-BR`.
    public static func languageMatches(_ wanted: String, _ actual: String) -> Bool {
        let wanted = wanted.lowercased(), actual = actual.lowercased()
        return wanted == actual || actual.hasPrefix(wanted + "-")
    }

    /// A stable bucket 0–99 per installation and campaign, so a rollout reaches the same devices each time.
    public static func rolloutBucket(installationID: String, campaignID: Int64) -> Int {
        Int(FNV1a.hash("\(campaignID):\(installationID)") % 100)
    }
}

/// FNV-1a, 64 bits, over UTF-8: the rollout bucket (both clients compute the same) and image file names.
public enum FNV1a {
    public static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// App version rules written as regular expressions. The pattern comes from the feed, and a pattern
/// such as `^(a+)+$` backtracks for hours on the wrong version string: the match gives up after
/// `budget` and counts as no match, so one campaign cannot freeze the app that evaluates it.
public enum VersionPattern {
    public static let budget: Duration = .milliseconds(10)
    /// Version strings are short; a longer one is not a version, and is not matched.
    public static let maxVersionLength = 256

    public static func matches(_ pattern: String, _ version: String, budget: Duration = budget) -> Bool {
        guard pattern.scalarCount <= CampaignLimits.appVersionRuleLength, version.utf16.count <= maxVersionLength,
              let regex = try? NSRegularExpression(pattern: pattern) else { return false }
        let deadline = ContinuousClock.now + budget
        var matched = false
        // With `.reportProgress` the block is also called while a long match runs, so it can stop it.
        regex.enumerateMatches(in: version, options: [.reportProgress], range: NSRange(version.startIndex..., in: version)) { result, _, stop in
            if result != nil {
                matched = true
                stop.pointee = true
            } else if ContinuousClock.now > deadline {
                stop.pointee = true
            }
        }
        return matched
    }
}

