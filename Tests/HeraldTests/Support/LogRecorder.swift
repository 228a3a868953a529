import Foundation
import Logging
import Synchronization

@testable import HeraldConsole

/// Keeps every line the application logs, as `herald serve` writes it in logfmt, for tests of what the
/// log says (and never says).
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    /// A logger whose lines this recorder keeps.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(recorder: self) }
    }

    var all: [String] { lines.withLock { $0 } }

    fileprivate func keep(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.keep(LineFormatter.logfmtLine(
                time: Date(), level: event.level, label: "test", message: event.message.description,
                metadata: metadata.merging(event.metadata ?? [:]) { _, new in new }))
        }
    }
}
