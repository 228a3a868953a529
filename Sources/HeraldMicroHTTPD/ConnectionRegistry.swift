import CMicroHTTPD
import Foundation
import Synchronization

/// Nanoseconds of the monotonic clock, for deadlines kept in atomics.
enum MonotonicClock {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}

/// Whom a connection counts against for the per-address limit: an IPv4 address or an IPv6 /64.
struct AddressKey: Hashable, Sendable, CustomStringConvertible {
    let family: Int32
    let value: UInt64

    init(_ key: herald_address_key) {
        family = key.family
        value = key.value
    }

    var description: String {
        text { herald_address_key_text(herald_address_key(family: family, value: value), $0, $1) }
    }
}

/// One open connection as the deadline reaper sees it; MHD keeps it in the connection's socket context.
final class ConnectionRecord: Sendable {
    let descriptor: Int32
    let address: AddressKey
    /// When the connection must have taken its next step (monotonic nanoseconds); 0 while the server
    /// owes it an answer, which the idle timeout bounds instead.
    let deadline: Atomic<UInt64>
    /// Since when the connection waits for a request line (monotonic nanoseconds): from its start or
    /// its previous answer; 0 once a request line has arrived, until that request is answered.
    let idleSince: Atomic<UInt64>

    init(descriptor: Int32, address: AddressKey, deadline: UInt64, now: UInt64) {
        self.descriptor = descriptor
        self.address = address
        self.deadline = Atomic(deadline)
        idleSince = Atomic(now)
    }
}

/// The deadlines a connection's request must meet, from the configuration.
struct RequestDeadlines: Sendable {
    let head: UInt64
    let bodyGrace: UInt64
    let minimumBodyRate: Int

    init(_ configuration: HTTPServerConfiguration) {
        head = MonotonicClock.nanoseconds(configuration.requestHeadTimeout)
        bodyGrace = MonotonicClock.nanoseconds(configuration.requestBodyGrace)
        minimumBodyRate = max(1, configuration.minimumBodyRate)
    }

    /// The whole head must be in by then.
    func headDeadline(from now: UInt64) -> UInt64 {
        now + head
    }

    /// A body begun at `start` that has delivered `received` bytes must deliver more by then.
    func bodyDeadline(start: UInt64, received: Int) -> UInt64 {
        // In floating point, capped at a century, so that no byte count can overflow the sum.
        let earned = min(Double(received) / Double(minimumBodyRate) * 1e9, 3.2e18)
        return start + bodyGrace + UInt64(earned)
    }
}

/// Admits connections within the total and per-address limits, and cuts off the ones that miss their
/// deadline. Every connection it admits is in `records` until libmicrohttpd reports it closed, which
/// happens before MHD closes the socket: so under the lock a record's descriptor is still that
/// connection's, and shutting it down can never hit a descriptor reused by another.
final class ConnectionRegistry: Sendable {
    let deadlines: RequestDeadlines
    let limit: Int
    /// 0 for no limit.
    let perAddressLimit: Int
    /// Whether a connection over a limit closes the connection that has waited longest for a request
    /// line, instead of being refused (`HTTPServerConfiguration.idleConnectionsGiveWay`).
    let idleGiveWay: Bool
    private let state = Mutex(State())

    private struct State {
        var open = 0
        var perAddress: [AddressKey: Int] = [:]
        /// Admitted by the accept policy and not yet started, by event loop: libmicrohttpd starts the
        /// connection right after admitting it, on the same thread, unless it runs out of memory first.
        var admitted: [Int: AddressKey] = [:]
        var records: [ObjectIdentifier: ConnectionRecord] = [:]
        /// Connections closed to make room, no longer counted, until libmicrohttpd reports them closed.
        var gaveWay: Set<ObjectIdentifier> = []
        var refused = Refusals()

        mutating func release(_ address: AddressKey) {
            open -= 1
            let remaining = perAddress[address, default: 1] - 1
            perAddress[address] = remaining > 0 ? remaining : nil
        }
    }

