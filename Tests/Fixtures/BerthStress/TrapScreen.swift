import BerthSDK

/// Traps as Swift code does by mistake, for the crash report's test: the argument names
/// the moment ("create", "activate", "render", "action", "task"), and there the screen
/// removes an element past the end of an empty array ("Fatal error: Index out of range").
final class TrapScreen: Screen {
    static let route = "trap"
    static let actions: [ScreenAction] = ["remove"]
    private let moment: String
    private let context: ScreenContext

    init(context: ScreenContext) {
        self.context = context
        moment = String(decoding: context.argument, as: UTF8.self)
        if moment == "create" { Self.removePastTheEnd(moment) }
    }

    var body: some View {
        if moment == "render" { Self.removePastTheEnd(moment) }
        return Text("trap at \(moment)")
    }

    func activate() throws {
        if moment == "activate" { Self.removePastTheEnd(moment) }
    }

    func onEvent(_ event: ScreenEvent) {
        guard moment == "task", case .didAppear = event else { return }
        try? context.run("trap") { [moment] _ in Self.removePastTheEnd(moment) }
    }

    func handle(action: String, payload: [UInt8]) throws {
        Self.removePastTheEnd(moment)
    }

    /// Not an index the compiler can see is out of range: the moment's length.
    private static func removePastTheEnd(_ moment: String) {
        var items: [Int] = []
        items.remove(at: moment.count)
    }
}
