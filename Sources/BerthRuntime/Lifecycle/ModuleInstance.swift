@_spi(Engine) import BerthCore
import Foundation

/// What a `berth_screen_handle *` points to: the way back from a plugin's call to the
/// screen it is about. Only touched on the main actor. Valid from `create` until `destroy`
/// (berth.h); a screen closed in between is seen as gone.
@MainActor
package final class ScreenHandle {
    /// Set once `create` returned; nil while the plugin is still creating the instance.
    weak var module: ModuleInstance?
    /// The router while `create` runs, so a screen can register observers from its
    /// initializer; cleared when `create` returns. `unowned`, as `ModuleInstance.router` is
    /// (see there).
    unowned(safe) fileprivate var creatingRouter: Router?
    /// The screen's router: its module's once created (none once released), else the one
    /// it is being created for.
    var router: Router? { module?.router ?? creatingRouter }
    /// What the plugin's calls about this screen reach in the host.
    weak var host: (any PluginFacingHost)?
    /// Set when the screen was released while its plugin was in a call (a task's post, an
    /// action): its `deactivate` and `destroy` run after that call, and what `deactivate`
    /// persists then still lands (`persist_write` only; the screen is out of the tree).
    var closesAfterCall = false
    /// The registry and this screen's scope: immutable and thread-safe, so
    /// `service_resolve` (callable from any thread) reads them without the main actor.
    nonisolated let services: (registry: ScopeRegistry, screen: Scope)?
    /// The plugin whose screen this is, and the capabilities its generation's manifest
    /// grants: immutable, so any-thread calls check them without the main actor.
    nonisolated let grant: CapabilityGrant
    /// What other threads hand to the main actor for this screen (a refused resolve's report).
    nonisolated let hops = MainActorHops()
    /// The host's store, thread-safe and set once: a `persist_read` made during a call
    /// about this screen is answered on the plugin's lane (`HostCallbackHandler.persistReadOnLane`).
    nonisolated let persistentStore: PersistentStore?

    init(router: Router?, host: (any PluginFacingHost)?, services: (registry: ScopeRegistry, screen: Scope)?, grant: CapabilityGrant) {
        creatingRouter = router
        self.host = host
        self.services = services
        self.grant = grant
        persistentStore = host?.persistentStore
    }

    package var opaque: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    package nonisolated static func from(_ handle: OpaquePointer?) -> ScreenHandle? {
        guard let handle else { return nil }
        return Unmanaged<ScreenHandle>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }
}

/// What a module instance needs of the host beyond its plugin: where it reports its
/// activity, the registry of its scopes, and what its plugin's calls back reach.
struct ScreenContext {
    let activity: ScreenActivity
    let scopes: ScopeRegistry
    weak var pluginHost: (any PluginFacingHost)?
}

