import CLibFuzzer
import Foundation

/// The target this process fuzzes, chosen once by `HERALD_FUZZ_TARGET`.
let selectedTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["HERALD_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        // Not a crash libFuzzer should record: the run was started wrong.
        FileHandle.standardError.write(Data(
            "Set HERALD_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")).\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer calls this with each input it makes; a property that does not hold traps, and libFuzzer
/// keeps the input that made it trap. (The symbol name is the one libFuzzer's runtime expects.)
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selectedTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// Runs libFuzzer's driver on the process's arguments (`-runs=`, `-max_total_time=`, corpus folders…).
func runLibFuzzer() -> Never {
    var argumentCount = CommandLine.argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argumentCount, &arguments, fuzzOneInput))
}

/// Traps with `message` when a property of a parser does not hold for the current input.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fatalError("property broken: \(message())", file: file, line: line) }
}
