import BerthSDK

// Screens for the structural-identity tests: each one puts stateful views where keys
// keyed by construction order used to shift.

/// `VStack { if showBanner { Banner() }; if showNote { Banner() } else { Text("-") }; Badge() }`:
/// two conditionals before a stateful view. `send banner` and `send note` flip them.
final class ShiftScreen: Screen {
    static let route = "shift"
    private var showBanner = false
    private var showNote = false

    init(context: ScreenContext) {}

    var body: some View {
        VStack {
            if showBanner { Banner(name: "banner") }
            if showNote { Banner(name: "note") } else { Text("-") }
            Badge()
        }
    }

    func handle(action: String, payload: [UInt8]) throws {
        switch action {
        case "banner": showBanner.toggle()
        case "note": showNote.toggle()
        default: throw BerthError(code: .unsupported, message: "shift has no action '\(action)'")
        }
    }
}

struct Banner: View {
    let name: String
    @State var seen = 0

    var body: some View {
        Button("\(name) seen \(seen)") { seen += 1 }
    }
}

struct Badge: View {
    @State var taps = 0

    var body: some View {
        Button("taps: \(taps)") { taps += 1 }
    }
}

/// A stateful view holding two stateful views of one type, each holding another: every
/// level keeps its own state.
final class NestedScreen: Screen {
    static let route = "nested"

    init(context: ScreenContext) {}

    var body: some View {
        Outer()
    }
}

struct Outer: View {
    @State var taps = 0

    var body: some View {
        VStack {
            Button("outer \(taps)") { taps += 1 }
            Inner(name: "left")
            Inner(name: "right")
        }
    }
}

struct Inner: View {
    let name: String
    @State var taps = 0
    @State var label = ""

    var body: some View {
        HStack {
            Button("\(name) \(taps)") { taps += 1 }
            TextField(name, text: $label)
            Badge()
        }
    }
}

/// A `ForEach` whose ids repeat ("a" and "b" twice) and one id with identity characters.
final class DuplicatesScreen: Screen {
    static let route = "duplicates"
    struct Item {
        let key: String
        let label: String
    }

    private let items = [
        Item(key: "a", label: "first a"), Item(key: "b", label: "first b"), Item(key: "a", label: "second a"),
        Item(key: "c", label: "c"), Item(key: "b", label: "second b"), Item(key: "x.y/z", label: "dotted"),
    ]

    init(context: ScreenContext) {}

    var body: some View {
        List {
            ForEach(items, id: \.key) { item in
                Banner(name: item.label)
            }
        }
    }
}

/// A `ForEach` keyed by `Int` ids of every range the SDK's row table keeps apart (small,
/// negative, beyond its dense range, repeated); `send reverse` reverses the rows.
final class IntRowsScreen: Screen {
    static let route = "int-rows"
    private var ids = [5, -3, 2_000_000, 0, 5]

    init(context: ScreenContext) {}

    var body: some View {
        List {
            ForEach(ids, id: \.self) { id in
                Banner(name: "row \(id)")
            }
        }
    }

    func handle(action: String, payload: [UInt8]) throws {
        guard action == "reverse" else { throw BerthError(code: .unsupported, message: "int-rows has no action '\(action)'") }
        ids.reverse()
    }
}

/// A `Badge`, then 600 rows keyed by `\.number` (a key path, not `\.self`) that `send shift`
/// replaces with 600 new ones: the screen's identity table outgrows what it shows and
/// starts over every few shifts.
final class ChurnScreen: Screen {
    static let route = "churn"
    struct Item {
        let number: Int
    }

    private var base = 0

    init(context: ScreenContext) {}

    var body: some View {
        VStack {
            Badge()
            List {
                ForEach((base..<base + 600).map(Item.init), id: \.number) { item in
                    Banner(name: "item \(item.number)")
                }
            }
        }
    }

    func handle(action: String, payload: [UInt8]) throws {
        guard action == "shift" else { throw BerthError(code: .unsupported, message: "churn has no action '\(action)'") }
        base += 600
    }
}

/// A `ForEach` keyed by ids of the plugin's own `Hashable` type (neither `Int` nor
/// `String`), one of them repeated; `send reverse` reverses the rows.
final class KeyedRowsScreen: Screen {
    static let route = "keyed-rows"
    struct Key: Hashable {
        let shelf: Int
        let name: String
    }

    private var keys = [Key(shelf: 1, name: "a"), Key(shelf: 2, name: "b"), Key(shelf: 1, name: "a"), Key(shelf: 3, name: "c")]

    init(context: ScreenContext) {}

    var body: some View {
        List {
            ForEach(keys, id: \.self) { key in
                Banner(name: "\(key.name)\(key.shelf)")
            }
        }
    }

    func handle(action: String, payload: [UInt8]) throws {
        guard action == "reverse" else { throw BerthError(code: .unsupported, message: "keyed-rows has no action '\(action)'") }
        keys.reverse()
    }
}
