import Logging
import Synchronization

/// Collects the log lines plugins write through the host (`[plugin#gen] message`), so a
/// test can observe a plugin's own state the way a user reads it.
public final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// Every line so far.
    public var all: [String] { lines.withLock { $0 } }

    /// Lines containing `text`.
    public func matching(_ text: String) -> [String] { all.filter { $0.contains(text) } }

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
