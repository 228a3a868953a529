import Foundation
import PropertyBased
import Testing

/// Runs a property's generated cases from one seed, printed before the first case, so any failure,
/// a trap included, replays with `HERALD_PROPERTY_SEED=<seed> swift test --filter <test>`.
///
/// Cases run one after another against one application, so a case may depend on what earlier ones
/// stored (duplicate event ids, a campaign to replace); a run seed replays the whole sequence, which
/// a per-case seed (`propertyCheck`'s) cannot. `HERALD_PROPERTY_SCALE` multiplies every count, for
/// longer runs (`make fuzz`).
package struct GeneratedRun {
    package static let seed: UInt64 = ProcessInfo.processInfo.environment["HERALD_PROPERTY_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 1...UInt64.max)
    package static let scale = max(1, ProcessInfo.processInfo.environment["HERALD_PROPERTY_SCALE"].flatMap { Int($0) } ?? 1)
    /// A property stops after this many broken cases: the first ones say what is wrong.
    package static let maxFailures = 5

    package let property: String
    package let count: Int
    package private(set) var random: Xoshiro
    package private(set) var failures = 0
    private var current = ""
    /// How often each outcome happened, printed at the end so a run shows what it exercised.
    private var outcomes: [String: Int] = [:]

    package init(_ property: String, cases: Int) {
        self.property = property
        count = cases * Self.scale
        random = Xoshiro(seed: Self.state(Self.seed, property))
        print("[generated] \(property): \(count) cases, seed \(Self.seed) (replay: HERALD_PROPERTY_SEED=\(Self.seed))")
    }

    /// Calls `check` with `count` values of `generator`, until `maxFailures` of them broke a property.
    package mutating func run<Value>(_ generator: Generator<Value, some Sequence>, _ check: (Value, inout GeneratedRun) throws -> Void) {
        for index in 0..<count where failures < Self.maxFailures {
            let value = generator.run(using: &random)
            current = "case \(index + 1) of \(count)"
            do {
                try check(value, &self)
            } catch {
                fail("threw \(error)", input: value)
            }
        }
        let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
        print("[generated] \(property): \(count) cases (\(summary)), \(failures) broken, seed \(Self.seed)")
    }

    /// Counts an outcome (`201`, `published`, `in the feed`) for the summary.
    package mutating func note(_ outcome: String, _ times: Int = 1) {
        outcomes[outcome, default: 0] += times
    }

    /// Records a broken property for the current case, with what replays it.
    package mutating func expect(_ condition: Bool, _ message: @autoclosure () -> String, input: @autoclosure () -> Any,
                         sourceLocation: SourceLocation = #_sourceLocation) {
        if !condition { fail(message(), input: input(), sourceLocation: sourceLocation) }
    }

    package mutating func fail(_ message: String, input: Any, sourceLocation: SourceLocation = #_sourceLocation) {
        failures += 1
        Issue.record(
            "\(message)\n\(property), \(current), seed \(Self.seed) (replay: HERALD_PROPERTY_SEED=\(Self.seed))\ninput: \(String(describing: input).prefix(4000))",
            sourceLocation: sourceLocation)
    }

    /// The generator state for one property: the run seed and the property's name through SplitMix64,
    /// so each property draws the same values whether it runs alone or with the others.
    private static func state(_ seed: UInt64, _ property: String) -> (UInt64, UInt64, UInt64, UInt64) {
        var mixed = property.utf8.reduce(seed ^ 0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
        func next() -> UInt64 {
            mixed &+= 0x9e37_79b9_7f4a_7c15
            var z = mixed
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        return (next(), next(), next(), next())
    }
}
