import BerthSDK

/// Counts its own render passes, for the tests of the render at the end of an operation:
/// `Text("renders N, appeared B")`. With the argument "call-back", `didAppear` starts a
/// managed task (a call to the host) and marks the screen appeared; otherwise its events
/// call nothing back and change nothing.
final class AppearScreen: Screen {
    static let route = "appear"
    private let callsBack: Bool
    private var renders = 0
    private var appeared = false
    private let context: ScreenContext

    init(context: ScreenContext) {
        self.context = context
        callsBack = String(decoding: context.argument, as: UTF8.self) == "call-back"
    }

    var body: some View {
        renders += 1
        return Text("renders \(renders), appeared \(appeared)")
    }

    func onEvent(_ event: ScreenEvent) {
        guard callsBack, case .didAppear = event else { return }
        appeared = true
        try? context.run("appear") { _ in }
    }
}
