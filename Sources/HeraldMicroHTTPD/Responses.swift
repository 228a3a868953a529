import CMicroHTTPD
import Foundation
import HeraldHTTP
import Logging

// Turning a `Response` into libmicrohttpd's and queueing it.

extension Response {
    /// The adapter's own answer to a request it refuses before the handler sees it. The connection is
    /// closed after it: the rest of what the client sent is not read.
    static func refusal(_ status: Int, _ message: String) -> Response {
        var response = Response.text(message + "\n", status: status)
        response.headers.add("Connection", "close")
        SecurityHeaders.apply(to: &response)
        return response
    }

    static func bodyTooLarge(limit: Int) -> Response {
        refusal(413, "The request body is larger than the limit of \(limit / 1024) KiB. Send less data.")
    }
}

func queue(_ response: Response, on connection: OpaquePointer, logger: Logger) -> MHD_Result {
    let made = if let stream = response.stream {
        streamedResponse(stream, logger: logger)
    } else if response.status == 304 {
        // No Content-Length, as nginx sends none: the 200's length made wrk wait for a body that never
        // came, and 0 is not the representation's (RFC 9110 §8.6). libmicrohttpd 0.9.75 leaves it out only
        // in its HTTP/1.0 mode, which closes the connection after the answer.
        herald_mhd_response_without_length(refuseBodyRead)
    } else {
        sharedBodyResponse(response) ?? response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
    }
    guard let mhdResponse = made else { return .NO }
    defer { MHD_destroy_response(mhdResponse) }
    for field in response.headers {
        _ = MHD_add_response_header(mhdResponse, field.name, field.value)
    }
    return MHD_queue_response(connection, UInt32(response.status), mhdResponse)
}

/// A response reading a shared body from its in-memory file (MHD sends it with sendfile and closes
/// its own duplicate of the descriptor); nil when the body is not shared or the file cannot be made.
private func sharedBodyResponse(_ response: Response) -> OpaquePointer? {
    guard let shared = response.sharedBody, let file = shared.prepared(as: MemoryFile.self, MemoryFile.init) else {
        return nil
    }
    let descriptor = dup(file.descriptor)
    guard descriptor >= 0 else { return nil }
    guard let created = MHD_create_response_from_fd_at_offset64(UInt64(file.size), descriptor, 0) else {
        close(descriptor)
        return nil
    }
    return created
}

/// A shared body's bytes in an anonymous in-memory file, closed when the body goes away.
final class MemoryFile: Sendable {
    let descriptor: Int32
    let size: Int

    init?(_ bytes: [UInt8]) {
        let descriptor = bytes.withUnsafeBytes { herald_memory_file($0.baseAddress, $0.count) }
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        size = bytes.count
    }

    deinit {
        close(descriptor)
    }
}

/// The body reader of a 304, which MHD never calls: it sends no body after a 304's header block.
private func refuseBodyRead(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
    herald_content_reader_end_with_error
}

/// A response of unknown length (MHD sends it chunked) whose body MHD asks for as it has room.
private func streamedResponse(_ body: StreamedBody, logger: Logger) -> OpaquePointer? {
    let reader = Unmanaged.passRetained(StreamReader(body: body, logger: logger)).toOpaque()
    // The block size is MHD's buffer for clients without chunked encoding (HTTP/1.0); chunked answers
    // are written straight into the connection's own write buffer.
    guard let created = MHD_create_response_from_callback(UInt64.max, 16 * 1024, readStream, reader, releaseStream) else {
        Unmanaged<StreamReader>.fromOpaque(reader).release()
        return nil
    }
    return created
}

private func readStream(
    _ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
) -> Int {
    guard let cls, let buffer else { return herald_content_reader_end_with_error }
    return Unmanaged<StreamReader>.fromOpaque(cls).takeUnretainedValue().read(into: UnsafeMutableRawPointer(buffer), capacity: capacity)
}

/// MHD is done with the response (sent, failed, or the connection gone): the producer goes with it.
private func releaseStream(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<StreamReader>.fromOpaque(cls).release()
}

/// A streamed body while MHD sends it: it holds at most one piece, and asks for the next only when MHD
/// has room for more than what is left of this one.
private final class StreamReader {
    let body: StreamedBody
    let logger: Logger
    private var piece: [UInt8] = []
    private var sent = 0

    init(body: StreamedBody, logger: Logger) {
        self.body = body
        self.logger = logger
    }

    /// Copies up to `capacity` bytes to `buffer`: the count, MHD's end of stream, or its error, after
    /// which MHD closes the connection without the last chunk, so the client sees a cut-off answer.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        var written = 0
        while written < capacity {
            if sent == piece.count {
                do {
                    guard let next = try body.next() else {
                        piece = []
                        sent = 0
                        break
                    }
                    piece = next
                    sent = 0
                } catch {
                    logger.error("a streamed answer was cut off: \(error)")
                    return herald_content_reader_end_with_error
                }
            }
            let count = min(capacity - written, piece.count - sent)
            piece.withUnsafeBytes { bytes in
                UnsafeMutableRawBufferPointer(start: buffer + written, count: count)
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[sent..<sent + count]))
            }
            sent += count
            written += count
        }
        return written > 0 ? written : herald_content_reader_end_of_stream
    }
}
