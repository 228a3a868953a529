import Synchronization

/// A response body made piece by piece while the client reads it, so a large answer (an export of
/// every campaign) never sits in memory whole: the adapter asks for the next piece only when the
/// socket can take more, and holds at most one piece per connection.
public final class StreamedBody: Sendable {
    /// Makes the next piece; nil at the end. A producer that throws ends the body early, and the
    /// adapter closes the connection without the final chunk, so the client sees a truncated answer
    /// rather than a complete-looking one.
    public typealias Producer = () throws -> [UInt8]?

    private let producer: Mutex<Producer?>

    public init(_ producer: sending @escaping Producer) {
        self.producer = Mutex(producer)
    }

    /// The next non-empty piece; nil at the end. Throws what the producer threw, after which the body is over.
    public func next() throws -> [UInt8]? {
        try producer.withLock { current -> [UInt8]? in
            guard let produce = current else { return nil }
            do {
                while let piece = try produce() {
                    if !piece.isEmpty { return piece }
                }
                current = nil
                return nil
            } catch {
                current = nil
                throw error
            }
        }
    }

    /// Every remaining piece joined, for tests and callers without a socket.
    public func collect() throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let piece = try next() { bytes += piece }
        return bytes
    }
}
