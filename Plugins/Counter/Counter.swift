import BerthSDK
import Synchronization

/// The counter screen: a count that lives in the instance, so it starts at 0 on reopen,
/// and a ticking managed effect the host cancels when the screen closes.
final class CounterScreen: Screen {
    static let route = "counter"

    /// Milliseconds between ticks; the screen's argument may override it (tests tick fast).
    static let defaultTickInterval: UInt64 = 1000

    private let context: ScreenContext
    private var count = 0
    private var ticks = 0

    init(context: ScreenContext) {
        self.context = context
    }

    func activate() throws {
        context.log("counter screen active (count \(count))")
        let interval = UInt64(String(decoding: context.argument, as: UTF8.self)) ?? Self.defaultTickInterval
        try context.run("tick") { effect in
            while effect.sleep(milliseconds: interval) {
                effect.post("tick")
            }
        }
    }

    func handle(action: String, payload: [UInt8]) throws {
        switch action {
        case "increment": count += 1
        case "decrement": count -= 1
        case "reset": count = 0
        case "tick":
            ticks += 1
            return
        case "report":
            context.log("count \(count), ticks \(ticks)")
            return
        default:
            throw BerthError(code: .notFound, message: "counter has no action '\(action)' (increment, decrement, reset, report)")
        }
        context.log("count is \(count)")
    }
}

/// Image-wide call counter. Each generation is a fresh copy of this image, so a reload
/// starts it from 0 again: the demo and the tests use it to show fresh globals.
private let bumps = Atomic<Int64>(0)

/// Adds one to the image-wide counter and returns the new value.
@_cdecl("counter_bump")
public func counterBump() -> Int64 {
    bumps.add(1, ordering: .relaxed).newValue
}

/// The image-wide counter's value.
@_cdecl("counter_bumps")
public func counterBumps() -> Int64 {
    bumps.load(ordering: .relaxed)
}

@_cdecl("berth_counter_entry_v1")
public func berthCounterEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "com.example.counter", screens: [CounterScreen.self]).export(host, plugin)
}
