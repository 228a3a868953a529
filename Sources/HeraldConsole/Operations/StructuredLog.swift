import Foundation
import Logging

/// How log lines are written: logfmt (`time=… level=info msg="…" key=value`), which people read and
/// tools (Loki, Vector, `grep`) parse, or JSON, one object per line, for collectors that want it.
public enum LogFormat: String, Sendable, CaseIterable {
    case logfmt, json
}

/// Takes finished log lines from any thread and writes them to a file descriptor on a thread of its
/// own, in batches: a request pays for formatting its line and one short lock, never for a `write(2)`
/// to a terminal or a pipe that may be slow, nor for waking the writer (it gathers lines for a moment
/// and is woken early only when a batch is full or someone flushes). The buffer is bounded; lines that
/// arrive while it is full are counted and the count is written as a line of its own once there is
/// room, so a log that cannot keep up costs lines, never memory or the requests' time.
public final class LogWriter: @unchecked Sendable {
    /// Bytes held before lines are dropped: some thousands of lines, a second of a busy server.
    public static let capacity = 1 << 20
    /// A batch this large is written at once rather than after the gathering moment.
    static let batchBytes = 128 * 1024
    /// How long the writer gathers lines after the first of a batch: a line reaches the log this late at most.
    static let gatheringNanoseconds = 20_000_000

    // Reached only with `mutex` held.
    private var pending: [UInt8] = []
    private var dropped = 0
    private var flushing = 0
    private var writing = false
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let drained = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let descriptor: Int32

    public init(descriptor: Int32 = STDERR_FILENO) {
        self.descriptor = descriptor
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wake, &attributes)
        pthread_condattr_destroy(&attributes)
        pthread_cond_init(drained, nil)
        pending.reserveCapacity(Self.batchBytes)
        let thread = Thread { [self] in run() }
        thread.name = "herald-log"
        thread.start()
    }

    /// Queues one line (without its newline).
    func write(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            guard pending.count + bytes.count + 1 <= Self.capacity else {
                dropped += 1
                return
            }
            let before = pending.count
            pending.append(contentsOf: bytes)
            pending.append(0x0A)
            // The writer sleeps until a batch starts, then gathers until it is full or its moment passes.
            if before == 0 || (before < Self.batchBytes && pending.count >= Self.batchBytes) { pthread_cond_signal(wake) }
        }
    }

    /// Returns once every line queued before the call is written: before the process exits.
    public func flush() {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        flushing += 1
        while !pending.isEmpty || dropped > 0 || writing {
            pthread_cond_signal(wake)
            pthread_cond_wait(drained, mutex)
        }
        flushing -= 1
    }

    private func run() {
        var batch: [UInt8] = []
        batch.reserveCapacity(Self.batchBytes)
        pthread_mutex_lock(mutex)
        while true {
            while pending.isEmpty && dropped == 0 { pthread_cond_wait(wake, mutex) }
            if flushing == 0 && pending.count < Self.batchBytes {
                var deadline = timespec()
                clock_gettime(CLOCK_MONOTONIC, &deadline)
                let nanoseconds = Int(deadline.tv_nsec) + Self.gatheringNanoseconds
                deadline.tv_sec += nanoseconds / 1_000_000_000
                deadline.tv_nsec = nanoseconds % 1_000_000_000
                pthread_cond_timedwait(wake, mutex, &deadline)
            }
            swap(&batch, &pending)
            if dropped > 0 {
                batch.append(contentsOf: LineFormatter.logfmtLine(
                    time: Date(), level: .warning, label: "herald", message: "dropped \(dropped) log lines: the log could not keep up", metadata: [:]).utf8)
                batch.append(0x0A)
                dropped = 0
            }
            writing = true
            pthread_mutex_unlock(mutex)
            batch.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                var offset = 0
                while offset < bytes.count {
                    let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                    if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { break }
                }
            }
            batch.removeAll(keepingCapacity: true)
            pthread_mutex_lock(mutex)
            writing = false
            pthread_cond_broadcast(drained)
        }
    }
}

