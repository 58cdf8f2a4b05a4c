internal import CBerth

/// What a `berth_screen_handle *` points to: the host-side identity of one open screen.
/// Immutable, so safe on any thread; host services look the screen up by `screenID`.
final class ScreenContext: Sendable {
    let screenID: Int
    let pluginID: String

    init(screenID: Int, pluginID: String) {
        self.screenID = screenID
        self.pluginID = pluginID
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
    private let context: ScreenContext
    private let handle: Unmanaged<ScreenContext>

    /// `created`, `active`, `inactive` or `released`.
    public var state: String { lifecycle.name }
    public var isActive: Bool { lifecycle.isActive }
    public var pluginID: String { generation.pluginID }

    /// Calls the plugin's `create` for `route`.
    init(id: Int, route: String, generation: PluginGeneration, argument: [UInt8] = []) throws(ScreenError) {
        self.id = id
        self.route = route
        self.generation = generation
        self.lifecycle = ModuleInstanceLifecycle(subject: "screen \(id) (\(generation.pluginID)/\(route))")
        self.context = ScreenContext(screenID: id, pluginID: generation.pluginID)
        self.handle = Unmanaged.passRetained(context)
        guard generation.manifest.routes.contains(route) else {
            handle.release()
            throw ScreenError(.unknownRoute, screen: id, "\(generation.pluginID) has no route '\(route)' (routes: \(generation.manifest.routes.joined(separator: ", ")))")
        }
        guard let create = generation.table.table.create else { preconditionFailure("handshake guarantees create when routes exist") }
        var error = BerthErrorBuffer.make()
        var created: UnsafeMutableRawPointer?
        let status = argument.withUnsafeBufferPointer { buffer in
            create(OpaquePointer(handle.toOpaque()), route, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &created, &error)
        }
        guard status == BERTH_OK, let created else {
            handle.release()
            throw ScreenError(.pluginFailed, screen: id, "\(generation.pluginID) create(\(route)) failed: \(BerthErrorBuffer.message(of: error, status: status))")
        }
        self.instance = created
    }

    /// Activates (idempotent). A plugin failure leaves the instance inactive.
    func activate() throws(ScreenError) {
        let action: ModuleInstanceLifecycle.Action
        do {
            action = try lifecycle.activate()
        } catch {
            throw ScreenError(.lifecycle, screen: id, error.description)
        }
        guard action == .callActivate, let activate = generation.table.table.activate else { return }
        var error = BerthErrorBuffer.make()
        let status = activate(instance, &error)
        guard status == BERTH_OK else {
            lifecycle.activationFailed()
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID) activate failed: \(BerthErrorBuffer.message(of: error, status: status))")
        }
    }

    /// Deactivates (idempotent). The plugin is never called again for this instance
    /// except `destroy`.
    func deactivate() {
        guard lifecycle.deactivate() == .callDeactivate, let deactivate = generation.table.table.deactivate else { return }
        var error = BerthErrorBuffer.make()
        _ = deactivate(instance, &error)
    }

    /// Sends a screen lifecycle event (BERTH_EVENT_*) with its flag.
    func send(event: Int32, flag: Bool) {
        guard !lifecycle.isReleased, let screenEvent = generation.table.table.screen_event else { return }
        screenEvent(instance, event, flag ? 1 : 0)
    }

    /// Delivers an action. Refused unless active: after deactivation the host never calls
    /// into the instance again (except `destroy`).
    func handle(action: String, payload: [UInt8]) throws(ScreenError) {
        guard lifecycle.isActive else {
            throw ScreenError(.lifecycle, screen: id, "screen \(id) is \(lifecycle.name); actions go to active screens only")
        }
        guard let handleAction = generation.table.table.action else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) takes no actions")
        }
        var error = BerthErrorBuffer.make()
        let status = payload.withUnsafeBufferPointer { buffer in
            handleAction(instance, action, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &error)
        }
        guard status == BERTH_OK else {
            throw ScreenError(.pluginFailed, screen: id, "\(pluginID)/\(route) action '\(action)' failed: \(BerthErrorBuffer.message(of: error, status: status))")
        }
    }

    /// Releases: the plugin's `destroy`, once. Must be inactive.
    func release() throws(ScreenError) {
        let action: ModuleInstanceLifecycle.Action
        do {
            action = try lifecycle.release()
        } catch {
            throw ScreenError(.lifecycle, screen: id, error.description)
        }
        guard action == .callDestroy else { return }
        generation.table.table.destroy?(instance)
        instance = nil
        handle.release()
    }
}

/// Why a screen could not be opened, driven or closed.
public struct ScreenError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        case unknownRoute, pluginNotLoaded, pluginFailed, lifecycle, noSuchScreen
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
