import Foundation
import Logging
internal import CBerth

/// The in-process side of the seam: the plugin's image mapped into the host with
/// `dlopen`, its `berth_plugin_v1` called directly, exports called through libffi. The
/// fastest path; a crash in the plugin is a crash of the host, and a Swift image is
/// never unmapped (it is retired when the generation ends).
@MainActor
final class InProcessPlugin: PluginConnection {
    let pluginID: String
    let handshake: PluginHandshake
    let loadTimings: LoadTimings
    private var library: DynamicLibrary?
    private let runtime: PluginRuntimeKind
    private let shadowPath: String
    var imagePath: String { shadowPath }
    private let imageBytes: Int
    private let runtimeDirectory: RuntimeDirectory
    private let contextHandle: OpaquePointer
    private let table: berth_plugin_v1
    private var exports: [String: ForeignFunction]

    /// Copies, opens and handshakes the image and prepares its exports. On any failure
    /// nothing of it stays loaded (a Swift image already mapped is retired: `onRetire`).
    init(
        plugin: ValidatedPlugin, generation number: Int, runtimeDirectory: RuntimeDirectory, logger: Logger,
        host: BerthHost?, onRetire: (Int) -> Void
    ) throws(LoaderError) {
        let manifest = plugin.manifest
        let id = manifest.id
        self.pluginID = id
        self.runtime = manifest.runtime
        self.imageBytes = plugin.librarySize
        self.runtimeDirectory = runtimeDirectory

        var timings = LoadTimings()
        var phase = ContinuousClock.now
        let shadow = try runtimeDirectory.verifiedShadowCopy(of: plugin, generation: number)
        timings.copyAndHash = phase.elapsed
        phase = .now
        self.shadowPath = shadow
        var flags = RTLD_NOW | RTLD_LOCAL
        if manifest.runtime == .swift { flags |= RTLD_NODELETE }
        let image: DynamicLibrary
        do {
            image = try DynamicLibrary(path: shadow, flags: flags, plugin: id)
        } catch {
            runtimeDirectory.discard(shadowCopy: shadow)
            throw error
        }
        // From here a failure must dispose of the image by its runtime's rule.
        func abandon(_ image: consuming DynamicLibrary, _ error: LoaderError) -> LoaderError {
            if manifest.runtime == .swift {
                image.retire()
                onRetire(plugin.librarySize)
            } else {
                try? image.close(path: shadow, plugin: id)
            }
            runtimeDirectory.discard(shadowCopy: shadow)
            return error
        }
        guard let entryAddress = image.symbol(manifest.entry) else {
            throw abandon(image, LoaderError(.symbolMissing, plugin: id, path: shadow, symbol: manifest.entry))
        }
        timings.dlopen = phase.elapsed
        phase = .now
        let context = PluginContext(pluginID: id, generation: number, logger: logger, host: host, grant: CapabilityGrant(manifest: manifest))
        let handle = context.retainedHandle()
        let entry = unsafeBitCast(entryAddress, to: berth_entry_v1.self)
        let table: PluginTable
        do {
            table = try PluginTable.handshake(HostCall.run { entry(HostTable.pointer, handle) }, manifest: manifest, entry: manifest.entry)
        } catch {
            PluginContext.releaseHandle(handle)
            throw abandon(image, error)
        }
        var exports: [String: ForeignFunction] = [:]
        exports.reserveCapacity(manifest.exports.count)
        for signature in manifest.exports {
            guard let address = image.symbol(signature.symbol) else {
                PluginContext.releaseHandle(handle)
                throw abandon(image, LoaderError(.symbolMissing, plugin: id, path: shadow, symbol: signature.symbol))
            }
            do {
                exports[signature.symbol] = try ForeignFunction(signature: signature, address: address)
            } catch {
                PluginContext.releaseHandle(handle)
                throw abandon(image, LoaderError(.invalid, plugin: id, symbol: signature.symbol, detail: error.message))
            }
        }
        timings.handshake = phase.elapsed
        self.loadTimings = timings
        self.library = consume image
        self.contextHandle = handle
        self.table = table.table
        self.handshake = table.handshake
        self.exports = exports
    }

    func create(route: String, argument: [UInt8], screen: ScreenHandle) throws(PluginCallError) -> PluginInstanceID {
        // The handshake requires create when the manifest has routes; without it, the same
        // refusal as in a worker.
        guard let create = table.create else { throw PluginCallError(status: Int32(BERTH_ERR_UNSUPPORTED), message: "\(pluginID) has no create") }
        var error = BerthErrorBuffer.make()
        var created: UnsafeMutableRawPointer?
        let status = argument.withUnsafeBufferPointer { buffer in
            create(screen.opaque, route, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &created, &error)
        }
        guard status == BERTH_OK, let created else { throw Self.failure(error, status) }
        return PluginInstanceID(rawValue: UInt(bitPattern: created))
    }

