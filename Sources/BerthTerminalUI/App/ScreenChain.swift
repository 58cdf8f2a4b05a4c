@_spi(Engine) import BerthRuntime

/// The screens from the launch root to the visible one. A presented screen starts a new
/// layer; the front layer is drawn over the screen under it (the backdrop).
@MainActor
struct ScreenChain {
    /// The screens, the launch root's first child first.
    let screens: [Router]
    /// Where the front layer starts in `screens`: the last presented screen, else 0.
    let frontStart: Int

    /// The chain ending at `visible` (empty when nothing is open).
    init(visible: Router?) {
        var screens: [Router] = []
        var current = visible
        while let router = current, router.kind == .screen {
            screens.append(router)
            current = router.parent
        }
        self.screens = screens.reversed()
        frontStart = Self.presentedIndices(self.screens).max() ?? 0
    }

    /// The screen in front.
    var visible: Router? { screens.last }

    /// The screen under the front layer, when the front layer is presented.
    var backdrop: Router? { frontStart > 0 ? screens[frontStart - 1] : nil }

    /// Indices of presented screens (each starts a layer).
    var modalStarts: Set<Int> { Set(Self.presentedIndices(screens)) }

    /// What Esc or the header's affordance does: back on a stack, dismiss a modal's root,
    /// close the launch stack's root (back to the start screen).
    var back: Scene.BackAffordance {
        screens.count - frontStart > 1 ? .back : frontStart > 0 ? .dismiss : .close
    }

    private static func presentedIndices(_ screens: [Router]) -> [Int] {
        screens.indices.dropFirst().filter { screens[$0].isPresented(from: screens[$0 - 1]) }
    }
}

extension ScreenContent {
    /// A screen's part of a scene: its last tree and title when it renders views, else a
    /// note; the actions it declares below.
    @MainActor
    init(screen router: Router, actions: [DeclaredAction]) {
        self.init(heading: "\(router.pluginID)/\(router.route) · screen \(router.id)", actions: actions)
        if let module = router.module, module.canRender {
            tree = module.lastTree?.root
            title = module.lastTree?.screenTitle
        }
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
