import Synchronization

/// A response body served many times unchanged (an app's encoded feed). The adapter may prepare it
/// once for its own way of sending (a file it can `sendfile` from); what it prepared lives as long as
/// the body, so an old body's preparation goes away with the last response that uses it.
public final class SharedBody: Sendable {
    public let bytes: [UInt8]
    /// Set once and then only read, without a lock: every 200 of the feed asks for it.
    private let prepared = AtomicLazyReference<Prepared>()

    private final class Prepared: Sendable {
        let value: any Sendable & AnyObject

        init(_ value: any Sendable & AnyObject) {
            self.value = value
        }
    }

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// What `make` built from these bytes the first time it succeeded (nil if it failed; then it is
    /// tried again next time). Two threads may both make it at first; one result is kept.
    public func prepared<Made: Sendable & AnyObject>(as type: Made.Type, _ make: ([UInt8]) -> Made?) -> Made? {
        if let existing = prepared.load() { return existing.value as? Made }
        guard let made = make(bytes) else { return nil }
        return prepared.storeIfNil(Prepared(made)).value as? Made
    }
}
