import BerthSDK
import Synchronization

/// The counter screen: a count that lives in the instance, so it starts at 0 on reopen,
/// and a ticking managed effect the host cancels when the screen closes.
final class CounterScreen: Screen {
    static let route = "counter"
    /// What `send` may name. `tick` is left out: only this screen's own effect posts it.
    static let actions: [ScreenAction] = [
        "increment", "decrement", "reset",
        ScreenAction("report", summary: "Logs the count, the ticks and the persisted total"),
    ]

    /// Kept by the host outside this screen: survives reopen, reload and restart.
    @Persisted("total") var total = 0

    /// Milliseconds between ticks; the screen's argument may override it (tests tick fast).
    static let defaultTickInterval: UInt64 = 1000

    /// The screen's title (scripts/live-edit-demo changes it while a host runs).
    static let title = "Counter"

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

    /// `reload --keep-state` carries the count and ticks into the new generation's instance.
    func saveState() -> [UInt8] {
        Array("\(count) \(ticks)".utf8)
    }

    func restoreState(_ bytes: [UInt8]) throws {
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        guard fields.count == 2 else { throw BerthError(code: .decode, message: "counter state must be 'count ticks'") }
        (count, ticks) = (fields[0], fields[1])
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
            context.log("count \(count), ticks \(ticks), total \(total)")
            return
        default:
            throw BerthError(code: .notFound, message: "counter has no action '\(action)' (\(Self.actions.map(\.name).joined(separator: ", ")))")
        }
        context.log("count is \(count)")
    }
}

extension CounterScreen {
    /// The view: the panel's stepper and toggle keep their values in the host's state
    /// storage across every re-render; the total is persisted.
    var body: some View {
        VStack {
            Text("\(Self.title) · ticks \(ticks)")
            CounterPanel(total: $total)
            Badge(label: "taps")
        }
    }
}

/// The stepper, the total and a details branch.
struct CounterPanel: View {
    let total: Binding<Int>
    @State var count = 0
    @State var showDetails = false

    var body: some View {
        VStack {
            Stepper("Count", value: $count)
            Button("Add to total") {
                let before = total.wrappedValue
                total.wrappedValue += count
                // Only what was saved leaves the stepper (a refused write keeps the count).
                if total.wrappedValue != before { count = 0 }
            }
            Text("Total: \(total.wrappedValue)")
            Toggle("Details", isOn: $showDetails)
            if showDetails {
                Details()
            } else {
                Text("(details hidden)")
            }
        }
    }
}

/// Shown only while details are on: its note is dropped when the branch switches away.
struct Details: View {
    var body: some View {
        VStack {
            NoteField()
            Text("Notes are kept while details stay open.")
        }
    }
}

struct NoteField: View {
    @State var note = ""

    var body: some View {
        TextField("Note", text: $note)
    }
}

/// A tap counter. Inbox has a view with the same name; their states never meet.
struct Badge: View {
    let label: String
    @State var taps = 0

    var body: some View {
        Button("\(label): \(taps)") { taps += 1 }
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