/// One module instance: a plugin's screen for one route, created through the plugin's
/// table and driven through `created → active ⇄ inactive → released`.
@MainActor
package final class ModuleInstance {
    /// Host-wide screen id (never reused in a host process).
    package let id: Int
    /// The route's name within its plugin.
    package let route: String
    /// The generation that created it; a reload makes new instances from the new one.
    package let generation: PluginGeneration
    private var plugin: any PluginConnection { generation.connection }
    /// Unchecked exclusivity: read by every context dispatch at each screen it reaches;
    /// its changes are state transitions that call out to nothing.
    @exclusivity(unchecked) private var lifecycle: ModuleInstanceLifecycle
    private(set) var instance: PluginInstanceID?
    /// Kept alive while the plugin holds the handle (until `destroy`).
    private var handle: ScreenHandle?
    /// Managed tasks running for this screen in its plugin's worker (isolated plugins).
    var workerTasks: Set<UInt64> = []
    /// The handle plugin → host calls name this screen by, while it is open.
    var screenHandle: ScreenHandle? { handle }
    /// The router holding this screen, for the plugin's navigation and delegate requests.
    /// `unowned`, not `weak`, so routers carry no side table (see `Router.parent`): the
    /// router clears it when it lets go of this instance's interactor, or is freed with it.
    private(set) unowned(safe) var router: Router?
    /// Where this instance reports its creation, renders, plugin calls and release.
    private let activity: ScreenActivity
    /// The registry its screen scope and request scopes live in.
    private let scopes: ScopeRegistry
    /// Set when its screen closes from an operation on a lane (`Navigator.closingOnLanes`):
    /// its close sequence's calls into the plugin (`deactivate`, events, `destroy`) run on
    /// the plugin's lane, and the host goes on.
    var closing: Closing?
    /// Whether the screen has appeared in its container (for `isPresentedInitially`).
    var hasAppeared = false
    /// Screen events delivered so far, in order (the `events` log and tests read it).
    package private(set) var deliveredEvents: [ScreenLifecycleEvent] = []
    /// How many render passes the plugin made for this instance; for tests.
    private(set) var renderPasses = 0
    /// The `@State` of this instance's views; dropped with the instance.
    package let stateStorage = StateStorage()
    /// The tree of the last render pass.
    package private(set) var lastTree: ViewTree?
    /// This screen's scope: current while the host calls into it, ended on release.
    package let screenScope: Scope

    /// Where it is in `created → active ⇄ inactive → released`.
    package var state: ScreenState { lifecycle.current }
    /// True while active (wired to the runtime, receiving input).
    package var isActive: Bool { lifecycle.isActive }
    /// True once released: the plugin's instance is destroyed.
    package var isReleased: Bool { lifecycle.isReleased }
    /// The id of the plugin whose screen it is.
    package var pluginID: String { generation.pluginID }

    /// What an instance needs before its plugin creates it: its screen scope, and the handle
    /// the plugin's calls about it name.
    private struct Prepared {
        let scope: Scope
        let handle: ScreenHandle
    }

    /// Checks the route and makes the screen's scope and handle.
    private static func prepare(id: Int, route: String, generation: PluginGeneration, router: Router?,
                                context: ScreenContext) throws(ScreenError) -> Prepared {
        guard generation.manifest.routes.contains(route) else {
            throw ScreenError(.unknownRoute, screen: id, "\(generation.pluginID) has no route '\(route)' (routes: \(generation.manifest.routes.joined(separator: ", ")))")
        }
        let scope = context.scopes.makeScreenScope(screen: id, owner: "\(generation.pluginID)/\(route)")
        let handle = ScreenHandle(router: router, host: context.pluginHost, services: (context.scopes, scope), grant: generation.grant)
        return Prepared(scope: scope, handle: handle)
    }

    /// The plugin's `create` failed: the scope made for it ends, and the error names the route.
    private static func createFailed(_ error: PluginCallError, id: Int, route: String, generation: PluginGeneration, _ prepared: Prepared) -> ScreenError {
        prepared.scope.end()
        return ScreenError(.pluginFailed, screen: id, "\(generation.pluginID) create(\(route)) failed: \(error.message)",
                           pluginStatus: PluginStatus(code: error.status))
    }

    /// Calls the plugin's `create` for `route`.
    convenience init(id: Int, route: String, generation: PluginGeneration, argument: [UInt8] = [], router: Router?, context: ScreenContext) throws(ScreenError) {
        let prepared = try Self.prepare(id: id, route: route, generation: generation, router: router, context: context)
        let instance: PluginInstanceID
        do {
            defer { prepared.handle.creatingRouter = nil }
            let plugin = generation.connection
            instance = try HostCall.run { () throws(PluginCallError) in try plugin.create(route: route, argument: argument, screen: prepared.handle) }
        } catch {
            throw Self.createFailed(error, id: id, route: route, generation: generation, prepared)
        }
        self.init(id: id, route: route, generation: generation, router: router, context: context, prepared: prepared, instance: instance)
    }

    /// Calls the plugin's `create` for `route` on its lane: the main actor is free until the
    /// instance exists. Refused while the plugin is busy in another call (a task's post, the
    /// host's own call, is waited for instead).
    convenience init(onLaneWithID id: Int, route: String, generation: PluginGeneration, argument: [UInt8], router: Router?,
                     context: ScreenContext, held: HeldRequests) async throws(ScreenError) {
        await generation.connection.hostCallsEnded()
        let prepared = try Self.prepare(id: id, route: route, generation: generation, router: router, context: context)
        let plugin = generation.connection
        let running = RunningPluginCall.Call(plugin: generation.pluginID, route: route, screen: id, function: "create")
        let instance: PluginInstanceID
        do throws(PluginCallError) {
            defer { prepared.handle.creatingRouter = nil }
            if let busy = plugin.busyCall { throw PluginCallError.busy(generation.pluginID, busy) }
            instance = try await plugin.createOnLane(route: route, argument: argument, screen: prepared.handle, as: running,
                                                     in: LaneCallContext(screen: prepared.scope, request: nil, held: held))
        } catch {
            throw Self.createFailed(error, id: id, route: route, generation: generation, prepared)
        }
        self.init(id: id, route: route, generation: generation, router: router, context: context, prepared: prepared, instance: instance)
    }

    private init(id: Int, route: String, generation: PluginGeneration, router: Router?, context: ScreenContext, prepared: Prepared,
                 instance: PluginInstanceID) {
        self.id = id
        self.route = route
        self.generation = generation
        self.lifecycle = ModuleInstanceLifecycle(subject: LifecycleError.Subject(screen: id, pluginID: generation.pluginID, route: route))
        self.router = router
        stateStorage.budget = generation.stateBudget
        self.activity = context.activity
        self.scopes = context.scopes
        self.screenScope = prepared.scope
        self.instance = instance
        self.handle = prepared.handle
        prepared.handle.module = self
        activity.instanceCreated()
    }

    /// Its router let go of it (released, reloaded, or freed): the links back are cleared.
    func routerLetGo() {
        router = nil
    }

    /// The instance, while it exists (from create until release).
    private var live: PluginInstanceID {
        guard let instance else { preconditionFailure("screen \(id) is called after release") }
        return instance
    }

    /// Activates (idempotent). A plugin failure leaves the instance inactive.
    /// `package`: for `berth conformance-check`, which drives a table by hand; apps use `BerthHost`.
    package func activate() throws(ScreenError) {
        guard let instance = try beginActivation() else { return }
        do {
            try call(request: false, "activate") { () throws(PluginCallError) in try plugin.activate(instance) }
        } catch {
            throw activationFailed(error, instance)
        }
    }

    /// The instance to call `activate` on, nil when it is active already.
    private func beginActivation() throws(ScreenError) -> PluginInstanceID? {
        let action: ModuleInstanceLifecycle.Action
        do {
            action = try lifecycle.activate()
        } catch {
            throw ScreenError(.lifecycle, screen: id, error.description)
        }
        return action == .callActivate ? live : nil
    }

    /// The plugin's `activate` failed: the instance is inactive again, and its `deactivate`
    /// runs (unless the screen was deactivated meanwhile, which called it already).
    private func activationFailed(_ error: PluginCallError, _ instance: PluginInstanceID) -> ScreenError {
        // The activate error is the one reported; a deactivate failure after it adds nothing.
        if lifecycle.isActive, lifecycle.activationFailed() == .callDeactivate { _ = callDeactivate(instance) }
        return ScreenError(.pluginFailed, screen: id, "\(pluginID) activate failed: \(error.message)", pluginStatus: PluginStatus(code: error.status))
    }

    /// `activate` on the plugin's lane (a screen opened with `BerthHost.open`): the main
    /// actor is free until it returns. Refused while the plugin is busy in another call (a
    /// task's post is waited for instead). A
    /// screen closed meanwhile was deactivated then: its `deactivate` runs on the lane after
    /// this call, so a failure here calls nothing more.
    func activateOnLane(held: HeldRequests) async throws(ScreenError) {
        await plugin.hostCallsEnded()
        // Refused before the state changes: a plugin never sees `deactivate` without `activate`.
        try refuseWhileBusy()
        guard let instance = try beginActivation() else { return }
        let running = RunningPluginCall.Call(plugin: pluginID, route: route, screen: id, function: "activate")
        activity.pluginCallBegan()
        do throws(PluginCallError) {
            try await plugin.activateOnLane(instance, as: running, in: LaneCallContext(screen: screenScope, request: nil, held: held))
        } catch {
            throw activationFailed(error, instance)
        }
    }

    /// Deactivates (idempotent). The instance is inactive afterwards whatever the plugin
    /// answers; a failure is returned for the log.
    @discardableResult
    package func deactivate() -> String? {
        guard lifecycle.deactivate() == .callDeactivate else { return nil }
        return callDeactivate(live)
    }

    /// Calls the plugin's `deactivate`; its failure, if any, for the log (a closing screen's
    /// comes later, through `closing`).
    private func callDeactivate(_ instance: PluginInstanceID) -> String? {
        // A worker cancels and awaits the screen's tasks before it answers.
        defer { workerTasks.removeAll() }
        if let closing {
            plugin.closeOnLane(.deactivate, of: instance, as: closingCall) { [pluginID] failure in
                if let failure { closing.failed("\(pluginID) deactivate failed: \(failure)") }
            }
            return nil
        }
        do {
            try call(request: false, "deactivate") { () throws(PluginCallError) in try plugin.deactivate(instance) }
            return nil
        } catch {
            return "\(pluginID) deactivate failed: \(error.message)"
        }
    }

    /// Delivers a screen lifecycle event; `willAppear`/`didAppear` mark the screen as seen.
    func deliver(_ event: ScreenLifecycleEvent) {
        guard !lifecycle.isReleased else { return }
        if case .didAppear = event { hasAppeared = true }
        deliveredEvents.append(event)
        guard generation.handshake.functions.contains(.screenEvent) else { return }
        let (code, flag) = event.code
        let instance = live
        if closing != nil {
            plugin.closeOnLane(.event(code: code, flag: flag), of: instance, as: closingCall) { _ in }
            return
        }
        // An event that calls nothing back leaves the last render standing, so the end of
        // the operation need not render again (it would render the same tree).
        let rendered = activity.freshlyRendered
        let (callbacks, version) = (HostCallbackCount.current, rendered?.stateStorage.version)
        call(request: false) { plugin.screenEvent(instance, code: code, flag: flag) }
        if let rendered, HostCallbackCount.current == callbacks, rendered.stateStorage.version == version, !rendered.isReleased {
            activity.renderStillStands(rendered)
        }
    }

    /// Delivers an action. Refused unless active: after deactivation the host makes no
    /// interactor call into the instance.
    /// `renderFollows`: the host renders this instance when the operation ends (it is the
    /// visible screen), so the connection may render it along with the action.
    /// `description` names it in a failure, as the person gave it ("tap on the Button
    /// 'Wave'"; `action 'NAME'` when nil).
    func handle(action: String, payload: [UInt8], renderFollows: Bool = false, describedAs description: String? = nil) throws(ScreenError) {
        guard lifecycle.isActive else {
            throw ScreenError(.lifecycle, screen: id, "screen \(id) is \(state.rawValue); actions go to active screens only")
        }
        guard generation.handshake.functions.contains(.action) else {
            throw ScreenError(.takesNoInput, screen: id, "\(pluginID)/\(route) takes no actions")
        }
        let instance = live
        let storage = renderFollows && canRender ? stateStorage : nil
        let what = description ?? "action '\(action)'"
        try deliver("\(what) failed", what) { () throws(PluginCallError) in
            if let storage {
                try plugin.action(instance, name: action, payload: payload, renderingAfterwards: storage)
            } else {
                try plugin.action(instance, name: action, payload: payload)
            }
        }
    }

    /// `handle(action:payload:renderFollows:)` on the plugin's lane: the main actor is free
    /// until the plugin returns. Refused while the lane is in a person's call (the screen is
    /// busy). Returns false when the screen was closed meanwhile: the action's result is
    /// dropped, and its close sequence ran on the lane after the action.
    func handleOnLane(action: String, payload: [UInt8], renderFollows: Bool, held: HeldRequests,
                      describedAs description: String? = nil, byHost: Bool = false) async throws(ScreenError) -> Bool {
        await plugin.hostCallsEnded()
        guard lifecycle.isActive else {
            throw ScreenError(.lifecycle, screen: id, "screen \(id) is \(state.rawValue); actions go to active screens only")
        }
        guard generation.handshake.functions.contains(.action) else {
            throw ScreenError(.takesNoInput, screen: id, "\(pluginID)/\(route) takes no actions")
        }
        try refuseWhileBusy()
        let connection = plugin
        let instance = live
        let storage = renderFollows && canRender ? stateStorage : nil
        activity.pluginCallBegan()
        let request = scopes.makeRequestScope(owner: "screen \(id)")
        defer { request.end() }
        let context = LaneCallContext(screen: screenScope, request: request, held: held)
        let what = description ?? "action '\(action)'"
        let running = RunningPluginCall.Call(plugin: pluginID, route: route, screen: id, function: what, byHost: byHost)
        do {
            try await connection.actionOnLane(instance, name: action, payload: payload, renderingAfterwards: storage, as: running, in: context)
        } catch {
            // A failure is reported even when it closed the screen (a crashed worker).
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) \(what) failed: \(error.message)",
                              pluginStatus: PluginStatus(code: error.status))
        }
        return lifecycle.isActive
    }

    /// Refused while the plugin's lane is in a call (the screen is busy): after
    /// `PluginConnection.hostCallsEnded`, a person's call.
    private func refuseWhileBusy() throws(ScreenError) {
        if let busy = plugin.busyCall { throw ScreenError(.busy, screen: id, PluginCallError.busy(pluginID, busy).message) }
    }

    /// True while the screen's plugin is in a call on its lane (its screens wait).
    package var isBusy: Bool { plugin.busyCall != nil }
    /// Its plugin's lane runs closed screens' calls (`closing`), which a render waits for.
    var laneRunsClosedScreens: Bool { plugin.busyCall?.closes == true }
    /// The call its plugin's lane is in now (what, for which screen, since when), if any.
    package var busyCall: BusyCall? {
        plugin.busyCall.map { BusyCall(plugin: $0.plugin, screen: $0.screen, function: $0.function, started: $0.started) }
    }

    /// Delivers a delegate action from an observed child screen. Active instances only.
    func deliverDelegate(from child: Int, action: String, payload: [UInt8]) throws(ScreenError) {
        guard lifecycle.isActive else { return }
        guard generation.handshake.functions.contains(.delegateReceived) else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) observes delegate actions but has no delegate_received")
        }
        let instance = live
        try deliver("delegate '\(action)' from screen \(child) failed") { () throws(PluginCallError) in
            try plugin.delegateReceived(instance, from: child, action: action, payload: payload)
        }
    }

    /// `deliverDelegate` on the plugin's lane, as the host's own call: the main actor is free
    /// until the plugin returns. Returns false when the screen is not active (nothing was
    /// delivered) or closed meanwhile.
    func deliverDelegateOnLane(from child: Int, action: String, payload: [UInt8], held: HeldRequests) async throws(ScreenError) -> Bool {
        await plugin.hostCallsEnded()
        guard lifecycle.isActive else { return false }
        guard generation.handshake.functions.contains(.delegateReceived) else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) observes delegate actions but has no delegate_received")
        }
        let what = "delegate '\(action)' from screen \(child)"
        return try await deliverOnLane(.delegate(live, child: child, action: action, payload: payload), what, failure: "\(what) failed", held: held)
    }

    /// `deliverContext` on the plugin's lane, as the host's own call (see
    /// `deliverDelegateOnLane`).
    func deliverContextOnLane(_ type: String, payload: [UInt8], held: HeldRequests) async throws(ScreenError) -> Bool {
        await plugin.hostCallsEnded()
        guard lifecycle.isActive else { return false }
        guard generation.handshake.functions.contains(.contextReceived) else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) observes \(type) but has no context_received")
        }
        return try await deliverOnLane(.context(live, type: type, payload: payload), "context \(type)", failure: "could not take context \(type)", held: held)
    }

    /// A delivery on the plugin's lane, in a request scope of its own, as the host's own call.
    private func deliverOnLane(_ delivery: LaneDelivery, _ what: String, failure: String, held: HeldRequests) async throws(ScreenError) -> Bool {
        try refuseWhileBusy()
        let connection = plugin
        activity.pluginCallBegan()
        let request = scopes.makeRequestScope(owner: "screen \(id)")
        defer { request.end() }
        let running = RunningPluginCall.Call(plugin: pluginID, route: route, screen: id, function: what, byHost: true)
        do {
            try await connection.deliverOnLane(delivery, as: running, in: LaneCallContext(screen: screenScope, request: request, held: held))
        } catch {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) \(failure): \(error.message)", pluginStatus: PluginStatus(code: error.status))
        }
        return lifecycle.isActive
    }

    /// Delivers a route context this screen observes. Active instances only.
    func deliverContext(_ type: String, payload: [UInt8]) throws(ScreenError) {
        guard lifecycle.isActive else { return }
        guard generation.handshake.functions.contains(.contextReceived) else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) observes \(type) but has no context_received")
        }
        let instance = live
        try deliver("could not take it") { () throws(PluginCallError) in
            try plugin.contextReceived(instance, type: type, payload: payload)
        }
    }

    /// Runs a delivery in a request scope of its own; a failure names the screen and what
    /// failed, with the plugin's message.
    private func deliver(_ failure: @autoclosure () -> String, _ what: @autoclosure () -> String = "delivery",
                         _ body: () throws(PluginCallError) -> Void) throws(ScreenError) {
        do {
            try call(request: true, what(), body)
        } catch {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) \(failure()): \(error.message)", pluginStatus: PluginStatus(code: error.status))
        }
    }

    /// A call into this screen's plugin code: marked as the host's, with this screen's scope
    /// current and, for actions and deliveries, in a request scope of its own.
    private func call<T, Failure: Error>(request: Bool, _ what: @autoclosure () -> String = "call",
                                         _ body: () throws(Failure) -> T) throws(Failure) -> T {
        activity.pluginCallBegan()
        func marked() -> Result<T, Failure> {
            ScopeRegistry.$currentScreen.withValue(screenScope) {
                HostCall.run { () -> Result<T, Failure> in
                    RunningPluginCall.run(plugin: pluginID, route: route, screen: id, what()) { () -> Result<T, Failure> in
                        do throws(Failure) { return .success(try body()) } catch { return .failure(error) }
                    }
                }
            }
        }
        guard request else { return try marked().get() }
        return try scopes.withRequestScope(owner: "screen \(id)") { marked() }.get()
    }

    /// True when the plugin can render this screen.
    package var canRender: Bool { generation.handshake.functions.contains(.renderTree) || generation.handshake.functions.contains(.render) }

    /// One render pass: the plugin writes its view tree while its `@State` reads mark the
    /// slots alive; the pass ends with the GC, and a switched `if` drops its old branch.
    @discardableResult
    func render() throws(ScreenError) -> ViewTree? {
        guard !lifecycle.isReleased, canRender else { return nil }
        // The synchronous API's render waits a while for a task's post (the host's own
        // renders skip a busy screen, so this never blocks them).
        plugin.waitForHostCall()
        // Refused before the pass begins: a render running on the lane owns the marks.
        if let busy = plugin.refusingCall {
            throw ScreenError(.busy, screen: id, PluginCallError.busy(pluginID, busy).message)
        }
        beginRender()
        let instance = live
        let storage = stateStorage
        let output: RenderedTree
        do {
            output = try call(request: false, "render") { () throws(PluginCallError) in try plugin.render(instance, state: storage) }
        } catch {
            throw renderFailed(error)
        }
        return try commitRender { () throws(ViewTreeError) in try storage.endRenderPass(with: output) }
    }

    /// `render()` on the plugin's lane: the plugin renders there and its tree is decoded and
    /// limit-checked there; the main actor, free meanwhile, only commits the checked tree.
    /// Refused while the lane is in a person's call (a task's post is waited for); nil when
    /// the screen closed meanwhile.
    /// The commit counts as an operation's render: the operation that ends the call (its
    /// caller runs one next, with no suspension between) need not render it again.
    /// `byHost`: the host's own render (after closed screens' calls): a person's call waits
    /// for it rather than being refused as busy.
    func renderOnLane(held: HeldRequests, byHost: Bool = false) async throws(ScreenError) -> ViewTree? {
        await plugin.hostCallsEnded()
        guard !lifecycle.isReleased, canRender else { return nil }
        try refuseWhileBusy()
        let connection = plugin
        beginRender()
        activity.pluginCallBegan()
        let instance = live
        let storage = stateStorage
        let context = LaneCallContext(screen: screenScope, request: nil, held: held)
        let running = RunningPluginCall.Call(plugin: pluginID, route: route, screen: id, function: "render", byHost: byHost)
        let result: Result<CheckedRender, PluginCallError>
        do throws(PluginCallError) {
            result = .success(try await connection.renderOnLane(instance, state: storage, as: running, in: context))
        } catch {
            result = .failure(error)
        }
        activity.operationBegan()
        defer { activity.operationEnded() }
        guard !lifecycle.isReleased else { return nil }
        let checked: CheckedRender
        do { checked = try result.get() } catch { throw renderFailed(error) }
        let previous = lastTree
        let tree = try commitRender { () throws(ViewTreeError) in try storage.commit(checked) }
        // A large tree it replaced is freed off the main actor too: freeing 150,000 views
        // takes milliseconds; a small one costs less here than waking a thread.
        if let previous, previous.nodeCount > 1_000 { DispatchQueue.global(qos: .utility).async { withExtendedLifetime(previous) {} } }
        return tree
    }

    private func beginRender() {
        renderPasses += 1
        stateStorage.beginRenderPass()
    }

    /// The plugin's render failed: the pass ends without collecting, and the failure stands
    /// as the operation's render.
    private func renderFailed(_ error: PluginCallError) -> ScreenError {
        stateStorage.abandonRenderPass()
        activity.rendered(self)
        return ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) render failed: \(error.message)", pluginStatus: PluginStatus(code: error.status))
    }

    /// Ends the pass with the plugin's tree (`end` commits it to the state storage): a
    /// switched `if` drops its old branch's state, and the tree becomes the last.
    private func commitRender(_ end: () throws(ViewTreeError) -> ViewTree?) throws(ScreenError) -> ViewTree? {
        let tree: ViewTree?
        do {
            tree = try end()
        } catch {
            stateStorage.abandonRenderPass()
            // A failed render stands too: the operation's end would only fail it again
            // (and a hostile plugin's refused tree would cost the host once more).
            activity.rendered(self)
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route): the rendered view tree is not valid: \(error.message)")
        }
        if let previous = lastTree?.branches, let current = tree?.branches, !previous.isEmpty {
            for (node, taken) in current {
                guard let before = previous[node], before != taken else { continue }
                stateStorage.invalidateDescendants(of: node + (before ? "#true" : "#false"))
            }
        }
        lastTree = tree
        // Only inside an operation: its end clears the mark, so none outlives it.
        activity.rendered(self)
        return tree
    }

    /// The plugin's `save_state` bytes.
    package func saveState() throws(ScreenError) -> [UInt8] {
        let instance = live
        do {
            return try call(request: false) { () throws(PluginCallError) in try plugin.saveState(instance) }
        } catch {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) save_state failed: \(error.message)", pluginStatus: PluginStatus(code: error.status))
        }
    }

    /// Hands `bytes` to the plugin's `restore_state`.
    package func restoreState(_ bytes: [UInt8]) throws(ScreenError) {
        let instance = live
        do {
            try call(request: false) { () throws(PluginCallError) in try plugin.restoreState(instance, bytes) }
        } catch {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) restore_state failed: \(error.message)", pluginStatus: PluginStatus(code: error.status))
        }
    }

    /// Releases: the plugin's `destroy`, once. Must be inactive. A closing screen's `closed`
    /// is told once its calls into the plugin have run (at once when there are none).
    package func release() throws(ScreenError) {
        let closing = self.closing
        self.closing = nil
        let action: ModuleInstanceLifecycle.Action
        do {
            action = try lifecycle.release()
        } catch {
            closing?.closed()
            throw ScreenError(.lifecycle, screen: id, error.description)
        }
        guard action == .callDestroy else {
            closing?.closed()
            return
        }
        activity.instanceReleased(self)
        if let instance {
            destroy(instance, closing: closing)
        } else {
            closing?.closed()
        }
        released(endingScope: closing == nil || instance == nil)
    }

    private func destroy(_ instance: PluginInstanceID, closing: Closing?) {
        if let closing {
            // The handle lives, and may persist, until its close calls have run on the lane.
            // Its scope ends after them too: what the plugin resolved in it is released once
            // the plugin is done with the screen (an in-process provider's `release` runs on
            // the main actor, never beside the lane's call into the same plugin).
            let (handle, scope) = (handle, screenScope)
            handle?.closesAfterCall = true
            plugin.closeOnLane(.destroy, of: instance, as: closingCall) { _ in
                handle?.closesAfterCall = false
                scope.end()
                closing.closed()
            }
        } else {
            // Deferred to the end of the plugin's call: the handle lives, and may persist,
            // until its close work (deactivate, events, destroy) has run.
            if plugin.refusingCall != nil, let handle {
                handle.closesAfterCall = true
                plugin.afterCall { handle.closesAfterCall = false }
            }
            call(request: false) { plugin.destroy(instance) }
        }
    }

    /// What its release leaves: no instance, no state, no handle, and (`endingScope`) no scope.
    private func released(endingScope: Bool) {
        instance = nil
        workerTasks.removeAll()
        // Removed for good: its screen scope ends, releasing what was resolved in it.
        if endingScope { screenScope.end() }
        stateStorage.removeAll()
        lastTree = nil
        // The handle can outlive this instance (a worker's call router keeps it until the
        // destroy is acknowledged): it forgets the instance, and so its router, now.
        handle?.module = nil
        handle = nil
    }
}

extension ModuleInstance {
    /// What a screen closing on its plugin's lane reports to: a `deactivate`'s failure, and
    /// the end of its calls into the plugin.
    struct Closing {
        let failed: (String) -> Void
        let closed: () -> Void
    }

    /// Its close calls, as the lane shows them while they run.
    private var closingCall: RunningPluginCall.Call { .closing(pluginID, route: route, screen: id) }
}
