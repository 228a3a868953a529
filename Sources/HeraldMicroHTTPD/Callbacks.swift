import CMicroHTTPD
import Foundation
import HeraldHTTP

// libmicrohttpd's callbacks. They are free functions, not closures, so that they carry no actor
// isolation: they run on the event loops' threads.

/// Asked for every accepted connection before MHD sets it up: whether the limits leave room for it.
func admitConnection(
    _ cls: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t
) -> MHD_Result {
    let loop = Unmanaged<EventLoop.Context>.fromOpaque(cls!).takeUnretainedValue()
    return loop.server.connections.admit(AddressKey(herald_address_key_of(address)), loop: loop.index) ? .YES : .NO
}

/// Called when MHD has set up an admitted connection, and when it is about to close its socket: the
/// record of the connection's deadlines lives in MHD's socket context in between.
func connectionChanged(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ change: MHD_ConnectionNotificationCode
) {
    let loop = Unmanaged<EventLoop.Context>.fromOpaque(cls!).takeUnretainedValue()
    guard let connection, let socketContext else { return }
    switch change {
    case .CONNECTION_NOTIFY_STARTED:
        let record = loop.server.connections.started(descriptor: herald_mhd_connection_fd(connection), loop: loop.index)
        socketContext.pointee = record.map { Unmanaged.passRetained($0).toOpaque() }
    case .CONNECTION_NOTIFY_CLOSED:
        loop.closedDuringRun.add(1, ordering: .relaxed)
        guard let pointer = socketContext.pointee else { return }
        socketContext.pointee = nil
        loop.server.connections.closed(Unmanaged<ConnectionRecord>.fromOpaque(pointer).takeRetainedValue())
    default:
        return
    }
}

/// The record of the connection's deadlines, if the registry admitted it.
private func connectionRecord(_ connection: OpaquePointer) -> ConnectionRecord? {
    herald_mhd_socket_context(connection).map { Unmanaged<ConnectionRecord>.fromOpaque($0).takeUnretainedValue() }
}

/// Called when a request line arrives: its return value becomes the request's `req_cls`.
func requestStarted(
    _ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    let context = Unmanaged<ServerContext>.fromOpaque(cls!).takeUnretainedValue()
    context.requestsInFlight.add(1, ordering: .relaxed)
    let record = connection.flatMap(connectionRecord)
    record?.idleSince.store(0, ordering: .releasing)
    let length = uri.map { strlen($0) } ?? 0
    let target = uri.map { requestTarget(UnsafeRawBufferPointer(start: $0, count: length)) } ?? "/"
    let state = RequestState(
        target: target, targetEnd: uri.map { UInt(bitPattern: UnsafeRawPointer($0) + length) } ?? 0, connection: record)
    return Unmanaged.passRetained(state).toOpaque()
}

/// The request target as text. A target is ASCII; bytes past it (sent raw by a careless or hostile
/// client) are percent-encoded rather than replaced, so that decoding the path finds them: raw UTF-8
/// reads as the same text, and anything else is refused as not UTF-8 instead of becoming U+FFFD.
func requestTarget(_ bytes: UnsafeRawBufferPointer) -> String {
    guard bytes.contains(where: { $0 >= 0x80 }) else { return String(decoding: bytes, as: UTF8.self) }
    return PercentEncoding.encode(bytes, keeping: { $0 < 0x80 })
}

/// Called when an answer has been sent (or the request given up): the next request head is due.
func requestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ requestClass: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ termination: MHD_RequestTerminationCode
) {
    let context = Unmanaged<ServerContext>.fromOpaque(cls!).takeUnretainedValue()
    if let record = connection.flatMap(connectionRecord) {
        let now = MonotonicClock.now()
        record.deadline.store(context.connections.deadlines.headDeadline(from: now), ordering: .releasing)
        record.idleSince.store(now, ordering: .releasing)
    }
    guard let requestClass, let state = requestClass.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(state).release()
    requestClass.pointee = nil
    context.requestsInFlight.subtract(1, ordering: .relaxed)
}

