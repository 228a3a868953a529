import Foundation
import HeraldDomain
import Testing

/// UTCTime is total and exact: every supported instant reads back from what it writes, and no text traps.
@Suite("UTC time text")
struct UTCTimeTests {
    @Test("Every supported instant, written as RFC 3339 and as a day, reads back to itself")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        let low = Int64(UTCTime.supported.lowerBound.timeIntervalSince1970 * 1000)
        let high = Int64(UTCTime.supported.upperBound.timeIntervalSince1970 * 1000)
        let samples = [low, high, 0, 951_782_400_000, 4_102_444_799_999].filter { (low...high).contains($0) }
            + (0..<5000).map { _ in Int64.random(in: low...high, using: &generator) }
        for milliseconds in samples {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = UTCTime.rfc3339(date)
            #expect(UTCTime.date(rfc3339: text) == date, "\(text)")
            let day = UTCTime.day(date)
            #expect(UTCTime.date(day: day).map(UTCTime.day) == day)
        }
    }

    @Test("Writing is total: dates far outside any calendar give text, not a trap")
    func writingIsTotal() {
        for seconds in [-1e20, -62_167_219_200, -1, 253_402_300_800, 1e20, .infinity, -.infinity, .nan] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(!UTCTime.day(date).isEmpty)
            #expect(!UTCTime.timestamp(date).isEmpty)
            let readBack = UTCTime.date(rfc3339: UTCTime.rfc3339(date))
            #expect(readBack == nil || readBack == date || seconds.isNaN, "\(seconds)")
        }
        #expect(UTCTime.day(Date(timeIntervalSince1970: -62_167_219_200)) == "0000-01-01")
        #expect(UTCTime.day(Date(timeIntervalSince1970: -62_198_755_200)) == "-0001-01-01")
    }

    @Test("Reading is total: random and mutated text is refused, or read to a date that writes back to itself")
    func readingIsTotal() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789-+:.TZtz 9".utf8)
        let seeds = ["2026-11-21T10:15:00Z", "0000-01-01T00:00:00+18:00", "9999-12-31T23:59:59.9999-23:59", "2000-01-01"]
        for _ in 0..<20_000 {
            var bytes = Array(seeds.randomElement(using: &generator)!.utf8)
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let index = Int.random(in: 0...bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where index < bytes.count: bytes[index] = alphabet.randomElement(using: &generator)!
                case 1 where index < bytes.count: bytes.remove(at: index)
                default: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let date = UTCTime.date(rfc3339: text), UTCTime.supported.contains(date) {
                #expect(UTCTime.date(rfc3339: UTCTime.rfc3339(date)) == date, "\(text)")
            }
            if let date = UTCTime.date(day: text) { #expect(UTCTime.supported.contains(date), "\(text)") }
        }
    }
}
