internal import CBerth

/// The SDK's side of the ABI inside one plugin image: the `berth_plugin_v1` table, the host
/// table it was given, and the trampolines that turn C calls into `Screen` calls.
///
/// Each loaded generation is a fresh copy of the plugin image, so this singleton (and every
/// global of the plugin) starts fresh on every reload.
final class PluginRuntime: @unchecked Sendable {
    // @unchecked: berth.h guarantees every call into the plugin table arrives on the host's
    // main thread, one at a time, and `install` runs before any of them; the only call
    // allowed from other threads is `log`, which reads `host`/`pluginHandle` after install.
    static let shared = PluginRuntime()

    private(set) var plugin: Plugin?
    private var host: UnsafePointer<berth_host_v1>?
    private(set) var pluginHandle: OpaquePointer?
    private let table: UnsafeMutablePointer<berth_plugin_v1>
    /// The screen a call into the plugin is about (set around create, action and render).
    var currentScreen: OpaquePointer?

    /// Route-context handlers by screen handle, then by context type (explicit form).
    var contextHandlers: [OpaquePointer?: [String: ([UInt8]) throws -> Void]] = [:]
    /// Render diagnostics already logged, per screen (each is logged once per screen).
    var reportedDiagnostics: [OpaquePointer?: Set<String>] = [:]
    /// Route-context handlers declared by `.routerContext` in each screen's last render.
    var viewContextHandlers: [OpaquePointer?: [String: ([UInt8]) throws -> Void]] = [:]

    /// While the plugin describes itself: the `@Persisted` keys its screens and views used.
    var persistedKeysSeen: Set<String>?
    /// `@Persisted` keys whose refused read was logged: once per key for this generation
    /// (a read happens on every render, and the refusal does not change until a reload).
    var refusedPersistedReads: Set<String> = []

    /// The plugin id as a C string the table points to; lives as long as the image.
    private var pluginID: UnsafeMutablePointer<CChar>?

    private init() {
        table = .allocate(capacity: 1)
        table.initialize(to: berth_plugin_v1())
    }

    func install(_ plugin: Plugin, host: UnsafeRawPointer?, plugin handle: UnsafeRawPointer?) -> UnsafeRawPointer? {
        // Only the first two fields are certain in any host table; everything else is read
        // through `hostHas`, which applies the struct_size rule.
        guard let host = host?.assumingMemoryBound(to: berth_host_v1.self), host.pointee.struct_size >= 8,
              host.pointee.abi_version >> 16 == UInt32(BERTH_ABI_VERSION_MAJOR)
        else { return nil }
        self.plugin = plugin
        self.host = host
        self.pluginHandle = handle.map { OpaquePointer($0) }
        let idBytes = Array(plugin.id.utf8CString)
        let idStorage = UnsafeMutablePointer<CChar>.allocate(capacity: idBytes.count)
        idStorage.initialize(from: idBytes, count: idBytes.count)
        pluginID = idStorage
        fillTable()
        registerServices(plugin.services)
        return UnsafeRawPointer(table)
    }

    /// The host function at `field` when the host's table is long enough to hold it and it
    /// is set (the versioning rule of berth.h), else nil.
    func hostFunction<T>(_ field: KeyPath<berth_host_v1, T?>) -> T? {
        guard let host, let offset = MemoryLayout<berth_host_v1>.offset(of: field),
              Int(host.pointee.struct_size) >= offset + MemoryLayout<T?>.size
        else { return nil }
        return host.pointee[keyPath: field]
    }

    func log(_ message: String, level: LogLevel) {
        guard let log = hostFunction(\.log) else { return }
        log(pluginHandle, level.rawValue, message)
    }

    /// Registers the context types a render declared and unregisters those it no longer
    /// does (unless the explicit form still observes them).
    func syncViewContexts(_ screen: OpaquePointer?, _ declared: [String: ([UInt8]) throws -> Void]) {
        // The common case, a screen that declares none: nothing to register, nothing
        // stored. (Storing would make the image's first dictionaries of these types, and a
        // freshly loaded image pays a scan of every image's conformance records for each.)
        guard !declared.isEmpty || viewContextHandlers[screen] != nil else { return }
        let previous = Set(viewContextHandlers[screen]?.keys ?? [:].keys)
        viewContextHandlers[screen] = declared.isEmpty ? nil : declared
        let explicit = Set(contextHandlers[screen]?.keys ?? [:].keys)
        if let observe = hostFunction(\.context_observe) {
            for type in Set(declared.keys).subtracting(previous).subtracting(explicit) {
                _ = observe(screen, type, nil)
            }
        }
        if let unobserve = hostFunction(\.context_unobserve) {
            for type in previous.subtracting(declared.keys).subtracting(explicit) {
                _ = unobserve(screen, type, nil)
            }
        }
    }

