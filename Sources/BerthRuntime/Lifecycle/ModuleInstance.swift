internal import CBerth

/// What a `berth_screen_handle *` points to: the way back from a plugin's call to the
/// screen it is about. Only touched on the main actor. Valid from `create` until `destroy`
/// (berth.h); the references inside are weak so a screen closed in between is seen as gone.
@MainActor
final class ScreenHandle {
    /// Set once `create` returned; nil while the plugin is still creating the instance.
    weak var module: ModuleInstance?
    /// Known before `create` runs, so a screen can register observers from its initializer.
    weak var router: Router?
    weak var host: BerthHost?
    /// The registry and this screen's scope: immutable and thread-safe, so
    /// `service_resolve` (callable from any thread) reads them without the main actor.
    nonisolated let services: (registry: ScopeRegistry, screen: Scope)?

    init(router: Router?, host: BerthHost?, services: (registry: ScopeRegistry, screen: Scope)?) {
        self.router = router
        self.host = host
        self.services = services
    }

    var opaque: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    nonisolated static func from(_ handle: OpaquePointer?) -> ScreenHandle? {
        guard let handle else { return nil }
        return Unmanaged<ScreenHandle>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }
}

/// One module instance: a plugin's screen for one route, created through the plugin's
/// table and driven through `created → active ⇄ inactive → released`.
@MainActor
public final class ModuleInstance {
    /// Host-wide screen id (never reused in a host process).
    public let id: Int
    public let route: String
    /// The generation that created it; a reload makes new instances from the new one.
    public let generation: PluginGeneration
    private var lifecycle: ModuleInstanceLifecycle
    private var instance: UnsafeMutableRawPointer?
    /// Kept alive while the plugin holds the handle (until `destroy`).
    private var handle: ScreenHandle?
    /// The router holding this screen, for the plugin's navigation and delegate requests.
    weak var router: Router?
    /// The host, for requests that reach beyond this screen.
    weak var host: BerthHost?
    /// Whether the screen has appeared in its container (for `isPresentedInitially`).
    var hasAppeared = false
    /// Screen events delivered so far, in order (the `events` log and tests read it).
    public private(set) var deliveredEvents: [ScreenLifecycleEvent] = []
    /// The `@State` of this instance's views; dropped with the instance.
    public let stateStorage = StateStorage()
    /// The tree of the last render pass.
    public private(set) var lastTree: ViewNode?
    /// This screen's scope: current while the host calls into it, ended on release.
    public let screenScope: Scope?

    /// `created`, `active`, `inactive` or `released`.
    public var state: String { lifecycle.name }
    public var isActive: Bool { lifecycle.isActive }
    public var isReleased: Bool { lifecycle.isReleased }
    public var pluginID: String { generation.pluginID }

    /// Calls the plugin's `create` for `route`.
    init(id: Int, route: String, generation: PluginGeneration, argument: [UInt8] = [], router: Router? = nil, host: BerthHost? = nil) throws(ScreenError) {
        self.id = id
        self.route = route
        self.generation = generation
        self.lifecycle = ModuleInstanceLifecycle(subject: "screen \(id) (\(generation.pluginID)/\(route))")
        guard generation.manifest.routes.contains(route) else {
            throw ScreenError(.unknownRoute, screen: id, "\(generation.pluginID) has no route '\(route)' (routes: \(generation.manifest.routes.joined(separator: ", ")))")
        }
        guard let create = generation.table.table.create else { preconditionFailure("handshake guarantees create when routes exist") }
        self.router = router
        self.host = host
        let scope = host?.scopes.makeScreenScope(screen: id, owner: "\(generation.pluginID)/\(route)")
        self.screenScope = scope
        let handle = ScreenHandle(router: router, host: host, services: host.flatMap { host in scope.map { (host.scopes, $0) } })
        var error = BerthErrorBuffer.make()
        var created: UnsafeMutableRawPointer?
        let status = HostCall.run {
            argument.withUnsafeBufferPointer { buffer in
                create(handle.opaque, route, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &created, &error)
            }
        }
        guard status == BERTH_OK, let created else {
            scope?.end()
            throw ScreenError(.pluginFailed, screen: id, "\(generation.pluginID) create(\(route)) failed: \(BerthErrorBuffer.message(of: error, status: status))")
        }
        self.instance = created
        self.handle = handle
        handle.module = self
    }

