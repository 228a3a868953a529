import Foundation
import HeraldHTTP
import Synchronization

/// Names each request, so that a user's screenshot of an error page leads to its log line: the id is
/// echoed in `X-Request-Id`, shown on error pages and in API error bodies, and logged with the request.
/// A trusted proxy's own id (nginx's `$request_id` passed as `X-Request-Id`) is kept, so one id follows
/// the request through both logs; anyone else's is replaced, as it could be made to look like another's.
final class RequestIDs: Sendable {
    static let header = "X-Request-Id"
    /// Random per process, so that ids from before a restart are not handed out again.
    private let prefix: String
    private let counter = Atomic<UInt64>(0)
    private let trustedProxies: [AddressRange]

    init(trustedProxies: [AddressRange]) {
        prefix = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
        self.trustedProxies = trustedProxies
    }

    func id(for request: Request) -> String {
        if !trustedProxies.isEmpty, let socket = IPAddress(request.remoteAddress),
           trustedProxies.contains(where: { $0.contains(socket) }),
           let given = request.headers[Self.header], Self.isWellFormed(given) {
            return given
        }
        let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return prefix + "-" + String(number, radix: 16)
    }

    /// 1 to 64 letters, digits, `-`, `_` and `.`: safe in a header, a log line and a page as it is.
    static func isWellFormed(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E
        }
    }
}
