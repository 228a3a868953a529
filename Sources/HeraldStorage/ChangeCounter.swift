import Synchronization

/// A number that goes up whenever something observed changes.
public final class ChangeCounter: Sendable {
    private let value = Atomic<Int>(0)

    public init() {}

    public var current: Int { value.load(ordering: .acquiring) }

    public func bump() {
        value.add(1, ordering: .releasing)
    }
}
