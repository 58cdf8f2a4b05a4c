@_spi(Engine) import BerthCore
/// Navigation as the host's users see it: the operations of `Navigator`, which owns the
/// router tree and the work queue. Those that hand out a `Router` are `package` (the CLI,
/// the terminal front end, tests); an application opens and closes screens by value
/// (`openScreen`, `closeScreen`, Embedding/BerthHost+Snapshots.swift).
extension BerthHost {
    /// The root of the router tree, retained for the host's whole life.
    package var launchRouter: Router { navigator.launchRouter }
    /// The screen the user sees (see `Navigator.visibleRouter`).
    @_spi(Engine) public var visibleRouter: Router? { navigator.visibleRouter }
    /// Every open screen's router, in tree order.
    package var openRouters: [Router] { navigator.openRouters }
    /// The open screen with router id `id`.
    @_spi(Engine) public func router(_ id: Int) -> Router? { navigator.router(id) }

    /// Pushes `route` (a plugin's route, or a bare route one loaded plugin provides) on the visible stack, handing the screen `argument`; on an empty launch stack it becomes the root screen. `onRelease` runs once when the screen is released.
    @discardableResult
    @_spi(Engine) public func push(_ route: Route, argument: [UInt8] = [], onRelease: (() -> Void)? = nil) throws(ScreenError) -> Router {
        try navigator.push(route, argument: argument, onRelease: onRelease)
    }

    /// Opens `route` as `push` does (or as `present` does, when `presented`), with the plugin's
    /// `create`, `activate` and first render on its lane: the host, and the screen it is
    /// opened from, go on until the new screen is ready. Once created it is attached on
    /// whatever is visible then, and pushed there once active; it closes, and this fails,
    /// when that place was closed or changed meanwhile. Refused as busy while the plugin is
    /// in another call.
    @discardableResult
    package func open(_ route: Route, argument: [UInt8] = [], presented: Bool = false) async throws(ScreenError) -> Router {
        try await navigator.openOnLane(route, argument: argument, presented: presented)
    }

    /// Presents `route` modally from the visible screen, with a stack of its own (see `push` for the arguments).
    @discardableResult
    package func present(_ route: Route, argument: [UInt8] = [], onRelease: (() -> Void)? = nil) throws(ScreenError) -> Router {
        try navigator.present(route, argument: argument, onRelease: onRelease)
    }

    /// Closes `router`'s screen: dismisses it when it is the root of a presented stack, else pops it and every screen above it.
    @_spi(Engine) public func close(_ router: Router) { navigator.close(router) }
    /// Pops the visible stack back to its root screen.
    public func popToRoot() throws(ScreenError) { try navigator.popToRoot() }
    /// `popToRoot`, with the closed screens' calls into their plugins and the render of the
    /// root on the plugins' lanes (a front end's).
    public func popToRootOnLane() async throws(ScreenError) {
        try await navigator.refreshingOnLane { () throws(ScreenError) in try navigator.popToRoot() }
    }
    /// The user went back (as a swipe-back would): the visible screen is popped.
    public func userBack() throws(ScreenError) { try navigator.userBack() }
    /// The user dismissed the top-most modal (as a swipe-down would): its whole stack is removed.
    public func userDismiss() throws(ScreenError) { try navigator.userDismiss() }
    /// `userBack`, with the screen it leaves visible rendered on that screen's plugin's lane:
    /// the host goes on while it renders (a front end's back).
    public func userBackOnLane() async throws(ScreenError) {
        try await navigator.refreshingOnLane { () throws(ScreenError) in try navigator.userBack() }
    }
    /// `userDismiss`, with the screen it leaves visible rendered on its plugin's lane.
    public func userDismissOnLane() async throws(ScreenError) {
        try await navigator.refreshingOnLane { () throws(ScreenError) in try navigator.userDismiss() }
    }

    /// Sends an action to an open, active screen. The action runs on its plugin's lane: the
    /// host goes on meanwhile (other screens, front ends, commands), and this returns once
    /// the plugin has, with the work it asked for done and the visible screen rendered.
    /// While its plugin is in another call the screen is busy: `ScreenError.Code.busy`.
    public func send(screen id: Int, action: String, payload: [UInt8]) async throws(ScreenError) {
        try await navigator.sendOnLane(screen: id, action: action, payload: payload)
    }

    /// `send`, with the host waiting for the plugin on its own stack. `package`: for tests and
    /// checks that drive one screen at a time; applications use `send`.
    package func sendBlocking(screen id: Int, action: String, payload: [UInt8]) throws(ScreenError) {
        try navigator.send(screen: id, action: action, payload: payload)
    }

    /// Observes `child`'s delegate actions from the host side (for example the CLI).
    package func observeDelegate(of child: Router, _ handler: @escaping (String, [UInt8]) -> Void) {
        navigator.observeDelegate(of: child, handler)
    }

    /// A screen created but never attached or activated (conformance: create/destroy).
    /// `package`: only `berth conformance-check` needs a screen outside the tree; an
    /// application opens screens with `push` and `present`.
    package func createDetached(_ route: Route) throws(ScreenError) -> Router { try navigator.createDetached(route) }
    package func destroyDetached(_ router: Router) { navigator.destroyDetached(router) }

    /// Runs a host operation; when the outermost one ends, the queued plugin work runs.
    func topLevel<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T { try navigator.topLevel(body) }
}

extension BerthHost {
    /// One open screen as a restart reopens it: its route, pushed or presented.
    public struct RouteReplay: Codable, Sendable, Equatable {
        /// The screen's route, its plugin named (stored as its text, `PLUGIN.ID/ROUTE`).
        public var route: Route
        /// True when the screen is the root of a presented (modal) stack.
        public var presented: Bool

        /// `route`, pushed, or presented when `presented`.
        public init(route: Route, presented: Bool) {
            self.route = route
            self.presented = presented
        }
    }

    /// The open screens in tree order: replaying them (push, or present for a modal's
    /// root) rebuilds the same stacks and modals.
    public func openRouteReplay() -> [RouteReplay] {
        // A screen still being opened (attached, not yet pushed) is not replayed.
        openRouters.filter { $0.stack?.contains($0) == true }.map { router in
            let presented = router.parent.map { router.isPresented(from: $0) } ?? false
            return RouteReplay(route: router.qualifiedRoute, presented: presented)
        }
    }

    /// Reopens screens from `openRouteReplay()` (after a restart), logging what fails.
    public func replay(_ screens: [RouteReplay]) {
        for screen in screens {
            do {
                if screen.presented { try present(screen.route) } else { try push(screen.route) }
            } catch {
                emit(.failed, .restart, "could not reopen \(screen.route): \(error.message)")
            }
        }
    }
}

