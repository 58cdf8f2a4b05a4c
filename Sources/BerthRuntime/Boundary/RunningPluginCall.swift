import Foundation

/// The host → plugin call running now, readable from any thread: what a control socket
/// answers, and what a signal handler reports, while the main actor is stuck in a plugin.
public enum RunningPluginCall {
    /// One call: what it is (`com.example.counter/counter action 'increment'`) and when it began.
    public struct Call: Sendable, Equatable {
        public var description: String
        public var started: ContinuousClock.Instant

        /// How long it has run.
        public var elapsed: Duration { .now - started }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var outermost: Call?
    nonisolated(unsafe) private static var depth = 0

    /// The outermost call running now, if any.
    public static var current: Call? { lock.withLock { outermost } }

    /// Runs `body` as a call into plugin code described by `description` (nested calls keep
    /// the outermost one).
    static func run<T, Failure: Error>(_ description: @autoclosure () -> String, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        lock.withLock {
            if depth == 0 { outermost = Call(description: description(), started: .now) }
            depth += 1
        }
        defer {
            lock.withLock {
                depth -= 1
                if depth == 0 { outermost = nil }
            }
        }
        return try body()
    }
}
