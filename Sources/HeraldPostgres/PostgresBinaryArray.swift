import NIOCore
import PostgresNIO

/// One-dimensional arrays without NULLs as PostgreSQL sends them in binary (`array_send`), read straight
/// from a cell's bytes. postgres-nio's own array decoding is generic across modules, so each element went
/// through the runtime's generic metadata: a 90-day report's few thousand elements were a seventh of the
/// stats endpoint's CPU. Anything that is not such an array is `Malformed`, never a trap.
enum PostgresBinaryArray {
    struct Malformed: Error, CustomStringConvertible {
        let reason: String
        var description: String { "a PostgreSQL array in binary did not read: \(reason)" }
    }

    /// An element type and how one element's bytes read (all of them, or it is malformed).
    protocol Element {
        /// The element types (`pg_type` oids) whose binary form this reads.
        static var oids: Set<UInt32> { get }
        static func read(_ bytes: ByteBuffer) -> Self?
    }

    /// The elements of `cell`'s array; none for SQL NULL (`array_agg` over no rows).
    static func read<Value: Element>(_ cell: PostgresCell, as type: Value.Type) throws -> [Value] {
        guard let bytes = cell.bytes else { return [] }
        guard cell.format == .binary else { throw Malformed(reason: "it came as text") }
        return try read(bytes, as: type)
    }

    /// The elements of an array in `bytes`: dimensions, a NULL flag and the element type, then for the one
    /// dimension its length and lower bound, then each element's length and bytes.
    static func read<Value: Element>(_ bytes: ByteBuffer, as type: Value.Type) throws -> [Value] {
        var bytes = bytes
        guard let (dimensions, _, oid) = bytes.readMultipleIntegers(as: (Int32, Int32, UInt32).self) else {
            throw Malformed(reason: "its header is cut short")
        }
        guard dimensions != 0 else {
            guard bytes.readableBytes == 0 else { throw Malformed(reason: "bytes after an empty array") }
            return []
        }
        guard dimensions == 1 else { throw Malformed(reason: "\(dimensions) dimensions") }
        guard Value.oids.contains(oid) else { throw Malformed(reason: "elements of type \(oid), not \(Value.self)") }
        // Each element takes at least its four-byte length, so a count past that is refused before any memory is reserved.
        guard let (count, _) = bytes.readMultipleIntegers(as: (Int32, Int32).self), count >= 0, Int(count) <= bytes.readableBytes / 4 else {
            throw Malformed(reason: "its length does not fit its bytes")
        }
        var elements: [Value] = []
        elements.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            guard let length = bytes.readInteger(as: Int32.self) else { throw Malformed(reason: "element \(index) is cut short") }
            guard length >= 0 else { throw Malformed(reason: "element \(index) is NULL") }
            guard let element = bytes.readSlice(length: Int(length)), let value = Value.read(element) else {
                throw Malformed(reason: "element \(index) does not read as \(Value.self)")
            }
            elements.append(value)
        }
        guard bytes.readableBytes == 0 else { throw Malformed(reason: "bytes after its \(count) elements") }
        return elements
    }
}

extension Int64: PostgresBinaryArray.Element {
    static let oids: Set<UInt32> = [20]  // int8

    static func read(_ bytes: ByteBuffer) -> Int64? {
        bytes.readableBytes == 8 ? bytes.getInteger(at: bytes.readerIndex, as: Int64.self) : nil
    }
}

extension Int32: PostgresBinaryArray.Element {
    static let oids: Set<UInt32> = [23]  // int4

    static func read(_ bytes: ByteBuffer) -> Int32? {
        bytes.readableBytes == 4 ? bytes.getInteger(at: bytes.readerIndex, as: Int32.self) : nil
    }
}

extension Bool: PostgresBinaryArray.Element {
    static let oids: Set<UInt32> = [16]  // bool

    static func read(_ bytes: ByteBuffer) -> Bool? {
        guard bytes.readableBytes == 1, let byte = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self), byte <= 1 else { return nil }
        return byte == 1
    }
}

extension String: PostgresBinaryArray.Element {
    static let oids: Set<UInt32> = [25, 1043]  // text, varchar: both UTF-8 as they are

    /// The server checks that text is valid UTF-8 (the database's encoding); should it not be, the bytes are
    /// read with replacement characters, as postgres-nio reads them.
    static func read(_ bytes: ByteBuffer) -> String? {
        bytes.getString(at: bytes.readerIndex, length: bytes.readableBytes)
    }
}
