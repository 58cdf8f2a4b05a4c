import BerthRuntime

/// The screens from the launch root to the visible one (`BerthHost.visibleScreens`). A
/// presented screen starts a new layer; the front layer is drawn over the screen under it
/// (the backdrop).
struct ScreenChain {
    /// The screens, the launch stack's root first.
    let screens: [ScreenSnapshot]
    /// Where the front layer starts in `screens`: the last presented screen, else 0.
    let frontStart: Int

    /// The chain `visibleScreens` lists (empty when nothing is open).
    init(_ visibleScreens: [ScreenSnapshot]) {
        screens = visibleScreens
        frontStart = Self.presentedIndices(screens).max() ?? 0
    }

    /// The screen in front.
    var visible: ScreenSnapshot? { screens.last }

    /// The screen under the front layer, when the front layer is presented.
    var backdrop: ScreenSnapshot? { frontStart > 0 ? screens[frontStart - 1] : nil }

    /// Indices of presented screens (each starts a layer).
    var modalStarts: Set<Int> { Set(Self.presentedIndices(screens)) }

    /// What Esc or the header's affordance does: back on a stack, dismiss a modal's root,
    /// close the launch stack's root (back to the start screen).
    var back: Scene.BackAffordance {
        screens.count - frontStart > 1 ? .back : frontStart > 0 ? .dismiss : .close
    }

    private static func presentedIndices(_ screens: [ScreenSnapshot]) -> [Int] {
        // The chain's first screen is the launch stack's root: never presented.
        screens.indices.dropFirst().filter { screens[$0].presented }
    }
}

extension ScreenContent {
    /// A screen's part of a scene: its last tree and title when it renders views, else a
    /// note; the actions it declares below.
    init(screen: ScreenSnapshot) {
        self.init(heading: "\(screen.plugin)/\(screen.route.name) · screen \(screen.id)", actions: screen.actions)
        tree = screen.tree
        title = screen.title
        if tree == nil {
            note = actions.isEmpty ? "This screen shows no views." : "This screen shows no views; its actions are below."
        }
    }

    /// The start screen: every route (`PLUGIN/ROUTE`) that can be opened.
    init(startWith routes: [Route]) {
        let note = routes.isEmpty ? "No plugin offers a screen. Drop plugins into the plugins folder, or type : for commands." : "Open a screen:"
        self.init(heading: "Berth", note: note, routes: routes)
    }
}
