import Foundation

/// IANA time zone names as Herald reads them from outside (a campaign's schedule, a user's setting).
public enum TimeZoneName {
    /// Longer than any real zone name: a longer value is refused before Foundation looks it up.
    public static let maximumLength = 64

    /// The zone `name` names, or nil when it names none (or is too long to be a name).
    public static func zone(_ name: String) -> TimeZone? {
        name.utf8.count <= maximumLength ? TimeZone(identifier: name) : nil
    }
}
