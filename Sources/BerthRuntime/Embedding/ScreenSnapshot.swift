@_spi(Engine) import BerthCore
/// One open screen as an application sees it: a value read on the main actor, which stays as
/// it was when read (read it again after a change: `BerthHost.changes`).
public struct ScreenSnapshot: Sendable, Equatable, Identifiable {
    /// The screen's number, never reused in a host process (`send(screen:)`, `input(_:view:screen:)`).
    public var id: Int
    /// Its route, its plugin named: open it again to open the same screen.
    public var route: Route
    /// The id of the plugin it belongs to.
    public var plugin: String
    /// The number of the plugin generation its instance was made by; nil while it has none.
    public var generation: Int?
    /// Where it stands: created, opening (`BerthHost.open` has not pushed it yet), active,
    /// inactive (covered or leaving), released.
    public var state: ScreenState
    /// The screen under it (the one it was pushed on or presented from); nil for the root of
    /// the launch stack.
    public var parent: Int?
    /// True when it is the root of a stack presented (modally) from `parent`.
    public var presented: Bool
    /// True when its plugin renders views (a screen without views has only its actions).
    public var rendersViews: Bool
    /// The first `title` in its last render, if any.
    public var title: String?
    /// Its last render's views; nil when it has not rendered yet or renders none.
    public var tree: ViewNode?
    /// The call its plugin is in on its lane, if any: input to the screen waits meanwhile.
    public var busyCall: BusyCall?
    /// The actions its manifest declares for it.
    public var actions: [DeclaredAction]

    /// True while its plugin is in a call (`busyCall` is set): input is refused as busy.
    public var busy: Bool { busyCall != nil }
}

extension ScreenSnapshot {
    /// The screen `router` holds, as it is now; `opening`: where it goes while `open` has
    /// not pushed it yet (it shows as `opening`, presented when it will be).
    @MainActor
    init(_ router: Router, opening: Navigator.OpeningPlace?, actions: [DeclaredAction]) {
        let module = router.module
        let tree = module.flatMap { $0.canRender ? $0.lastTree : nil }
        let state = module.map { opening != nil && !$0.isReleased ? .opening : $0.state } ?? .released
        self.init(id: router.id, route: router.qualifiedRoute, plugin: router.pluginID, generation: module?.generation.number,
                  state: state,
                  parent: router.parent.flatMap { $0.kind == .screen ? $0.id : nil },
                  presented: opening?.presented ?? router.parent.map { router.isPresented(from: $0) } ?? false,
                  rendersViews: module?.canRender ?? false, title: tree?.screenTitle, tree: tree?.root,
                  busyCall: module?.busyCall, actions: actions)
    }
}