    /// Activates (idempotent). A plugin failure leaves the instance inactive.
    package func activate() throws(ScreenError) {
        let action: ModuleInstanceLifecycle.Action
        do {
            action = try lifecycle.activate()
        } catch {
            throw ScreenError(.lifecycle, screen: id, error.description)
        }
        guard action == .callActivate, let activate = generation.table.table.activate else { return }
        var error = BerthErrorBuffer.make()
        let status = call(request: false) { activate(instance, &error) }
        guard status == BERTH_OK else {
            lifecycle.activationFailed()
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID) activate failed: \(BerthErrorBuffer.message(of: error, status: status))")
        }
    }

    /// Deactivates (idempotent). The instance is inactive afterwards whatever the plugin
    /// answers; a failure is returned for the log.
    @discardableResult
    package func deactivate() -> String? {
        guard lifecycle.deactivate() == .callDeactivate, let deactivate = generation.table.table.deactivate else { return nil }
        var error = BerthErrorBuffer.make()
        let status = call(request: false) { deactivate(instance, &error) }
        return status == BERTH_OK ? nil : "\(pluginID) deactivate failed: \(BerthErrorBuffer.message(of: error, status: status))"
    }

    /// Delivers a screen lifecycle event; `willAppear`/`didAppear` mark the screen as seen.
    func deliver(_ event: ScreenLifecycleEvent) {
        guard !lifecycle.isReleased else { return }
        if case .didAppear = event { hasAppeared = true }
        deliveredEvents.append(event)
        guard let screenEvent = generation.table.table.screen_event else { return }
        let (code, flag) = event.code
        call(request: false) { screenEvent(instance, code, flag ? 1 : 0) }
    }

    /// Delivers an action. Refused unless active: after deactivation the host makes no
    /// interactor call into the instance.
    func handle(action: String, payload: [UInt8]) throws(ScreenError) {
        guard lifecycle.isActive else {
            throw ScreenError(.lifecycle, screen: id, "screen \(id) is \(lifecycle.name); actions go to active screens only")
        }
        guard let handleAction = generation.table.table.action else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) takes no actions")
        }
        try deliver(payload, failure: "action '\(action)' failed") { bytes, error in handleAction(instance, action, bytes, error) }
    }

    /// Delivers a delegate action from an observed child screen. Active instances only.
    func deliverDelegate(from child: Int, action: String, payload: [UInt8]) throws(ScreenError) {
        guard lifecycle.isActive else { return }
        guard let receive = generation.table.table.delegate_received else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) observes delegate actions but has no delegate_received")
        }
        try deliver(payload, failure: "delegate '\(action)' from screen \(child) failed") { bytes, error in
            receive(instance, UInt64(child), action, bytes, error)
        }
    }

    /// Delivers a route context this screen observes. Active instances only.
    func deliverContext(_ type: String, payload: [UInt8]) throws(ScreenError) {
        guard lifecycle.isActive else { return }
        guard let receive = generation.table.table.context_received else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) observes \(type) but has no context_received")
        }
        try deliver(payload, failure: "could not take it") { bytes, error in receive(instance, type, bytes, error) }
    }

    /// Delivers `payload` through one of the plugin's table functions, in a request scope
    /// of its own; a failure names the screen and what failed, with the plugin's message.
    private func deliver(
        _ payload: [UInt8], failure: String,
        _ function: (berth_bytes, UnsafeMutablePointer<berth_error>) -> berth_status
    ) throws(ScreenError) {
        var error = BerthErrorBuffer.make()
        let status = call(request: true) {
            payload.withUnsafeBufferPointer { buffer in
                function(berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &error)
            }
        }
        guard status == BERTH_OK else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) \(failure): \(BerthErrorBuffer.message(of: error, status: status))")
        }
    }

    /// A call into this screen's plugin code: marked as the host's, with this screen's scope
    /// current and, for actions and deliveries, in a request scope of its own.
    private func call<T>(request: Bool, _ body: () -> T) -> T {
        guard request, let registry = host?.scopes else {
            return ScopeRegistry.$currentScreen.withValue(screenScope) { HostCall.run(body) }
        }
        return registry.withRequestScope(owner: "screen \(id)") {
            ScopeRegistry.$currentScreen.withValue(screenScope) { HostCall.run(body) }
        }
    }

    /// True when the plugin can render this screen.
    public var canRender: Bool { generation.table.table.render != nil }

    /// One render pass: the plugin writes its view tree while its `@State` reads mark the
    /// slots alive; the pass ends with the GC, and a switched `if` drops its old branch.
    @discardableResult
    func render() throws(ScreenError) -> ViewNode? {
        guard !lifecycle.isReleased, let render = generation.table.table.render else { return nil }
        stateStorage.beginRenderPass()
        var error = BerthErrorBuffer.make()
        let collected = SinkBuffer()
        let status = call(request: false) { collected.withSink { sink in render(instance, sink, &error) } }
        guard status == BERTH_OK else {
            stateStorage.abandonRenderPass()
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) render failed: \(BerthErrorBuffer.message(of: error, status: status))")
        }
        let tree: ViewNode?
        do {
            tree = try ViewNode.parse(collected.bytes)
        } catch {
            stateStorage.abandonRenderPass()
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route): \(error.message)")
        }
        stateStorage.endRenderPass()
        if let previous = lastTree?.branches, let current = tree?.branches {
            for (node, taken) in current {
                guard let before = previous[node], before != taken else { continue }
                stateStorage.invalidateDescendants(of: node + (before ? "#true" : "#false"))
            }
        }
        lastTree = tree
        return tree
    }

    /// The plugin's `save_state` bytes.
    package func saveState() throws(ScreenError) -> [UInt8] {
        guard let save = generation.table.table.save_state else { return [] }
        var error = BerthErrorBuffer.make()
        let collected = SinkBuffer()
        let status = call(request: false) { collected.withSink { save(instance, $0, &error) } }
        guard status == BERTH_OK else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) save_state failed: \(BerthErrorBuffer.message(of: error, status: status))")
        }
        return collected.bytes
    }

    /// Hands `bytes` to the plugin's `restore_state`.
    package func restoreState(_ bytes: [UInt8]) throws(ScreenError) {
        guard let restore = generation.table.table.restore_state else { return }
        var error = BerthErrorBuffer.make()
        let status = call(request: false) {
            bytes.withUnsafeBufferPointer { restore(instance, berth_bytes(data: $0.baseAddress, length: UInt64($0.count)), &error) }
        }
        guard status == BERTH_OK else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) restore_state failed: \(BerthErrorBuffer.message(of: error, status: status))")
        }
    }

    /// Releases: the plugin's `destroy`, once. Must be inactive.
    package func release() throws(ScreenError) {
        let action: ModuleInstanceLifecycle.Action
        do {
            action = try lifecycle.release()
        } catch {
            throw ScreenError(.lifecycle, screen: id, error.description)
        }
        guard action == .callDestroy else { return }
        if let destroy = generation.table.table.destroy { call(request: false) { destroy(instance) } }
        instance = nil
        // Removed for good: its screen scope ends, releasing what was resolved in it.
        screenScope?.end()
        stateStorage.removeAll()
        lastTree = nil
        handle?.module = nil
        handle = nil
    }
}

/// Why a screen could not be opened, driven or closed.
public struct ScreenError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        case unknownRoute, pluginNotLoaded, pluginFailed, lifecycle, noSuchScreen, navigation
    }

    public var code: Code
    public var screen: Int
    public var message: String

    public init(_ code: Code, screen: Int, _ message: String) {
        self.code = code
        self.screen = screen
        self.message = message
    }

    public var description: String { message }
}
