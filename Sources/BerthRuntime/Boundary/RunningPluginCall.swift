import Foundation

/// The host → plugin call running now, readable from any thread: what a control socket
/// answers, and what a signal handler reports, while the main actor is stuck in a plugin.
package enum RunningPluginCall {
    /// One call: which screen, which function (`action 'increment'`), and when it began.
    package struct Call: Sendable, Equatable {
        package var plugin: String
        package var route: String
        package var screen: Int
        package var function: String
        package var started: ContinuousClock.Instant

        /// `com.example.counter/counter action 'increment' (screen 3)`.
        package var description: String { "\(plugin)/\(route) \(function) (screen \(screen))" }

        /// How long it has run.
        package var elapsed: Duration { .now - started }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var outermost: Call?
    nonisolated(unsafe) private static var depth = 0

    /// The outermost call running now, if any.
    package static var current: Call? { lock.withLock { outermost } }

    /// Runs `body` as a call into `function` of a screen's plugin code (nested calls keep the
    /// outermost one; nothing is built for them).
    static func run<T, Failure: Error>(plugin: String, route: String, screen: Int, _ function: @autoclosure () -> String,
                                       _ body: () throws(Failure) -> T) throws(Failure) -> T {
        lock.withLock {
            if depth == 0 { outermost = Call(plugin: plugin, route: route, screen: screen, function: function(), started: .now) }
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