/// Called for the headers, once per body chunk, and once more when the request is complete.
func accessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?, _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ requestClass: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    let context = Unmanaged<ServerContext>.fromOpaque(cls!).takeUnretainedValue()
    guard let connection, let requestClass, let statePointer = requestClass.pointee, let uploadDataSize else {
        return .NO
    }
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()
    let limit = context.configuration.maxBodyBytes
    let deadlines = context.connections.deadlines

    if !state.headersSeen {
        // The head is whole and none of the body has been read: refuse here, and MHD closes the
        // connection after the answer without reading further.
        state.headersSeen = true
        let head = requestHeaders(connection)
        let versionText = version.map { String(cString: $0) } ?? ""
        let cutShort = !head.folded && !headIsWhole(connection, method: method, version: version, targetEnd: state.targetEnd, fields: head.fields)
        if let problem = RequestFraming.problem(headers: head.headers, version: versionText, folded: head.folded, cutShort: cutShort) {
            return queue(.refusal(400, problem), on: connection, logger: context.logger)
        }
        state.headers = head.headers
        // A declared length over the cap is refused before the body is read at all (digits past Int are over it too).
        if let declared = head.headers["Content-Length"], Int(declared) ?? .max > limit {
            return queue(.bodyTooLarge(limit: limit), on: connection, logger: context.logger)
        }
        state.bodyStarted = MonotonicClock.now()
        state.connection?.deadline.store(deadlines.bodyDeadline(start: state.bodyStarted, received: 0), ordering: .releasing)
        return .YES
    }

    let chunkSize = uploadDataSize.pointee
    if chunkSize > 0 {
        state.bodyBytesReceived += chunkSize
        state.connection?.deadline.store(
            deadlines.bodyDeadline(start: state.bodyStarted, received: state.bodyBytesReceived), ordering: .releasing)
        if !state.bodyTooLarge, let uploadData {
            if state.body.count + chunkSize > limit {
                // Chunked bodies have no declared length: stop keeping bytes as soon as the cap is passed.
                state.bodyTooLarge = true
                state.body = []
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: chunkSize) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: chunkSize))
                }
            }
        }
        uploadDataSize.pointee = 0
        return .YES
    }

    // The request is whole: from here the server owes the answer, and the idle timeout bounds sending it.
    state.connection?.deadline.store(0, ordering: .releasing)
    if state.bodyTooLarge {
        return queue(.bodyTooLarge(limit: limit), on: connection, logger: context.logger)
    }
    let request = Request(
        method: method.map { String(cString: $0) } ?? "GET",
        target: state.target,
        headers: state.headers,
        body: state.body,
        remoteAddress: clientAddress(connection))
    return queue(context.handler(request), on: connection, logger: context.logger)
}

/// What the access handler reads of the request head.
private final class HeaderCollector {
    var headers = HTTPHeaders()
    /// libmicrohttpd 0.9.75 parses header lines where they arrived, so a name lies before its value in
    /// memory, except after a line continued on the next (obs-fold): MHD appends the continuation to
    /// the header's name, which it copies to fresh memory past the head.
    var folded = false
    /// Where each name and value lies, for `headIsWhole`.
    var fields: [(name: UnsafeRawPointer, nameLength: Int, value: UnsafeRawPointer?, valueLength: Int)] = []
}

private func requestHeaders(_ connection: OpaquePointer) -> HeaderCollector {
    let collector = HeaderCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, .HEADER_KIND, { cls, _, key, value in
            let collector = Unmanaged<HeaderCollector>.fromOpaque(cls!).takeUnretainedValue()
            if let key {
                if let value, UnsafeRawPointer(key) > UnsafeRawPointer(value) { collector.folded = true }
                collector.headers.add(String(cString: key), value.map { String(cString: $0) } ?? "")
                collector.fields.append((UnsafeRawPointer(key), strlen(key), value.map(UnsafeRawPointer.init), value.map { strlen($0) } ?? 0))
            }
            return .YES
        }, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector
}

/// Whether libmicrohttpd read the request line and every header whole: no NUL the client sent cut the
/// target or a value short (`RequestFraming.isWhole`). MHD parses the head in place, in its read buffer,
/// from the method to the empty line; the target was read (`requestStarted`) before MHD changed it, and
/// ends right before the blank MHD overwrote ahead of the version unless a NUL ended it sooner.
private func headIsWhole(
    _ connection: OpaquePointer, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, targetEnd: UInt,
    fields: [(name: UnsafeRawPointer, nameLength: Int, value: UnsafeRawPointer?, valueLength: Int)]
) -> Bool {
    let size = herald_mhd_request_head_size(connection)
    guard let method, let version, size > 0, targetEnd + 1 == UInt(bitPattern: UnsafeRawPointer(version)) else { return false }
    let start = UnsafeRawPointer(method)
    let head = UnsafeRawBufferPointer(start: start, count: size)
    let parsed = fields.map { field in
        RequestFraming.ParsedField(
            name: start.distance(to: field.name), nameLength: field.nameLength,
            value: field.value.map { start.distance(to: $0) } ?? -1, valueLength: field.valueLength)
    }
    return RequestFraming.isWhole(head, requestLineEnd: start.distance(to: UnsafeRawPointer(version)) + strlen(version), fields: parsed)
}

private func clientAddress(_ connection: OpaquePointer) -> String {
    text { herald_mhd_client_address(connection, $0, $1) }
}

/// The text `write` puts into a buffer of 64 bytes (an address), up to its terminating NUL. The buffer is
/// on the stack: this runs for every request.
func text(writtenBy write: (UnsafeMutablePointer<CChar>, Int) -> Void) -> String {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
        guard let start = buffer.baseAddress else { return "" }
        buffer.initialize(repeating: 0)
        write(start, buffer.count)
        buffer[buffer.count - 1] = 0
        return String(cString: start)
    }
}
