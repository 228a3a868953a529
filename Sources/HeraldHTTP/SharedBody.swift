import Synchronization

/// A response body served many times unchanged (an app's encoded feed). The adapter may prepare it
/// once for its own way of sending (a file it can `sendfile` from); what it prepared lives as long as
/// the body, so an old body's preparation goes away with the last response that uses it.
public final class SharedBody: Sendable {
    public let bytes: [UInt8]
    private let prepared = Mutex<(any Sendable & AnyObject)?>(nil)

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// What `make` built from these bytes the first time it was asked for (nil if it failed; then it is
    /// tried again next time).
    public func prepared<Prepared: Sendable & AnyObject>(as type: Prepared.Type, _ make: ([UInt8]) -> Prepared?) -> Prepared? {
        prepared.withLock { slot in
            if let existing = slot as? Prepared { return existing }
            let made = make(bytes)
            slot = made
            return made
        }
    }
}
