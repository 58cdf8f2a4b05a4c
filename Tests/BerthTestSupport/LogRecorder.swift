@_spi(Engine) import BerthRuntime
import Logging

/// Collects the log lines plugins write through the host (`[plugin#gen] message`), so a
/// test can observe a plugin's own state the way a user reads it.
public final class LogRecorder: Sendable {
    private let lines = Locked<[String]>([])

    public init() {}

    /// Every line so far.
    public var all: [String] { lines.withLock { $0 } }

    /// Lines containing `text`. (A byte search: Foundation's `contains`, which the module's
    /// imports would otherwise pick, made tests that poll a long log spend seconds in it.)
    public func matching(_ text: String) -> [String] {
        let needle = Array(text.utf8)
        return lines.withLock { $0.filter { Self.line($0, contains: needle) } }
    }

    private static func line(_ line: String, contains needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        var line = line
        return line.withUTF8 { bytes in
            guard bytes.count >= needle.count else { return false }
            for start in 0...(bytes.count - needle.count) where bytes[start] == first {
                var matched = 1
                while matched < needle.count && bytes[start + matched] == needle[matched] { matched += 1 }
                if matched == needle.count { return true }
            }
            return false
        }
    }

    /// Forgets what was recorded.
    public func clear() { lines.withLock { $0.removeAll() } }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// A logger writing into this recorder.
    public func logger() -> Logger {
        Logger(label: "berth.test") { _ in RecordingHandler(recorder: self) }
    }
}

private struct RecordingHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let plugin = (metadata.merging(event.metadata ?? [:]) { _, new in new })["plugin"].map { "[\($0)] " } ?? ""
        recorder.append("\(plugin)\(event.message)")
    }
}