/// Writes swift-log's events as single structured lines through a `LogWriter`.
public struct StructuredLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    private let label: String
    private let format: LogFormat
    private let writer: LogWriter

    public init(label: String, format: LogFormat, writer: LogWriter) {
        self.label = label
        self.format = format
        self.writer = writer
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // A request's line brings all its metadata with it: no copy of an empty dictionary to merge into.
        var merged = metadata.isEmpty && metadataProvider == nil ? event.metadata ?? [:] : metadata
        if !metadata.isEmpty || metadataProvider != nil {
            if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
            if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        }
        writer.write(LineFormatter.line(format, time: Date(), level: event.level, label: label, message: event.message.description, metadata: merged))
    }
}

/// One log line in each format. Keys come first in a fixed order (`time`, `level`, `logger`, `msg`),
/// then the metadata sorted by key, so lines of one kind line up.
enum LineFormatter {
    /// A line in `format`, with `fields` in the order given.
    static func line(_ format: LogFormat, time: Date, level: Logger.Level, label: String, message: String, fields: [(key: String, value: String)]) -> String {
        switch format {
        case .logfmt: logfmtLine(time: time, level: level, label: label, message: message, fields: fields)
        case .json: jsonLine(time: time, level: level, label: label, message: message, fields: fields)
        }
    }

    /// A line in `format`, with the metadata sorted by key.
    static func line(_ format: LogFormat, time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        line(format, time: time, level: level, label: label, message: message, fields: sortedFields(metadata))
    }

    static func logfmtLine(time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        logfmtLine(time: time, level: level, label: label, message: message, fields: sortedFields(metadata))
    }

    /// `fields` in the order given: a caller with fixed keys (the request log) gives them sorted.
    static func logfmtLine(time: Date, level: Logger.Level, label: String, message: String, fields: [(key: String, value: String)]) -> String {
        var line = "time="
        line.reserveCapacity(192)
        line += timestamp(time)
        line += " level="
        line += level.rawValue
        line += " logger="
        line += logfmtValue(label)
        line += " msg="
        line += logfmtValue(message)
        for (key, value) in fields {
            line += " "
            line += logfmtKey(key)
            line += "="
            line += logfmtValue(value)
        }
        return line
    }

    static func jsonLine(time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        jsonLine(time: time, level: level, label: label, message: message, fields: sortedFields(metadata))
    }

    static func jsonLine(time: Date, level: Logger.Level, label: String, message: String, fields: [(key: String, value: String)]) -> String {
        var line = "{\"time\":\"\(timestamp(time))\",\"level\":\"\(level.rawValue)\",\"logger\":\(jsonString(label)),\"msg\":\(jsonString(message))"
        for (key, value) in fields where !["time", "level", "logger", "msg"].contains(key) {
            line += ",\(jsonString(key)):\(jsonString(value))"
        }
        return line + "}"
    }

    private static func sortedFields(_ metadata: Logger.Metadata) -> [(key: String, value: String)] {
        metadata.sorted { $0.key < $1.key }.map { ($0.key, text($0.value)) }
    }

