import CMicroHTTPD
import Foundation
import HeraldHTTP

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

func queue(_ response: Response, on connection: OpaquePointer) -> MHD_Result {
    guard let mhdResponse = sharedBodyResponse(response) ?? response.body.withUnsafeBytes({ bytes in
        MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }) else { return .NO }
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
