@_spi(Engine) import BerthCore
/// The host's navigation container: the launch stack, pushed screens, presented stacks,
/// and the queue of work plugins ask for. Every transition runs the close sequence
/// (deactivate → detach → transition → release) and computes each screen's lifecycle
/// events from the transition itself. It owns the navigation state: others call its
/// methods, and module instances report to its `activity`.
@MainActor
package final class Navigator {
    /// The root of the router tree, retained for the host's whole life.
    package let launchRouter = Router(id: 0, kind: .launch)
    /// The launch router's navigation stack.
    let launchStack = NavigationStack(id: 0, presenter: nil)
    private var nextStackID = 1
    /// Work plugins ask for during a call, run once the host is back at top level.
    let requests = PluginRequestQueue()
    /// Screens being opened on their lane (`openOnLane`), by router id: attached, not pushed yet.
    var openings: [Int: OpeningPlace] = [:]
    /// Screens plugins asked to open on their lane, by promised id, until the open is over.
    var requestedOpenings: [Int: RequestedOpening] = [:]
    /// While set (`refreshingOnLane`), the end of an operation leaves the visible screen's
    /// render to the caller, on the screen's lane: `refreshOnLane` is that screen.
    private var refreshesOnLane = false
    private var refreshOnLane: ModuleInstance?
    /// Delegate actions and contexts delivered on the observer's lane, by number, until they
    /// return.
    var deliveriesOnLanes: [Int: Task<Void, Never>] = [:]
    /// The requests queued after such deliveries, by number, until they have run
    /// (`drain(_:after:from:)`): `waitsFrom` is the number of the first delivery they wait
    /// for; those deliveries do not wait for them in turn.
    var heldRequests: [Int: (waitsFrom: Int, task: Task<Void, Never>)] = [:]
    /// Screens whose close calls run on their plugin's lane, closed by what a plugin asked for
    /// during a call on a lane (`closingOnLanes(followedUp:)`), by number, until they have run.
    var closingFollowUps: [Int: Task<Void, Never>] = [:]
    /// While set, a screen that closes has its plugin's close calls run on the plugin's lane;
    /// with `closesAreFollowUps`, the operation that closed it waits for them.
    var closesOnLanes = false
    var closesAreFollowUps = false
    /// The visible screen left unrendered at an operation's end because its plugin's lane
    /// ran a closed screen's calls: it renders once they are over.
    var refreshAfterClosing: ModuleInstance?
    /// How many opens plugins asked for on their lane, deliveries on lanes and held requests,
    /// so far (`RequestedOpening.number`, the keys of `deliveriesOnLanes`, `heldRequests`).
    var followUpsStarted = 0
    /// Live instances, the operation depth and the last render, as instances report them.
    let activity: ScreenActivity
    let events: EventLog
    /// Makes the screens: resolves routes, checks the open-screen limit, numbers routers.
    let screens: ScreenMaker
    let stackDepth: Int
    /// Told when an outermost operation has ended (`BerthHost.addChangeObserver`).
    /// Unchecked exclusivity: read whenever an operation ends; the observers are called
    /// over a copy, so one that subscribes or unsubscribes overlaps no access.
    @exclusivity(unchecked) private var changeObservers: [Int: () -> Void] = [:]
    private var nextChangeToken = 1
    /// How many outermost operations have ended (each told the change observers once).
    private(set) var changesReported = 0

    init(events: EventLog, activity: ScreenActivity, screens: ScreenMaker, stackDepth: Int) {
        self.events = events
        self.activity = activity
        self.screens = screens
        self.stackDepth = stackDepth
    }

    /// Calls `observer` each time an outermost operation ends; returns its token.
    func addChangeObserver(_ observer: @escaping () -> Void) -> Int {
        defer { nextChangeToken += 1 }
        changeObservers[nextChangeToken] = observer
        return nextChangeToken
    }

    func removeChangeObserver(_ token: Int) {
        changeObservers[token] = nil
    }

    /// True when no host operation is running (nothing would drain queued work soon).
    var isIdle: Bool { activity.isIdle }

    // MARK: Reading the tree

    /// The screen the user sees: the top of the top-most presented stack, else of the
    /// launch stack; nil when nothing is open. A modal covers its whole stack, even when
    /// a screen was pushed under it after it was presented.
    package var visibleRouter: Router? {
        // Plain loops: a main-actor closure handed to `last(where:)` checks its executor on
        // every call (a tenth of a context dispatch, which ends with this lookup).
        var stack = launchStack
        search: while true {
            for router in stack.routers.reversed() {
                if let presented = router.presentedStack, presented.top != nil {
                    stack = presented
                    continue search
                }
            }
            return stack.top
        }
    }

    /// Every open screen's router, the launch router's descendants in tree order.
    package var openRouters: [Router] {
        launchRouter.subtreeDeepestFirst().reversed().filter { $0.kind == .screen }
    }

    /// The open screen with router id `id`: a walk of the tree that builds no list (every
    /// action and render looks its screen up).
    package func router(_ id: Int) -> Router? {
        func find(under router: Router) -> Router? {
            for child in router.children {
                if child.id == id, child.kind == .screen { return child }
                if let found = find(under: child) { return found }
            }
            return nil
        }
        return find(under: launchRouter)
    }

    /// Open screens of `pluginID`, deepest first.
    func routers(of pluginID: String) -> [Router] {
        launchRouter.subtreeDeepestFirst().filter { $0.kind == .screen && $0.pluginID == pluginID }
    }

    // MARK: Opening screens

    /// Pushes `route` (a plugin's route, or a bare route one loaded plugin provides) on
    /// the visible stack: attach → activate → push, with its events. On an empty launch
    /// stack this launches the root screen.
    @discardableResult
    package func push(_ route: Route, argument: [UInt8] = [], onRelease: (() -> Void)? = nil) throws(ScreenError) -> Router {
        try topLevel { () throws(ScreenError) -> Router in
            let stack = visibleRouter?.stack ?? launchStack
            let child = try screens.makeScreen(route, argument: argument)
            try attachOrRelease(child) { () throws(ScreenError) in try attachActivateAndPush(child, in: stack, onRelease: onRelease) }
            return child
        }
    }

    /// Presents `route` modally from the visible screen, with a stack of its own.
    @discardableResult
    package func present(_ route: Route, argument: [UInt8] = [], onRelease: (() -> Void)? = nil) throws(ScreenError) -> Router {
        try topLevel { () throws(ScreenError) -> Router in
            guard let presenter = visibleRouter else {
                throw ScreenError(.navigation, screen: nil, "nothing is open to present from (open a screen first)")
            }
            let child = try screens.makeScreen(route, argument: argument)
            try attachOrRelease(child) { () throws(ScreenError) in try attachActivateAndPresent(child, from: presenter, onRelease: onRelease) }
            return child
        }
    }

    /// A screen created but never attached or activated (conformance: create/destroy).
    package func createDetached(_ route: Route) throws(ScreenError) -> Router {
        try screens.makeScreen(route, argument: [])
    }

    /// Destroys a screen from `createDetached`.
    package func destroyDetached(_ router: Router) {
        router.release()
    }

    /// Runs an attach helper; when it refuses, the new screen is released so no instance
    /// is left behind.
    func attachOrRelease(_ child: Router, _ attach: () throws(ScreenError) -> Void) throws(ScreenError) {
        do {
            try attach()
        } catch {
            if !child.isReleased && child.parent == nil {
                child.release()
                events.emit(.released, .screen(child.id), "released: \(error.message)")
            }
            throw error
        }
    }

    // MARK: The seed's router helpers

    /// attach → activate → push. A router already in the stack is not attached or pushed
    /// again. `onRelease` runs once when the screen is released, whatever closes it.
    func attachActivateAndPush(_ child: Router, in stack: NavigationStack? = nil, onRelease: (() -> Void)? = nil) throws(ScreenError) {
        let stack = stack ?? child.stack ?? visibleRouter?.stack ?? launchStack
        guard !stack.contains(child), !child.isReleased else { return }
        let depth = stackDepth
        guard stack.routers.count < depth else {
            throw ScreenError(.screenLimit, screen: child.id, "cannot push \(child.pluginID)/\(child.route): its stack is \(stack.routers.count) screens deep, the limit is \(depth)")
        }
        let parent = stack.top ?? stack.presenter ?? launchRouter
        guard parent.attachChild(child) else { return }
        child.onRelease = onRelease
        child.stack = stack
        do {
            try activateHoldingRequests(child)
        } catch {
            parent.detachChild(child)
            child.release()
            events.emit(.released, .screen(child.id), "released after failed activation")
            throw error
        }
        transition(removing: []) { stack.push(child) }
    }

    /// attach → activate → present: `child` becomes the root of a new modal stack over
    /// `presenter`, which must be the top of its stack and present nothing yet.
    package func attachActivateAndPresent(_ child: Router, from presenter: Router, onRelease: (() -> Void)? = nil) throws(ScreenError) {
        guard !child.isReleased, child.stack == nil else { return }
        try checkCanPresent(from: presenter)
        guard presenter.attachChild(child) else { return }
        let stack = NavigationStack(id: takeStackID(), presenter: presenter)
        child.onRelease = onRelease
        child.stack = stack
        do {
            try activateHoldingRequests(child)
        } catch {
            presenter.detachChild(child)
            child.release()
            events.emit(.released, .screen(child.id), "released after failed activation")
            throw error
        }
        transition(removing: []) {
            stack.push(child)
            presenter.presentedStack = stack
        }
    }

    /// deactivate → detach → pop → release, for `child` and everything above it in its
    /// stack (with any modal presented from those). A released or detached router: no-op.
    /// `package`: for `berth conformance-check`, which drives a table by hand; apps use `BerthHost`.
    package func deactivateDetachAndPop(_ child: Router) {
        guard let stack = child.stack, stack.contains(child), !child.isReleased else { return }
        guard stack.routers.first !== child || !stack.isPresented else {
            // Popping the root of a presented stack is dismissing it.
            deactivateDetachAndDismiss(child)
            return
        }
        let removed = child.subtreeDeepestFirst()
        markClosing(removed)
        deactivate(removed)
        child.parent?.detachChild(child)
        transition(removing: removed) {
            _ = stack.removeFrom(child)
            clearPresentedStacks(of: removed)
        }
        release(removed)
    }

    /// deactivate → detach → dismiss → release, for the presented stack whose root is
    /// `root` (every screen in it, and any modal above it, is removed permanently).
    package func deactivateDetachAndDismiss(_ root: Router) {
        guard let stack = root.stack, stack.isPresented, stack.routers.first === root, !root.isReleased,
              let presenter = stack.presenter
        else { return }
        let removed = root.subtreeDeepestFirst()
        markClosing(removed)
        deactivate(removed)
        presenter.detachChild(root)
        transition(removing: removed) {
            _ = stack.removeAll()
            presenter.presentedStack = nil
            clearPresentedStacks(of: removed)
        }
        release(removed)
    }

    /// The auto-sync path after the container removed screens itself (user-driven back or
    /// swipe-down): deactivate → detach → release, idempotent. Calling it again, or a
    /// programmatic close afterwards, does nothing.
    package func deactivateDetachAndReleaseIfNeeded(_ router: Router) {
        guard !router.isReleased else { return }
        let removed = router.subtreeDeepestFirst()
        markClosing(removed)
        deactivate(removed)
        router.parent?.detachChild(router)
        release(removed)
    }

    // MARK: Closing screens

    /// Closes `router` programmatically: dismiss when it is the root of a presented stack,
    /// else pop it (and everything above it).
    package func close(_ router: Router) {
        topLevel {
            guard let stack = router.stack, !router.isReleased else { return }
            if !stack.contains(router) {
                // Attached, not yet pushed (being opened on its lane): closed on its own.
                deactivateDetachAndReleaseIfNeeded(router)
            } else if stack.isPresented && stack.routers.first === router {
                deactivateDetachAndDismiss(router)
            } else {
                deactivateDetachAndPop(router)
            }
        }
    }

    /// Pops the visible stack back to its root screen (every screen above it removed).
    package func popToRoot() throws(ScreenError) {
        try topLevel { () throws(ScreenError) in
            guard let stack = visibleRouter?.stack, stack.routers.count > 1 else {
                throw ScreenError(.navigation, screen: nil, "the visible stack has no screen above its root")
            }
            deactivateDetachAndPop(stack.routers[1])
        }
    }

    /// User-driven back (swipe-back): the container pops the visible screen itself, then
    /// the router syncs through the idempotent release.
    package func userBack() throws(ScreenError) {
        try topLevel { () throws(ScreenError) in
            guard let visible = visibleRouter, let stack = visible.stack, stack.routers.count > 1 else {
                throw ScreenError(.navigation, screen: nil, "back: the visible screen is the root of its stack (use dismiss for a modal)")
            }
            markClosing(visible.subtreeDeepestFirst())
            transition(removing: [visible]) { _ = stack.removeFrom(visible) }
            events.emit(.event, .screen(visible.id), "removed by the user (back)")
            deactivateDetachAndReleaseIfNeeded(visible)
        }
    }

    /// User-driven dismiss (swipe-down): the container removes the top-most modal stack
    /// itself, then its routers sync through the idempotent release.
    package func userDismiss() throws(ScreenError) {
        try topLevel { () throws(ScreenError) in
            guard let visible = visibleRouter, let stack = visible.stack, stack.isPresented,
                  let root = stack.routers.first, let presenter = stack.presenter
            else {
                throw ScreenError(.navigation, screen: nil, "dismiss: no modal is presented")
            }
            let removed = root.subtreeDeepestFirst()
            markClosing(removed)
            transition(removing: removed) {
                _ = stack.removeAll()
                presenter.presentedStack = nil
            }
            events.emit(.event, .screen(root.id), "modal dismissed by the user")
            deactivateDetachAndReleaseIfNeeded(root)
        }
    }

    /// Closes every open screen of `pluginID`, deepest first (unload), calling its plugin
    /// from here: its generation ends next.
    func closeScreens(of pluginID: String) {
        closingOnMain {
            for router in routers(of: pluginID) where !router.isReleased {
                close(router)
            }
        }
    }

    // MARK: Actions and delegate actions

    /// Sends an action to an open, active screen (`send` in the host).
    package func send(screen id: Int, action: String, payload: [UInt8]) throws(ScreenError) {
        try topLevel { () throws(ScreenError) in
            guard let module = router(id)?.module else { throw ScreenError(.noSuchScreen, screen: id, "no open screen \(id)") }
            // The outermost operation on the visible screen: `refreshVisibleScreen` renders it next.
            let renderFollows = activity.operationDepth == 1 && visibleRouter?.module === module
            try module.handle(action: action, payload: payload, renderFollows: renderFollows)
        }
    }

    /// Observes `child`'s delegate actions from the host side (for example the CLI).
    package func observeDelegate(of child: Router, _ handler: @escaping (String, [UInt8]) -> Void) {
        child.delegateObservers.append(.host(handler))
    }

    /// Makes the screen `observer` receive the delegate actions of its open child screen
    /// `childID` (anywhere below it). Observing the same child again changes nothing.
    func observeDelegate(of childID: Int, by observer: Router) throws(ScreenError) {
        guard let child = observer.subtreeDeepestFirst().first(where: { $0.id == childID && $0.kind == .screen && $0 !== observer }) else {
            throw ScreenError(.noSuchScreen, screen: observer.id, "observe_delegate: screen \(childID) is not an open child of screen \(observer.id)")
        }
        guard !child.delegateObservers.contains(where: { $0.screen === observer }) else { return }
        child.delegateObservers.append(.screen(observer))
    }

    /// Delivers a delegate action of `child` to its observers, in registration order.
    /// A screen observer released since it registered is dropped here (an observer sits
    /// above its child, so it goes in the same close and nothing is delivered to it).
    /// `onLanes`: each observing screen gets it on its plugin's lane (`deliverOnLane`), as
    /// the host's own call; else with a blocking call.
    func deliverDelegate(from child: Router, action: String, payload: [UInt8], onLanes: Bool = false) {
        child.delegateObservers.removeAll { $0.hostHandler == nil && ($0.screen?.isReleased ?? true) }
        events.emit(.event, .screen(child.id), "delegate '\(action)' → \(child.delegateObservers.count) observer(s)")
        for observer in child.delegateObservers {
            if let handler = observer.hostHandler {
                handler(action, payload)
            } else if let screen = observer.screen?.module, onLanes {
                deliverOnLane(to: screen) { held async throws(ScreenError) -> Bool in
                    try await screen.deliverDelegateOnLane(from: child.id, action: action, payload: payload, held: held)
                }
            } else if let screen = observer.screen?.module {
                do {
                    try screen.deliverDelegate(from: child.id, action: action, payload: payload)
                } catch {
                    events.emit(.failed, .screen(screen.id), error.message)
                }
            }
        }
    }

    // MARK: Internals

    /// Runs a host operation; when the outermost one ends, runs the work plugins asked for
    /// during it (navigation requests, delegate deliveries), in order.
    func topLevel<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        activity.operationBegan()
        defer {
            activity.operationEnded()
            if activity.isIdle {
                drainPendingWork()
                refreshVisibleScreen()
                activity.forgetRender()
                changesReported += 1
                for observer in changeObservers.values { observer() }
            }
        }
        return try body()
    }

    /// Renders the visible screen once an operation is over, as a UI refreshes what it
    /// shows: its state GC runs and its `.routerContext` observers stay current.
    private func refreshVisibleScreen() {
        guard let router = visibleRouter, let module = router.module, module.isActive, module.canRender,
              activity.freshlyRendered !== module
        else { return }
        // A busy screen renders when its call returns (the operation that ends it), or once
        // the calls of a screen closed on its lane are over.
        if module.isBusy {
            if module.laneRunsClosedScreens { refreshAfterClosing = module }
            return
        }
        if refreshesOnLane {
            refreshOnLane = module
            return
        }
        activity.operationBegan()
        do {
            try module.render()
        } catch {
            events.emit(.failed, .screen(router.id), error.message)
        }
        activity.operationEnded()
        drainPendingWork()
    }

    /// Runs `operation` (a back, a dismiss or a close), then renders the screen it leaves
    /// visible on that screen's lane (`renderOnLane`), not on the main actor: a plugin slow
    /// to render holds only its own screen. A failed render is an event on the screen. The
    /// closed screens' calls into their plugins run on the plugins' lanes, not waited for
    /// (`closingOnLanes`): back works at once, even on a busy screen.
    func refreshingOnLane(_ operation: () throws(ScreenError) -> Void) async throws(ScreenError) {
        refreshesOnLane = true
        let outcome = Result { () throws(ScreenError) in try closingOnLanes(followedUp: false, operation) }
        refreshesOnLane = false
        if let module = refreshOnLane, module.isActive, visibleRouter?.module === module {
            refreshOnLane = nil
            do { _ = try await renderOnLane(screen: module.id) } catch { events.emit(.failed, .screen(module.id), error.message) }
        }
        refreshOnLane = nil
        try outcome.get()
    }

    /// Queues work a plugin asked for; it runs when the host is back at top level.
    func enqueue(_ work: @escaping () -> Void) {
        // Asked for during a call on a lane, or an activate: runs in the operation that ends
        // that call, or is dropped with a screen whose activate failed.
        if let held = LaneHop.holding {
            held.append(work)
        } else {
            requests.enqueue(work)
        }
    }

    /// Queues the host's own work (a worker's end) for when the host is back at top level:
    /// never held with a plugin's requests after a delivery on a lane.
    func enqueueHostWork(_ work: @escaping () -> Void) {
        requests.enqueueHostWork(work)
    }

    /// Queues the host's own work ahead of everything queued (`terminate`'s navigation,
    /// after the deliveries its context started on lanes).
    func enqueueFirst(_ work: @escaping () -> Void) {
        requests.enqueueFirst([work])
    }

    private func drainPendingWork() {
        var (first, deliveries) = (0, [Task<Void, Never>]())
        let (dropped, held, budgetLeft) = requests.drain { work in
            first = followUpsStarted
            activity.operationBegan()
            work()
            activity.operationEnded()
            // A delivery it started on an observer's lane comes before what was queued after.
            guard followUpsStarted != first else { return true }
            deliveries = deliveriesOnLanes.filter { $0.key >= first }.map(\.value)
            return deliveries.isEmpty
        }
        if dropped > 0 {
            events.emit(.failed, .host, "dropped \(dropped) queued plugin request(s): too many in one turn")
        }
        if !held.isEmpty { drain(held, after: deliveries, from: first, budgetLeft: budgetLeft) }
    }

    /// Returns once every one of `tasks` is over, or `limit` has passed.
    private static func untilOver(_ tasks: [Task<Void, Never>], orAfter limit: Duration) async {
        let over = Signal()
        Task { @MainActor in
            for task in tasks { await task.value }
            over.fire()
        }
        Task { @MainActor in
            try? await Task.sleep(for: limit)
            over.fire()
        }
        await over.wait()
    }

    /// Runs `held`, the plugins' requests queued after a delivery on a lane, once the
    /// delivery is over: in order, in an operation of their own, so the observer has its
    /// value before the sender's next request (its dismiss) touches the screens. The host
    /// goes on meanwhile; the operation that caused them waits for them too
    /// (`settlingFollowUps`). `first`: the number of the first of those deliveries;
    /// `budgetLeft`: what the stopped drain had left, which the held requests go on with.
    private func drain(_ held: [() -> Void], after deliveries: [Task<Void, Never>], from first: Int, budgetLeft: Int) {
        let number = followUpsStarted
        followUpsStarted += 1
        let task = Task { @MainActor [self] in
            // An observer that never returns holds them for as long as a synchronous caller
            // would wait for a post, no longer.
            await Self.untilOver(deliveries, orAfter: LaneState.hostCallWait)
            closingOnLanes(followedUp: true) { topLevel { requests.enqueueFirst(held, budgetLeft: budgetLeft) } }
            heldRequests[number] = nil
        }
        heldRequests[number] = (first, task)
    }

    func activate(_ router: Router) throws(ScreenError) {
        guard let interactor = router.interactor else { return }
        try interactor.activate()
        events.emit(.activated, .screen(router.id), "active")
        // Every screen renders once when it opens, visible or not, so what its views
        // declare (such as `.routerContext` observers) is in place from the start.
        if interactor.module.canRender {
            do { try interactor.module.render() } catch { events.emit(.failed, .screen(router.id), error.message) }
        }
    }

    private func deactivate(_ routers: [Router]) {
        for router in routers where router.interactor?.isActive == true {
            if let failure = router.interactor?.deactivate() {
                events.emit(.failed, .screen(router.id), failure)
            }
            events.emit(.deactivated, .screen(router.id), "inactive")
        }
    }

    private func release(_ routers: [Router]) {
        for router in routers where !router.isReleased {
            router.release()
            events.emit(.released, .screen(router.id), "released (\(router.pluginID)/\(router.route))")
        }
    }

    /// Applies a structural change and delivers the screen events it implies.
    func transition(removing removed: [Router], _ change: () -> Void) {
        let before = visibleRouter
        change()
        let after = visibleRouter
        let planned = ScreenEventPlanner.plan(
            visibleBefore: before.map(ObjectIdentifier.init), visibleAfter: after.map(ObjectIdentifier.init),
            removed: removed.map(ObjectIdentifier.init),
            hasAppeared: { id in self.routerByIdentity(id, among: removed + [before, after].compactMap { $0 })?.module?.hasAppeared ?? false }
        )
        let involved = removed + [before, after].compactMap { $0 }
        for event in planned {
            guard let router = routerByIdentity(event.screen, among: involved), let module = router.module else { continue }
            deliver(event.event, to: module, of: router)
        }
    }

    func deliver(_ event: ScreenLifecycleEvent, to module: ModuleInstance, of router: Router) {
        module.deliver(event)
        events.emit(.event, .screen(router.id), event.description)
    }

    private func routerByIdentity(_ id: ObjectIdentifier, among routers: [Router]) -> Router? {
        routers.first { ObjectIdentifier($0) == id }
    }

    private func clearPresentedStacks(of routers: [Router]) {
        for router in routers { router.presentedStack = nil }
    }

    /// The id the next screen will have (promised to a plugin whose push is queued).
    func takeRouterID() -> Int { screens.takeRouterID() }

    func takeStackID() -> Int {
        defer { nextStackID += 1 }
        return nextStackID
    }

    /// A push or present a plugin asked for, run at top level with the id it was promised.
    func performRequestedOpen(_ route: Route, argument: [UInt8], from requester: Router, id: Int, present: Bool) {
        do {
            let child = try screens.makeScreen(route, argument: argument, id: id)
            try attachOrRelease(child) { () throws(ScreenError) in
                if present {
                    try attachActivateAndPresent(child, from: requester)
                } else {
                    try attachActivateAndPush(child, in: requester.stack)
                }
            }
        } catch {
            events.emit(.failed, .screen(requester.id), "\(present ? "present" : "push") \(route) failed: \(error.message)")
        }
    }
}