    func destroy(_ instance: PluginInstanceID) {
        table.destroy?(Self.pointer(instance))
    }

    func activate(_ instance: PluginInstanceID) throws(PluginCallError) {
        guard let activate = table.activate else { return }
        try Self.check { activate(Self.pointer(instance), $0) }
    }

    func deactivate(_ instance: PluginInstanceID) throws(PluginCallError) {
        guard let deactivate = table.deactivate else { return }
        try Self.check { deactivate(Self.pointer(instance), $0) }
    }

    func screenEvent(_ instance: PluginInstanceID, code: Int32, flag: Bool) {
        table.screen_event?(Self.pointer(instance), code, flag ? 1 : 0)
    }

    func action(_ instance: PluginInstanceID, name: String, payload: [UInt8]) throws(PluginCallError) {
        guard let action = table.action else { return }
        try Self.check(payload) { action(Self.pointer(instance), name, $0, $1) }
    }

    func delegateReceived(_ instance: PluginInstanceID, from child: Int, action: String, payload: [UInt8]) throws(PluginCallError) {
        guard let receive = table.delegate_received else { return }
        try Self.check(payload) { receive(Self.pointer(instance), UInt64(child), action, $0, $1) }
    }

    func contextReceived(_ instance: PluginInstanceID, type: String, payload: [UInt8]) throws(PluginCallError) {
        guard let receive = table.context_received else { return }
        try Self.check(payload) { receive(Self.pointer(instance), type, $0, $1) }
    }

    /// `render_tree` gets the screen's slots in one batch; a v1.0 `render` reads each slot
    /// itself through `state_read` as it renders.
    func render(_ instance: PluginInstanceID, state: StateStorage) throws(PluginCallError) -> RenderedTree {
        let collected = SinkBuffer()
        if let renderTree = table.render_tree {
            let slots = state.renderSlots()
            try Self.check { error in RenderInput.with(slots) { input in collected.withSink { renderTree(Self.pointer(instance), input, $0, error) } } }
            return .binary(collected.bytes)
        }
        guard let render = table.render else { return .json([]) }
        try Self.check { error in collected.withSink { render(Self.pointer(instance), $0, error) } }
        return .json(collected.bytes)
    }

    func saveState(_ instance: PluginInstanceID) throws(PluginCallError) -> [UInt8] {
        guard let save = table.save_state else { return [] }
        let collected = SinkBuffer()
        try Self.check { error in collected.withSink { save(Self.pointer(instance), $0, error) } }
        return collected.bytes
    }

    func restoreState(_ instance: PluginInstanceID, _ bytes: [UInt8]) throws(PluginCallError) {
        guard let restore = table.restore_state else { return }
        try Self.check(bytes) { restore(Self.pointer(instance), $0, $1) }
    }

    func callExport(_ symbol: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        guard let function = exports[symbol] else { throw FFIError(.unknownSymbol, "\(pluginID) has no export '\(symbol)'") }
        return try function.call(arguments)
    }

    func resourceUsage() -> PluginResourceUsage { .current }

    func exportFunction(_ symbol: String) -> ForeignFunction? { exports[symbol] }

    /// Tells the plugin to let go, then closes a C image (proving it is unmapped) or
    /// retires a Swift image.
    func end() throws(LoaderError) -> GenerationEnding {
        if let unload = table.unload { HostCall.run { unload() } }
        exports.removeAll()
        guard let image = library.take() else { preconditionFailure("a loaded generation holds its image") }
        defer { runtimeDirectory.discard(shadowCopy: shadowPath) }
        switch runtime {
        case .swift:
            image.retire()
            // A retired image's code may still run (a leaked thread could log), so its
            // handle stays valid for the life of the process.
            return .retired(bytes: imageBytes)
        case .c:
            try image.close(path: shadowPath, plugin: pluginID)
            PluginContext.releaseHandle(contextHandle)
            return .unmapped
        }
    }

    // MARK: Calling the table

    private static func pointer(_ instance: PluginInstanceID) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: instance.rawValue)
    }

    private static func failure(_ error: berth_error, _ status: berth_status) -> PluginCallError {
        PluginCallError(status: status, message: BerthErrorBuffer.message(of: error, status: status))
    }

    /// Calls a table function that reports through a `berth_error`.
    private static func check(_ function: (UnsafeMutablePointer<berth_error>) -> berth_status) throws(PluginCallError) {
        var error = BerthErrorBuffer.make()
        let status = function(&error)
        guard status == BERTH_OK else { throw failure(error, status) }
    }

    /// Same, lending `payload` as `berth_bytes` for the call.
    private static func check(_ payload: [UInt8], _ function: (berth_bytes, UnsafeMutablePointer<berth_error>) -> berth_status) throws(PluginCallError) {
        try check { error in
            payload.withUnsafeBufferPointer { function(berth_bytes(data: $0.baseAddress, length: UInt64($0.count)), error) }
        }
    }
}
