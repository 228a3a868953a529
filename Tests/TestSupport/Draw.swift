import Foundation
import PropertyBased

/// Draws one generated case's values from the run's generator, with PropertyBased's generators for
/// the leaves. Cases are built imperatively because each is a document and what the application
/// should answer to it, decided together as the document is drawn.
package struct Draw {
    package var random: Xoshiro

    package mutating func int(_ range: ClosedRange<Int>) -> Int {
        Gen.int(in: range).run(using: &random)
    }

    package mutating func int64(_ range: ClosedRange<Int64>) -> Int64 {
        Gen.int64(in: range).run(using: &random)
    }

    /// True with probability `rate`.
    package mutating func chance(_ rate: Double) -> Bool {
        Gen.bool(Float(rate)).run(using: &random)
    }

    package mutating func pick<Element>(_ items: [Element]) -> Element {
        items[int(0...(items.count - 1))]
    }

    package mutating func double(_ range: ClosedRange<Double>) -> Double {
        Gen.double(in: range).run(using: &random)
    }

    /// A scalar from `range`, skipping the surrogate code points (which are not scalars).
    package mutating func scalar(_ range: ClosedRange<UInt32>) -> Unicode.Scalar {
        let value = Gen<UInt32>.value(in: range).run(using: &random)
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    /// `count` items made by `make`.
    package mutating func list<Element>(_ count: ClosedRange<Int>, _ make: (inout Draw) -> Element) -> [Element] {
        (0..<int(count)).map { _ in make(&self) }
    }
}

/// Generators of whole cases, for `GeneratedRun`.
package enum Generated {
    /// A generator whose values `build` draws; its state comes from the run's generator, so a seed replays it.
    package static func cases<Value>(_ build: @escaping @Sendable (inout Draw) -> Value) -> Generator<Value, Shrink.None<Value>> {
        Generator { random in
            var draw = Draw(random: Xoshiro(seed: (random.next(), random.next(), random.next(), random.next())))
            return build(&draw)
        }
    }
}