    /// Logs each render diagnostic the first time a screen produces it (a warning, so a
    /// render pass repeated a thousand times still says it once).
    func report(_ diagnostics: [String], for screen: OpaquePointer?) {
        for line in diagnostics where reportedDiagnostics[screen, default: []].insert(line).inserted {
            log(line, level: .warning)
        }
    }

    /// Runs `body` with `screen` as the current screen (for `@Persisted` on screens).
    func within<T>(_ screen: OpaquePointer?, _ body: () throws -> T) rethrows -> T {
        let previous = currentScreen
        currentScreen = screen
        defer { currentScreen = previous }
        return try body()
    }

    /// Runs a host call with an error buffer; a failure becomes a thrown `BerthError`
    /// carrying the host's message.
    func check(_ call: (UnsafeMutablePointer<berth_error>) -> berth_status) throws {
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        let status = call(&error)
        guard status != BERTH_OK else { return }
        let message = withUnsafeBytes(of: &error.message) { buffer in
            String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        }
        throw BerthError(code: BerthError.Code(rawValue: status) ?? .failed, message: message.isEmpty ? "host call failed (status \(status))" : message)
    }

    // MARK: The table

    private func fillTable() {
        table.pointee.struct_size = UInt32(MemoryLayout<berth_plugin_v1>.size)
        table.pointee.abi_version = (UInt32(BERTH_ABI_VERSION_MAJOR) << 16) | UInt32(BERTH_ABI_VERSION_MINOR)
        table.pointee.plugin_id = UnsafePointer(pluginID)
        table.pointee.create = { screen, route, argument, out, error in
            PluginRuntime.shared.create(screen: screen, route: route, argument: argument, out: out, error: error)
        }
        table.pointee.destroy = { instance in
            guard let instance else { return }
            let box = Unmanaged<ScreenBox>.fromOpaque(instance)
            PluginRuntime.shared.contextHandlers[box.takeUnretainedValue().handle] = nil
            PluginRuntime.shared.viewContextHandlers[box.takeUnretainedValue().handle] = nil
            PluginRuntime.shared.reportedDiagnostics[box.takeUnretainedValue().handle] = nil
            box.release()
        }
        table.pointee.context_received = { instance, type, payload, error in
            guarded(error) {
                let box = ScreenBox.from(instance)
                let name = type.map { String(cString: $0) } ?? ""
                guard let handler = PluginRuntime.shared.contextHandlers[box.handle]?[name]
                    ?? PluginRuntime.shared.viewContextHandlers[box.handle]?[name]
                else {
                    throw BerthError(code: .notFound, message: "no handler for context \(name)")
                }
                try handler(payload.array)
            }
        }
        table.pointee.activate = { instance, error in
            guarded(error) { try ScreenBox.from(instance).screen.activate() }
        }
        table.pointee.deactivate = { instance, _ in
            ScreenBox.from(instance).screen.deactivate()
            return berth_status(BERTH_OK)
        }
        table.pointee.screen_event = { instance, event, flag in
            guard let event = ScreenEvent(code: event, flag: flag != 0) else { return }
            ScreenBox.from(instance).screen.onEvent(event)
        }
        table.pointee.action = { instance, name, payload, error in
            guarded(error) {
                let box = ScreenBox.from(instance)
                let name = name.map { String(cString: $0) } ?? ""
                try PluginRuntime.shared.within(box.handle) {
                    if name.hasPrefix(ViewInputAction.prefix) {
                        try ViewInputAction.deliver(name, payload: payload, inputs: box.inputs, identities: box.identities)
                    } else {
                        try box.screen.handle(action: name, payload: payload.array)
                    }
                }
            }
        }
        // The binary tree only (ABI 1.1): `render` (JSON) stays NULL, so a 1.0 host shows
        // no views for a Swift plugin built with this SDK (Docs/state.md).
        table.pointee.render_tree = { instance, input, out, error in
            guarded(error) {
                let box = ScreenBox.from(instance)
                let renderer = Renderer(screen: box.handle, identities: box.identities, batch: input.map { SlotBatch($0) },
                                        hostTreeVersion: PluginRuntime.hostTreeVersion(input))
                PluginRuntime.shared.within(box.handle) { renderAny(box.screen, renderer) }
                box.inputs = renderer.inputs
                PluginRuntime.shared.syncViewContexts(box.handle, renderer.contextObservers)
                PluginRuntime.shared.report(renderer.diagnostics, for: box.handle)
                guard let out, let write = out.pointee.write else { return }
                let (prefix, nodes) = renderer.finish()
                for part in [prefix, nodes] {
                    let bytes = part.written
                    let status = write(out.pointee.context, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
                    guard status == BERTH_OK else { throw BerthError(code: .failed, message: "the host refused the rendered tree (status \(status))") }
                }
            }
        }
        table.pointee.delegate_received = { instance, child, action, payload, error in
            guarded(error) {
                let name = action.map { String(cString: $0) } ?? ""
                try ScreenBox.from(instance).screen.delegate(from: child, action: name, payload: payload.array)
            }
        }
        table.pointee.save_state = { instance, out, error in
            guarded(error) {
                let bytes = try ScreenBox.from(instance).screen.saveState()
                guard let out, let write = out.pointee.write else { return }
                let status = bytes.withUnsafeBufferPointer { write(out.pointee.context, $0.baseAddress, UInt64($0.count)) }
                guard status == BERTH_OK else { throw BerthError(code: .failed, message: "the host refused the saved state (status \(status))") }
            }
        }
        table.pointee.restore_state = { instance, state, error in
            guarded(error) { try ScreenBox.from(instance).screen.restoreState(state.array) }
        }
        table.pointee.unload = {
            PluginRuntime.shared.plugin?.onUnload?()
        }
    }

    /// The highest view-tree version the host reads, from the render input (1 when the
    /// host sent none, or an input too short to say).
    private static func hostTreeVersion(_ input: UnsafePointer<berth_render_input>?) -> UInt32 {
        guard let input, input.pointee.struct_size >= 8 else { return 1 }
        return input.pointee.tree_version
    }

    private func create(
        screen: OpaquePointer?, route: UnsafePointer<CChar>?, argument: berth_bytes,
        out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, error: UnsafeMutablePointer<berth_error>?
    ) -> berth_status {
        let route = route.map { String(cString: $0) } ?? ""
        guard let type = plugin?.screens.first(where: { $0.route == route }) else {
            return fill(error, BerthError(code: .notFound, message: "no screen for route '\(route)'"))
        }
        return guarded(error) {
            let context = ScreenContext(handle: screen, route: route, argument: argument.array)
            let box = ScreenBox(screen: try within(screen) { try type.init(context: context) }, handle: screen)
            out?.pointee = Unmanaged.passRetained(box).toOpaque()
        }
    }
}

/// Keeps a screen instance alive while the host holds its `berth_instance *`.
private final class ScreenBox {
    let screen: any Screen
    /// The host's handle for this screen (keys the screen's context handlers).
    let handle: OpaquePointer?
    /// The identities of this screen's views, kept across render passes.
    let identities = IdentityTable()
    /// The input handlers of the last render, by identity id.
    var inputs = ViewInputs()
    init(screen: any Screen, handle: OpaquePointer?) {
        self.screen = screen
        self.handle = handle
    }

