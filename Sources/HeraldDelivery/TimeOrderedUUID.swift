import Foundation

/// UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Event ids made this way
/// sort by time, so the server's index of event ids grows at its end instead of at random places,
/// which keeps ingestion's page writes few; they are as unique as random UUIDs.
enum TimeOrderedUUID {
    static func make(at date: Date, using generator: inout some RandomNumberGenerator) -> UUID {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        for index in 0..<6 {
            bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index)))
        }
        bytes[6] = 0x70 | (bytes[6] & 0x0f)  // version 7
        bytes[8] = 0x80 | (bytes[8] & 0x3f)  // RFC 9562 variant
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    static func make(at date: Date) -> UUID {
        var generator = SystemRandomNumberGenerator()
        return make(at: date, using: &generator)
    }
}