    /// Connections turned away since the last report, and one address that was; and connections closed
    /// to make room for newer ones.
    struct Refusals {
        var overTotal = 0
        var overAddressLimit = 0
        var example: AddressKey?
        var gaveWay = 0
    }

    init(limit: Int, perAddressLimit: Int, deadlines: RequestDeadlines, idleGiveWay: Bool = false) {
        self.limit = limit
        self.perAddressLimit = perAddressLimit
        self.deadlines = deadlines
        self.idleGiveWay = idleGiveWay
    }

    /// Whether a connection from `address`, accepted by event loop `loop`, may stay.
    func admit(_ address: AddressKey, loop: Int) -> Bool {
        state.withLock { state in
            if let unstarted = state.admitted.removeValue(forKey: loop) {
                state.release(unstarted)
            }
            if state.open >= limit, !(idleGiveWay && Self.closeLongestIdle(of: nil, &state)) {
                state.refused.overTotal += 1
                return false
            }
            if perAddressLimit > 0, state.perAddress[address, default: 0] >= perAddressLimit,
               !(idleGiveWay && Self.closeLongestIdle(of: address, &state)) {
                state.refused.overAddressLimit += 1
                state.refused.example = address
                return false
            }
            state.open += 1
            state.perAddress[address, default: 0] += 1
            state.admitted[loop] = address
            return true
        }
    }

    /// Shuts down the connection (of `address`, or of anyone) that has waited longest for a request line,
    /// and stops counting it; libmicrohttpd sees the hang-up and closes it. False when every connection
    /// is sending a request or being answered: those are never cut short.
    private static func closeLongestIdle(of address: AddressKey?, _ state: inout State) -> Bool {
        var longest: (record: ConnectionRecord, since: UInt64)?
        for record in state.records.values where address == nil || record.address == address {
            let since = record.idleSince.load(ordering: .acquiring)
            guard since != 0, !state.gaveWay.contains(ObjectIdentifier(record)) else { continue }
            if longest.map({ since < $0.since }) ?? true { longest = (record, since) }
        }
        guard let record = longest?.record else { return false }
        record.deadline.store(0, ordering: .releasing)
        shutdown(record.descriptor, Int32(SHUT_RDWR))
        state.gaveWay.insert(ObjectIdentifier(record))
        state.release(record.address)
        state.refused.gaveWay += 1
        return true
    }

    /// The record of the connection event loop `loop` just admitted; its request head is due first.
    func started(descriptor: Int32, loop: Int) -> ConnectionRecord? {
        state.withLock { state in
            guard let address = state.admitted.removeValue(forKey: loop) else { return nil }
            let now = MonotonicClock.now()
            let record = ConnectionRecord(descriptor: descriptor, address: address, deadline: deadlines.headDeadline(from: now), now: now)
            state.records[ObjectIdentifier(record)] = record
            return record
        }
    }

    func closed(_ record: ConnectionRecord) {
        state.withLock { state in
            state.records[ObjectIdentifier(record)] = nil
            // One closed to make room was no longer counted.
            if state.gaveWay.remove(ObjectIdentifier(record)) == nil { state.release(record.address) }
        }
    }

    var openConnections: Int {
        state.withLock { $0.open }
    }

    /// Shuts down the sockets of connections past their deadline (libmicrohttpd sees the hang-up and
    /// closes them) and returns how many, with the refusals since the last call.
    func cutOffOverdue(now: UInt64) -> (cutOff: Int, refused: Refusals) {
        state.withLock { state in
            var cutOff = 0
            for record in state.records.values {
                let deadline = record.deadline.load(ordering: .acquiring)
                guard deadline != 0, deadline < now,
                      record.deadline.compareExchange(expected: deadline, desired: 0, ordering: .acquiringAndReleasing).exchanged
                else { continue }
                shutdown(record.descriptor, Int32(SHUT_RDWR))
                cutOff += 1
            }
            defer { state.refused = Refusals() }
            return (cutOff, state.refused)
        }
    }
}
