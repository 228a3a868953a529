import Foundation
import HeraldDomain
import HeraldHTTP
import TestSupport
import Testing
@testable import HeraldConsole

/// A run of combining marks costs Swift the square of its length to compare or hash (normalization sorts
/// it): one form field of 300,000 marks took 33 s of a core before. Text from outside holding more than
/// `CombiningMarks.longestRun` in a row is refused before anything compares it, wherever it comes: a JSON
/// key or value of the API (as UTF-8 or `\u` escapes), an event batch's key or value (JSON or a beacon's
/// text/plain), a form field's name or value. Each refusal is a 400 that says why and comes at once; a
/// run within the limit is judged by the usual rules.
@Suite("Generated inputs: runs of combining marks")
struct CombiningRunProperty {
    enum Place: CaseIterable {
        case campaignValue, campaignKey, installationValue, eventValue, eventKey, beaconValue, formValue, formName
    }

    /// A letter and `marks` combining marks drawn from a cycle, in JSON as UTF-8 or as `\u` escapes. (U+034F,
    /// the combining grapheme joiner, is a starter to normalization, so it would end the run: U+0301 stands in.)
    static func pile(_ marks: Int, start: Int, step: Int, escaped: Bool) -> String {
        var text = "a"
        for index in 0..<marks {
            let drawn = 0x0300 + (start + index * step) % 0x70
            let value = drawn == 0x034F ? 0x0301 : drawn
            text += escaped ? String(format: "\\u%04x", value) : String(Unicode.Scalar(UInt32(value))!)
        }
        return text
    }

    @Test func longRunsAreRefusedAtOnceWhereverTheyCome() async throws {
        let (app, browser) = try await TestApp.withAdmin { $0.liftRegistrationLimits() }
        let registry = AppRegistry(database: app.database)
        let shop = try registry.createApp(name: "Runs", platforms: [.ios, .web], actor: .commandLine, now: app.clock.now)
        let appID = shop.id
        let key = try registry.createKey(appID: appID, name: "all", scopes: [.campaignsWrite, .eventsWrite], actor: .commandLine, now: app.clock.now).secret
        let bearer = [("Authorization", "Bearer \(key)")]
        var run = GeneratedRun("runs of combining marks", cases: 240)
        run.run(Generated.cases { draw -> (place: Place, marks: Int, start: Int, step: Int, escaped: Bool) in
            let marks = draw.chance(0.1) ? draw.int(100_000...170_000) : draw.chance(0.5) ? draw.int(1...CombiningMarks.longestRun) : draw.int(31...3000)
            return (draw.pick(Place.allCases), marks, draw.int(0...0x6F), draw.int(1...13), draw.chance(0.4))
        }) { input, run in
            let escapable = [.campaignValue, .campaignKey, .installationValue, .eventValue, .eventKey].contains(input.place)
            let text = Self.pile(input.marks, start: input.start, step: input.step, escaped: input.escaped && escapable)
            let request: Request
            switch input.place {
            case .campaignValue, .campaignKey:
                let name = input.place == .campaignValue ? "\"\(text)\"" : "\"Sale\""
                let extra = input.place == .campaignKey ? ", \"\(text)\": 1" : ""
                request = Request(method: "POST", target: "/api/v1/campaigns", headers: HTTPHeaders(bearer + [("Content-Type", "application/json")]),
                                  body: Array("{\"app\": \(appID), \"name\": \(name), \"message\": {\"layout\": \"banner\", \"title\": {\"text\": \"Hi\"}}\(extra)}".utf8))
            case .installationValue:
                request = Request(method: "PUT", target: "/api/v1/installations/iid-1", headers: HTTPHeaders(bearer + [("Content-Type", "application/json")]),
                                  body: Array("{\"platform\": \"ios\", \"notificationsAllowed\": true, \"appVersion\": \"\(text)\"}".utf8))
            case .eventValue, .eventKey, .beaconValue:
                let event = input.place == .eventKey ? "{\"\(text)\": \"x\"}" : "{\"id\": \"0190a0e4-7c3e-7000-8000-000000000001\", \"type\": \"\(text)\"}"
                let beacon = input.place == .beaconValue
                request = Request(method: "POST", target: beacon ? "/api/v1/events?key=\(key)" : "/api/v1/events",
                                  headers: HTTPHeaders((beacon ? [] : bearer) + [("Content-Type", beacon ? "text/plain" : "application/json")]),
                                  body: Array("{\"events\": [\(event)]}".utf8))
            case .formValue, .formName:
                let pair = input.place == .formValue ? "name=" + PercentEncoding.encode(text) : PercentEncoding.encode(text) + "=x"
                request = Request(method: "POST", target: "/account", headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")]),
                                  body: Array(("csrf_token=x&" + pair).utf8))
            }
            let started = ContinuousClock.now
            let response = input.place == .formValue || input.place == .formName ? browser.send(request) : app.respond(request)
            let elapsed = ContinuousClock.now - started
            let over = input.marks > CombiningMarks.longestRun
            let refusedForMarks = response.status == 400 && response.text.contains("combining marks")
            run.expect(refusedForMarks == over, "\(response.status) \(response.text.prefix(200))", input: "\(input.place) \(input.marks) marks, escaped \(input.escaped)")
            // Linear work: a megabyte of marks is read in well under a second even in a debug build.
            run.expect(elapsed < .seconds(2), "took \(elapsed)", input: "\(input.place) \(input.marks) marks")
            run.note(over ? "refused" : "judged as usual")
        }
        #expect(run.failures == 0)
    }

    @Test("The three Tibetan vowel signs that decompose into two marks count as two")
    func tibetanSignsCountTwice() {
        #expect(!CombiningMarks.exceedRun(in: "\u{F40}" + String(repeating: "\u{F73}", count: 15)))
        #expect(CombiningMarks.exceedRun(in: "\u{F40}" + String(repeating: "\u{F73}", count: 16)))
        #expect(CombiningMarks.exceedRun(in: "a" + String(repeating: "\u{301}", count: 31)))
        #expect(!CombiningMarks.exceedRun(in: String(repeating: "a" + String(repeating: "\u{301}", count: 30), count: 100)))
    }
}
