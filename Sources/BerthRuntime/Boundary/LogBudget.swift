@_spi(Engine) import BerthCore
import Foundation
import Logging

/// What one plugin may print through the host's log: lines up to `limits.logLine` bytes
/// (longer ones are cut, saying how much was dropped) and `limits.logRate` lines a second
/// (a token bucket holding a second's worth; lines beyond it are dropped and counted, and
/// a `N line(s) dropped` line says so at most once a second). The host's output, and its
/// memory, stay bounded whatever a plugin sends. Used from any thread: an in-process plugin
/// may log from threads of its own.
final class LogBudget: Sendable {
    let lineBytes: Int
    let linesPerSecond: Int
    private let bucket: Locked<Bucket>

    private struct Bucket {
        var tokens: Double
        var refilledAt: ContinuousClock.Instant
        var dropped = 0
        var reportedAt: ContinuousClock.Instant?
    }

    init(limits: PluginLimits) {
        lineBytes = limits.logLineBytes
        linesPerSecond = limits.logLinesPerSecond
        bucket = Locked(Bucket(tokens: Double(limits.logLinesPerSecond), refilledAt: .now))
    }

    /// Logs `message` through `logger` when the budget allows: cut to `lineBytes`, after a
    /// line counting what the rate dropped since the last such line.
    func log(_ message: UnsafePointer<CChar>, level: Logger.Level, to logger: Logger) {
        // Measured without copying: a 1 MB line costs the host only the bytes it prints.
        let length = strnlen(message, lineBytes + 1)
        emit(length > lineBytes ? cut(message) : String(cString: message), level: level, to: logger)
    }

    /// As `log(_:level:to:)`, for a line already in the host (read from a worker's frame).
    func log(_ message: String, level: Logger.Level, to logger: Logger) {
        emit(message.utf8.count > lineBytes ? cut(message) : message, level: level, to: logger)
    }

    /// Prints `line` (already within the length budget) when the rate allows.
    private func emit(_ line: String, level: Logger.Level, to logger: Logger) {
        let (admitted, dropped) = admit()
        if dropped > 0 {
            logger.log(level: .warning, "\(dropped) line(s) dropped: over the plugin's log rate of \(linesPerSecond) a second (limits.logRate)")
        }
        if admitted { logger.log(level: level, "\(line)") }
    }

    /// Whether a line may print now, and how many dropped lines to report first (0: none).
    private func admit() -> (admitted: Bool, reportDropped: Int) {
        bucket.withLock { bucket in
            let now = ContinuousClock.now
            let elapsed = bucket.refilledAt.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            bucket.tokens = min(Double(linesPerSecond), bucket.tokens + seconds * Double(linesPerSecond))
            bucket.refilledAt = now
            let admitted = bucket.tokens >= 1
            if admitted { bucket.tokens -= 1 } else { bucket.dropped += 1 }
            // Dropped lines are told when a line gets through, or once a second while dropping.
            let due = bucket.reportedAt.map { $0.duration(to: now) >= .seconds(1) } ?? true
            guard bucket.dropped > 0, admitted || due else { return (admitted, 0) }
            defer { bucket.dropped = 0; bucket.reportedAt = now }
            return (admitted, bucket.dropped)
        }
    }

    private func cut(_ message: UnsafePointer<CChar>) -> String {
        let total = strlen(message)
        let kept = Self.characterBoundary(UnsafeRawPointer(message).assumingMemoryBound(to: UInt8.self), lineBytes)
        let prefix = String(decoding: UnsafeRawBufferPointer(start: message, count: kept), as: UTF8.self)
        return Self.cutLine(prefix, dropped: total - kept)
    }

    private func cut(_ message: String) -> String {
        let bytes = Array(message.utf8)
        let kept = bytes.withUnsafeBufferPointer { Self.characterBoundary($0.baseAddress!, lineBytes) }
        return Self.cutLine(String(decoding: bytes[..<kept], as: UTF8.self), dropped: bytes.count - kept)
    }

    /// `limit`, moved back to the start of a UTF-8 character.
    private static func characterBoundary(_ bytes: UnsafePointer<UInt8>, _ limit: Int) -> Int {
        var end = limit
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }

    private static func cutLine(_ prefix: String, dropped: Int) -> String {
        "\(prefix)… (\(ByteCountText.grouped(dropped)) bytes dropped)"
    }
}
