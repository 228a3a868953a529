import NIOCore
import PostgresNIO
@testable import HeraldPostgres

/// `PostgresBinaryArray`, the reader of a report row's arrays (`PostgresEventCounts`): any bytes read as
/// each element type are values or `Malformed`, never a trap; the values read are what postgres-nio's
/// encoder writes back into bytes that read as the same values.
enum PostgresArrayTarget {
    static func run(_ bytes: [UInt8]) {
        let buffer = ByteBuffer(bytes: bytes)
        check(buffer, Int64.self)
        check(buffer, Int32.self)
        check(buffer, Bool.self)
        check(buffer, String.self)
    }

    static func check<Value: PostgresBinaryArray.Element & PostgresArrayEncodable & Equatable>(_ buffer: ByteBuffer, _ type: Value.Type) {
        let values: [Value]
        do {
            values = try PostgresBinaryArray.read(buffer, as: type)
        } catch is PostgresBinaryArray.Malformed {
            return
        } catch {
            require(false, "refused with something other than Malformed: \(error)")
            return
        }
        var written = ByteBuffer()
        do {
            try values.encode(into: &written, context: .default)
            require(try PostgresBinaryArray.read(written, as: type) == values, "\(values) did not read back once written")
        } catch {
            require(false, "\(values) written again did not read: \(error)")
        }
    }
}
