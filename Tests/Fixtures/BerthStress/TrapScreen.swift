import BerthSDK

/// Traps as Swift code does by mistake, for the crash report's test: the argument names
/// the place ("create", "activate", "render", "button", "action", "task", "service"), and
/// there the screen reads past the end of an empty array ("Fatal error: Index out of range"),
/// in that place's own code (a line marked `// trap: PLACE`), so the report must name it.
final class TrapScreen: Screen {
    static let route = "trap"
    static let actions: [ScreenAction] = ["remove"]
    /// Not an index the compiler can see is out of range: the place's name's length.
    static let empty: [Int] = []
    private let moment: String
    private let context: ScreenContext

    init(context: ScreenContext) {
        self.context = context
        moment = String(decoding: context.argument, as: UTF8.self)
        if moment == "create" { _ = Self.empty[moment.count] } // trap: create
    }

    var body: some View {
        if moment == "render" { _ = Self.empty[moment.count] } // trap: render
        return VStack {
            Text("trap at \(moment)")
            Button("Trap") { [moment] in _ = Self.empty[moment.count] } // trap: button
        }
    }

    func activate() throws {
        if moment == "activate" { _ = Self.empty[moment.count] } // trap: activate
        if moment == "service" { _ = try context.resolve(TrapService.self) }
    }

    func onEvent(_ event: ScreenEvent) {
        guard moment == "task", case .didAppear = event else { return }
        try? context.run("trap") { [moment] _ in _ = Self.empty[moment.count] } // trap: task
    }

    func handle(action: String, payload: [UInt8]) throws {
        _ = Self.empty[moment.count + action.count] // trap: action
    }
}

/// A screen-scoped service whose factory traps (`services:` of the stress plugin).
final class TrapService {
    static func make() -> TrapService {
        _ = TrapScreen.empty["service".count] // trap: service
        return TrapService()
    }
}