    static func from(_ instance: UnsafeMutableRawPointer?) -> ScreenBox {
        guard let instance else { preconditionFailure("the host passes the instance it created") }
        return Unmanaged<ScreenBox>.fromOpaque(instance).takeUnretainedValue()
    }
}

/// Runs `body`, turning a thrown error into a status and the host-visible message.
private func guarded(_ errorBuffer: UnsafeMutablePointer<berth_error>?, _ body: () throws -> Void) -> berth_status {
    do {
        try body()
        return berth_status(BERTH_OK)
    } catch let thrown as BerthError {
        return fill(errorBuffer, thrown)
    } catch {
        return fill(errorBuffer, BerthError(code: .failed, message: "\(error)"))
    }
}

func fillError(_ error: UnsafeMutablePointer<berth_error>?, _ thrown: BerthError) -> berth_status {
    fill(error, thrown)
}

private func fill(_ error: UnsafeMutablePointer<berth_error>?, _ thrown: BerthError) -> berth_status {
    guard let error else { return thrown.code.rawValue }
    error.pointee.code = thrown.code.rawValue
    withUnsafeMutableBytes(of: &error.pointee.message) { buffer in
        let utf8 = Array(thrown.message.utf8.prefix(buffer.count - 1))
        buffer.copyBytes(from: utf8)
        buffer[utf8.count] = 0
    }
    return thrown.code.rawValue
}

extension berth_bytes {
    /// A copy of the bytes (the pointer is only borrowed for the call).
    var array: [UInt8] {
        guard let data, length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(length)))
    }
}

extension ScreenEvent {
    init?(code: Int32, flag: Bool) {
        switch Int(code) {
        case Int(BERTH_EVENT_DID_LOAD): self = .didLoad
        case Int(BERTH_EVENT_WILL_APPEAR): self = .willAppear(isPresentedInitially: flag)
        case Int(BERTH_EVENT_DID_APPEAR): self = .didAppear(isPresentedInitially: flag)
        case Int(BERTH_EVENT_WILL_DISAPPEAR): self = .willDisappear(isRemovedPermanently: flag)
        case Int(BERTH_EVENT_DID_DISAPPEAR): self = .didDisappear(isRemovedPermanently: flag)
        default: return nil
        }
    }
}

/// Renders a screen of any concrete type.
private func renderAny(_ screen: any Screen, _ renderer: Renderer) {
    renderer.renderScreen(screen)
}
