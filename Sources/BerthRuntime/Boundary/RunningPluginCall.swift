@_spi(Engine) import BerthCore
import Foundation

/// The host → plugin call running now, readable from any thread: what a control socket
/// answers, and what a signal handler reports, while the main actor is stuck in a plugin.
/// `package`: what `berth run`'s control socket and signal handler report of a stuck host.
/// Process-wide on purpose: there is one main actor per process, so one outermost call.
package enum RunningPluginCall {
    /// One call: which screen, which function (`action 'increment'`), and when it began.
    ///
    /// A class: the lane's busy mark is read on every action and render, and a struct with
    /// an `Instant` in it is copied and destroyed through its type's value witnesses.
    package final class Call: Sendable, Equatable {
        package let plugin: String
        package let route: String
        package let screen: Int
        package let function: String
        package let started: ContinuousClock.Instant
        /// A call the host made on its own (a managed task's post), not one a person or an
        /// application asked for: a person's call to the same lane waits for it rather than
        /// being refused as busy.
        package let byHost: Bool
        /// Closed screens' calls into the plugin (`deactivate`, events, `destroy`), run on its
        /// lane after the screens left (`LaneState.close`); by the host too.
        package let closes: Bool

        /// `com.example.counter/counter action 'increment' (screen 3)`; a call for no screen
        /// (a generation's load) is `com.example.counter load of generation 2`.
        package var description: String { route.isEmpty ? "\(plugin) \(function)" : "\(plugin)/\(route) \(function) (screen \(screen))" }

        /// How long it has run.
        package var elapsed: Duration { .now - started }

        /// How long it has run, in whole milliseconds.
        package var elapsedMilliseconds: Int {
            let (seconds, attoseconds) = elapsed.components
            return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
        }

        /// A new generation's entry and handshake (or its worker's `hello`) on its lane, begun now.
        static func loading(_ plugin: String, generation: Int) -> Call {
            Call(plugin: plugin, route: "", screen: 0, function: "load of generation \(generation)")
        }

        /// A closed screen's calls into its plugin (`close`), begun now.
        static func closing(_ plugin: String, route: String, screen: Int) -> Call {
            Call(plugin: plugin, route: route, screen: screen, function: "close", byHost: true, closes: true)
        }

        /// `com.example.counter/counter action 'increment' (screen 3)`, begun now.
        package init(plugin: String, route: String, screen: Int, function: String, started: ContinuousClock.Instant = .now, byHost: Bool = false,
                     closes: Bool = false) {
            self.plugin = plugin
            self.route = route
            self.screen = screen
            self.function = function
            self.started = started
            self.byHost = byHost
            self.closes = closes
        }

        package static func == (left: Call, right: Call) -> Bool {
            left.plugin == right.plugin && left.route == right.route && left.screen == right.screen
                && left.function == right.function && left.started == right.started && left.byHost == right.byHost
                && left.closes == right.closes
        }
    }

    /// The outermost call and how deep calls are nested now.
    private struct Calls {
        var outermost: Call?
        var depth = 0
    }
    private static let calls = Locked(Calls())

    /// The outermost call running now, if any.
    package static var current: Call? { calls.withLock { $0.outermost } }

    /// Calls running on plugin lanes now (the host goes on meanwhile), by token.
    private static let laneCalls = Locked(LaneCalls())
    private struct LaneCalls {
        var running: [UInt64: Call] = [:]
        var next: UInt64 = 0
    }

    /// Every call running on a lane now, the longest-running first.
    package static var onLanes: [Call] {
        laneCalls.withLock { Array($0.running.values) }.sorted { $0.started < $1.started }
    }

    /// A call began on a lane; returns its token for `laneEnded`.
    static func laneBegan(_ call: Call) -> UInt64 {
        laneCalls.withLock { calls in
            calls.next += 1
            calls.running[calls.next] = call
            return calls.next
        }
    }

    static func laneEnded(_ token: UInt64) {
        _ = laneCalls.withLock { $0.running.removeValue(forKey: token) }
    }

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

/// A call a plugin's lane is in, as an application sees it: its screens are busy meanwhile.
public struct BusyCall: Sendable, Equatable {
    /// The plugin's id.
    public var plugin: String
    /// The screen the call is for.
    public var screen: Int
    /// What was called (`action 'scan'`).
    public var function: String
    /// When it began.
    public var started: ContinuousClock.Instant

    /// How long it has run.
    public var elapsed: Duration { .now - started }
}