    private static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        default: value.description
        }
    }

    /// A bare word when it needs no quotes (no space, `=`, quote, control character or line separator, not empty).
    static func logfmtValue(_ value: String) -> String {
        // By bytes: every byte of a scalar past ASCII is 0x80 or more, so ASCII decides but for the
        // controls and separators past it, which only a byte 0xC2 or 0xE2 can start.
        var mayBreakLines = false
        let plain = !value.isEmpty && value.utf8.allSatisfy {
            if $0 == 0xC2 || $0 == 0xE2 { mayBreakLines = true }
            return $0 > 0x20 && $0 != 0x3D && $0 != 0x22 && $0 != 0x5C && $0 != 0x7F
        }
        return plain && !(mayBreakLines && value.unicodeScalars.contains(where: breaksLinesBeyondASCII)) ? value : jsonString(value)
    }

    /// The C1 controls (U+0085, next line, among them) and U+2028 and U+2029 (line and paragraph separators):
    /// JSON lets them stand raw, but many readers of logs (journald's viewers, editors, JavaScript) end a
    /// line at them, and a terminal takes U+009B for the start of an escape sequence, so a request path
    /// holding one could start what looks like a line of its own.
    static func breaksLinesBeyondASCII(_ scalar: Unicode.Scalar) -> Bool {
        (0x80...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// Keys are ours, but metadata could carry anything: what is not a word character becomes `_`.
    private static func logfmtKey(_ key: String) -> String {
        if !key.isEmpty, key.utf8.allSatisfy({ (0x61...0x7A).contains($0) || $0 == 0x5F }) { return key }
        let cleaned = String(key.unicodeScalars.map { scalar in
            (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "." || scalar == "-") && scalar.isASCII
                ? Character(scalar) : "_"
        })
        return cleaned.isEmpty ? "_" : cleaned
    }

    /// In double quotes with `"`, `\` and control characters escaped as JSON does, and the controls and line
    /// separators past ASCII as `\u` escapes too (JSON allows them raw); logfmt readers take the same.
    static func jsonString(_ value: String) -> String {
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || breaksLinesBeyondASCII(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    quoted.unicodeScalars.append(scalar)
                }
            }
        }
        return quoted + "\""
    }

    /// RFC 3339 in UTC with milliseconds, written by hand into 24 bytes: DateFormatter, or even string
    /// interpolation of each field, would cost more than the rest of the line.
    static func timestamp(_ date: Date) -> String {
        // A clock before 1970 or past 9999 (a broken one) is written as the nearest end, never trapped on.
        let milliseconds = Int64(min(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)), 253_402_300_799_999))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int, digits: Int, at position: Int) {
                var value = value
                for index in stride(from: position + digits - 1, through: position, by: -1) {
                    buffer[index] = UInt8(0x30 + value % 10)
                    value /= 10
                }
            }
            put(Int(parts.tm_year) + 1900, digits: 4, at: 0)
            buffer[4] = 0x2D
            put(Int(parts.tm_mon) + 1, digits: 2, at: 5)
            buffer[7] = 0x2D
            put(Int(parts.tm_mday), digits: 2, at: 8)
            buffer[10] = 0x54
            put(Int(parts.tm_hour), digits: 2, at: 11)
            buffer[13] = 0x3A
            put(Int(parts.tm_min), digits: 2, at: 14)
            buffer[16] = 0x3A
            put(Int(parts.tm_sec), digits: 2, at: 17)
            buffer[19] = 0x2E
            put(Int(milliseconds % 1000), digits: 3, at: 20)
            buffer[23] = 0x5A
            return 24
        }
    }
}

/// The line each request leaves (`msg=request method=… ms=… path=… request_id=… status=…`). It is the
/// one line written for every request, so when the server owns the log writer it goes there directly,
/// its fields already in order, instead of through swift-log's metadata dictionary (built, hashed,
/// sorted and copied for each line: about 5 µs of a 20 µs feed 304). A host without one (the tests)
/// gets the same keys through its `Logger`.
public struct RequestLog: Sendable {
    private let logger: Logger
    private let writer: LogWriter?
    private let format: LogFormat

    public init(logger: Logger, writer: LogWriter? = nil, format: LogFormat = .logfmt) {
        self.logger = logger
        self.writer = writer
        self.format = format
    }

    func record(method: String, path: String, status: Int, elapsed: Duration, id: String) {
        guard logger.logLevel <= .info else { return }
        let fields: [(key: String, value: String)] = [
            ("method", method), ("ms", Self.milliseconds(elapsed)), ("path", path), ("request_id", id), ("status", String(status)),
        ]
        guard let writer else {
            logger.info("request", metadata: Logger.Metadata(uniqueKeysWithValues: fields.map { ($0.key, .string($0.value)) }))
            return
        }
        writer.write(LineFormatter.line(format, time: Date(), level: .info, label: logger.label, message: "request", fields: fields))
    }

    /// `12.345`: milliseconds with three decimals, written without `String(format:)`, which costs a log line more than the rest of it.
    static func milliseconds(_ duration: Duration) -> String {
        let microseconds = max(0, duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
        let fraction = String(microseconds % 1000)
        return String(microseconds / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
