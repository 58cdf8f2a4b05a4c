import Foundation

/// The host → plugin call running now, readable from any thread: what a control socket
/// answers, and what a signal handler reports, while the main actor is stuck in a plugin.
/// `package`: what `berth run`'s control socket and signal handler report of a stuck host.
/// Process-wide on purpose: there is one main actor per process, so one outermost call.
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

    /// The outermost call and how deep calls are nested now.
    private struct Calls {
        var outermost: Call?
        var depth = 0
    }
    private static let calls = Locked(Calls())

    /// The outermost call running now, if any.
    package static var current: Call? { calls.withLock { $0.outermost } }

    /// Runs `body` as a call into `function` of a screen's plugin code (nested calls keep the
    /// outermost one; nothing is built for them).
    static func run<T, Failure: Error>(plugin: String, route: String, screen: Int, _ function: @autoclosure () -> String,
                                       _ body: () throws(Failure) -> T) throws(Failure) -> T {
        calls.withLock { calls in
            if calls.depth == 0 { calls.outermost = Call(plugin: plugin, route: route, screen: screen, function: function(), started: .now) }
            calls.depth += 1
        }
        defer {
            calls.withLock { calls in
                calls.depth -= 1
                if calls.depth == 0 { calls.outermost = nil }
            }
        }
        return try body()
    }
}
