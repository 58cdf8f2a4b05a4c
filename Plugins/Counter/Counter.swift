import BerthSDK
import Synchronization

/// The counter screen: a count that lives in the instance, so it starts at 0 on reopen.
final class CounterScreen: Screen {
    static let route = "counter"

    private let context: ScreenContext
    private var count = 0

    init(context: ScreenContext) {
        self.context = context
    }

    func activate() {
        context.log("counter screen active (count \(count))")
    }

    func handle(action: String, payload: [UInt8]) throws {
        switch action {
        case "increment": count += 1
        case "decrement": count -= 1
        case "reset": count = 0
        default: throw BerthError(code: .notFound, message: "counter has no action '\(action)' (increment, decrement, reset)")
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
