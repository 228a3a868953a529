import NIOCore
import PostgresNIO
import Testing
import TestSupport
@testable import HeraldPostgres
@testable import HeraldStorage

/// `PostgresBinaryArray` reads the arrays of a report's one row (`PostgresEventCounts`). For any array of
/// its element types, it reads what postgres-nio's encoder writes (the binary form `array_recv` takes and
/// `array_send` writes) as the same values; for those bytes cut short, lengthened or with any byte changed,
/// it reads values or refuses with `Malformed`, and never traps or reads past them.
@Suite("Generated inputs: PostgreSQL arrays in binary")
struct PostgresArrayProperty {
    enum Drawn: Sendable, CustomStringConvertible {
        case integers([Int64]), smallIntegers([Int32]), flags([Bool]), texts([String])

        var description: String {
            switch self {
            case .integers(let values): "int8[] \(values)"
            case .smallIntegers(let values): "int4[] \(values)"
            case .flags(let values): "bool[] \(values)"
            case .texts(let values): "text[] \(values.map(\.debugDescription))"
            }
        }

        func encoded() throws -> ByteBuffer {
            var buffer = ByteBuffer()
            switch self {
            case .integers(let values): values.encode(into: &buffer, context: .default)
            case .smallIntegers(let values): values.encode(into: &buffer, context: .default)
            case .flags(let values): values.encode(into: &buffer, context: .default)
            case .texts(let values): values.encode(into: &buffer, context: .default)
            }
            return buffer
        }

        /// Whether `bytes` read back as these values, as their own type.
        func readsBack(_ bytes: ByteBuffer) throws -> Bool {
            switch self {
            case .integers(let values): try PostgresBinaryArray.read(bytes, as: Int64.self) == values
            case .smallIntegers(let values): try PostgresBinaryArray.read(bytes, as: Int32.self) == values
            case .flags(let values): try PostgresBinaryArray.read(bytes, as: Bool.self) == values
            case .texts(let values): try PostgresBinaryArray.read(bytes, as: String.self) == values
            }
        }
    }

    static func draw(_ draw: inout Draw) -> Drawn {
        let count = draw.chance(0.1) ? 0 : draw.int(1...60)
        switch draw.int(0...3) {
        case 0: return .integers((0..<count).map { _ in draw.chance(0.2) ? draw.pick([.min, -1, 0, .max]) : draw.int64(-1_000_000...1_000_000) })
        case 1: return .smallIntegers((0..<count).map { _ in Int32(truncatingIfNeeded: draw.int64(Int64(Int32.min)...Int64(Int32.max))) })
        case 2: return .flags((0..<count).map { _ in draw.chance(0.5) })
        default: return .texts((0..<count).map { _ in draw.chance(0.1) ? "" : GeneratedText.valid(&draw, maxPieces: 3, maxCharacters: 24) })
        }
    }

    /// Every element type, for bytes that may now read as another.
    static func readAsAnything(_ bytes: ByteBuffer) -> Bool {
        func reads<Value: PostgresBinaryArray.Element>(_ type: Value.Type) -> Bool {
            do {
                _ = try PostgresBinaryArray.read(bytes, as: type)
                return true
            } catch is PostgresBinaryArray.Malformed {
                return false
            } catch {
                Issue.record("refused with \(error), not Malformed")
                return false
            }
        }
        return [reads(Int64.self), reads(Int32.self), reads(Bool.self), reads(String.self)].contains(true)
    }

    @Test func whatTheEncoderWritesReadsBackAndDamagedBytesAreRefusedOrRead() throws {
        var run = GeneratedRun("PostgreSQL binary arrays", cases: 3000)
        run.run(Generated.cases { draw -> (Drawn, damage: Int, at: Int, byte: UInt8) in
            (Self.draw(&draw), draw.int(0...3), draw.int(0...10_000), UInt8(draw.int(0...255)))
        }) { input, run in
            let (drawn, damage, at, byte) = input
            let bytes = try drawn.encoded()
            run.expect(try drawn.readsBack(bytes), "did not read back", input: drawn)
            var damaged = bytes
            switch damage {
            case 0:
                // Cut short anywhere: never the same values, as every element's bytes are counted.
                damaged = bytes.getSlice(at: 0, length: at % max(1, bytes.readableBytes)) ?? ByteBuffer()
                run.expect((try? drawn.readsBack(damaged)) != true, "read cut-short bytes as the values", input: drawn)
            case 1:
                damaged.writeInteger(byte)
                run.expect(!Self.readAsAnything(damaged), "read bytes after the array", input: drawn)
            default:
                damaged.setInteger(byte, at: at % max(1, bytes.readableBytes))
            }
            run.note(Self.readAsAnything(damaged) ? "damaged, still read" : "damaged, refused")
        }
    }
}
