import BerthSDK

/// A screen of many stateful rows, for the render-pass benchmark and its test: the argument
/// is the row count (default 10,000). Each row is a composite view with its own @State.
final class GridScreen: Screen {
    static let route = "grid"
    private let rows: [Int]

    init(context: ScreenContext) {
        let count = Int(String(decoding: context.argument, as: UTF8.self)) ?? 10_000
        rows = Array(0..<count)
    }

    var body: some View {
        List {
            ForEach(rows, id: \.self) { row in
                Cell(row: row)
            }
        }
    }
}

struct Cell: View {
    let row: Int
    @State var taps = 0

    var body: some View {
        Button("row \(row): \(taps)") { taps += 1 }
    }
}

@_cdecl("berth_stress_entry_v1")
public func berthStressEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "org.berth.stress", screens: [GridScreen.self, ShiftScreen.self, NestedScreen.self, DuplicatesScreen.self, IntRowsScreen.self, ChurnScreen.self, KeyedRowsScreen.self, AppearScreen.self, PoolScreen.self, TrapScreen.self, ResolveScreen.self],
           services: [.scoped(ScreenResolved.self, .screen) { ScreenResolved() }, .scoped(SessionResolved.self, .session) { SessionResolved() },
                      .scoped(RequestResolved.self, .request) { RequestResolved() }, .scoped(TrapService.self, .screen, make: TrapService.make)])
        .export(host, plugin)
}
