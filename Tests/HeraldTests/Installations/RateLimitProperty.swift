import Foundation
import TestSupport
import Testing
@testable import HeraldConsole

/// The limiter behind installation registrations (`SlidingWindowLimiter`), driven by generated sequences
/// of requests from a few subjects at moving times: no stretch of one window ever holds more admitted
/// requests from a subject than the limit while the subject stayed tracked; the table never holds more
/// subjects than its capacity; a refusal's wait is more than zero, at most a window and a slice (so
/// `Retry-After` is 1 to 66 for a minute), and honest: asked again after `Retry-After`, the subject is admitted.
@Suite("Generated inputs: registration rate limits")
struct RateLimitProperty {
    struct Scenario: CustomStringConvertible {
        var limit: Int
        var window: TimeInterval
        var capacity: Int
        /// Subject and seconds since the previous step; steps are multiples of 1/8 s, exact in binary, so
        /// the oracle's arithmetic and the limiter's agree at slice edges.
        var steps: [(subject: String, after: TimeInterval)]

        var description: String {
            "limit \(limit) per \(window) s, capacity \(capacity): " + steps.map { "\($0.subject)+\($0.after)" }.joined(separator: " ")
        }
    }

    @Test func noWindowHoldsMoreThanTheLimitAndTheTableStaysBounded() {
        var run = GeneratedRun("registration rate limits", cases: 400)
        run.run(Generated.cases { draw -> Scenario in
            let window = TimeInterval(draw.pick([10, 20, 60, 3600]))
            let subjects = (0..<draw.int(1...6)).map { "s\($0)" }
            let steps = draw.list(1...120) { draw -> (String, TimeInterval) in
                // Mostly bursts, sometimes a pause of up to two windows.
                let eighths = draw.chance(0.1) ? draw.int(0...Int(window) * 16) : draw.int(0...Int(window) / 2)
                return (draw.pick(subjects), TimeInterval(eighths) / 8)
            }
            return Scenario(limit: draw.int(1...8), window: window, capacity: draw.int(1...7), steps: steps)
        }) { scenario, run in
            var limiter = SlidingWindowLimiter(limit: scenario.limit, window: scenario.window, capacity: scenario.capacity)
            var now = Date(timeIntervalSinceReferenceDate: 811_692_800)
            // Admission times per subject since it was last (re)tracked.
            var admitted: [String: [Date]] = [:]
            let longestWait = scenario.window + scenario.window / Double(SlidingWindowLimiter.slicesPerWindow)
            for step in scenario.steps {
                now = now.addingTimeInterval(step.after)
                if let wait = limiter.wait(for: step.subject, now: now) {
                    run.expect(wait > 0 && wait <= longestWait, "a wait of \(wait) s for a \(scenario.window) s window", input: scenario)
                    let retryAfter = SlidingWindowLimiter.retryAfter(wait)
                    run.expect(retryAfter >= 1 && Double(retryAfter) <= longestWait.rounded(.up), "Retry-After \(retryAfter)", input: scenario)
                    var probe = limiter
                    run.expect(probe.wait(for: step.subject, now: now.addingTimeInterval(TimeInterval(retryAfter))) == nil,
                               "still refused after the Retry-After it was told (\(retryAfter) s)", input: scenario)
                    run.note("refused")
                } else {
                    limiter.record(step.subject, now: now)
                    admitted[step.subject, default: []].append(now)
                    let inWindow = admitted[step.subject, default: []].filter { now.timeIntervalSince($0) < scenario.window }.count
                    run.expect(inWindow <= scenario.limit, "\(inWindow) admitted within \(scenario.window) s for \(step.subject)", input: scenario)
                    run.note("admitted")
                }
                run.expect(limiter.trackedCount <= scenario.capacity, "\(limiter.trackedCount) subjects tracked", input: scenario)
                for subject in admitted.keys where !limiter.isTracked(subject) {
                    admitted[subject] = nil
                    run.note("forgotten")
                }
            }
        }
    }
}
