import CZlib

/// zlib's inflate, for the tests: the server only compresses.
package func gunzip(_ bytes: [UInt8]) -> [UInt8]? {
    var stream = z_stream()
    guard herald_inflate_init_gzip(&stream) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var input = bytes
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    return input.withUnsafeMutableBufferPointer { input in
        stream.next_in = input.baseAddress
        stream.avail_in = uInt(input.count)
        while true {
            let status = chunk.withUnsafeMutableBufferPointer { out in
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return inflate(&stream, Z_NO_FLUSH)
            }
            output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
            if status == Z_STREAM_END { return stream.avail_in == 0 ? output : nil }
            guard status == Z_OK else { return nil }
        }
    }
}
