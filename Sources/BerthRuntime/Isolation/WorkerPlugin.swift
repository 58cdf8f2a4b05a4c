import Foundation
internal import CBerth

/// One plugin generation a worker hosts (a group's worker hosts several): its image opened
/// with `dlopen`, the table the handshake checked, and a prepared libffi call per declared
/// export.
///
/// The image is never closed: the worker's exit is what gives the memory back (a Swift
/// image must not be `dlclose`d anyway).
@MainActor
final class WorkerPlugin {
    let manifest: PluginManifest
    let table: PluginTable
    /// What the hello's manifest grants (the worker's own host functions check it).
    let grant: CapabilityGrant
    /// The `berth_plugin_handle *` it was given: names it in its calls to the host.
    let handle: WorkerPluginHandle
    private var exports: [String: ForeignFunction]
    /// Set once the plugin's `unload` ran; nothing is called after it.
    private(set) var isUnloaded = false

    /// Opens the library (`RTLD_NOW | RTLD_LOCAL`), calls the entry with the worker's host
    /// table, checks the table against the manifest and prepares the exports.
    init(hello: WorkerHello) throws(LoaderError) {
        let manifest = hello.manifest
        let handle = WorkerPluginHandle(member: hello.member, pluginID: manifest.id)
        // Never freed, even when the load fails: the entry may have kept the pointer, and a
        // thread of the plugin may still log with it.
        let pluginHandle = OpaquePointer(Unmanaged.passRetained(handle).toOpaque())
        let image = try DynamicLibrary(path: hello.libraryPath, flags: RTLD_NOW | RTLD_LOCAL, plugin: manifest.id)
        let prepared: Result<(PluginTable, [String: ForeignFunction]), LoaderError>
        do {
            prepared = .success(try Self.prepare(image, manifest: manifest, path: hello.libraryPath, pluginHandle: pluginHandle))
        } catch {
            prepared = .failure(error)
        }
        // Mapped for the rest of the worker's life, whatever happened: the entry may have
        // run, and code of a Swift image must never be unmapped under the runtime.
        image.retire()
        let (table, exports) = try prepared.get()
        self.manifest = manifest
        self.table = table
        self.exports = exports
        self.handle = handle
        grant = CapabilityGrant(pluginID: hello.pluginID, capabilities: hello.capabilities, runtime: hello.runtime)
    }

    private static func prepare(
        _ image: borrowing DynamicLibrary, manifest: PluginManifest, path: String, pluginHandle: OpaquePointer
    ) throws(LoaderError) -> (PluginTable, [String: ForeignFunction]) {
        guard let entryAddress = image.symbol(manifest.entry) else {
            throw LoaderError(.symbolMissing, plugin: manifest.id, "entry symbol '\(manifest.entry)' not found in \(path)")
        }
        let entry = unsafeBitCast(entryAddress, to: berth_entry_v1.self)
        let table = try PluginTable.handshake(HostCall.run { entry(WorkerHostTable.pointer, pluginHandle) },
                                              manifest: manifest, entry: manifest.entry)
        var exports: [String: ForeignFunction] = [:]
        for signature in manifest.exports {
            guard let address = image.symbol(signature.symbol) else {
                throw LoaderError(.symbolMissing, plugin: manifest.id, "export '\(signature.symbol)' not found in \(path)")
            }
            do {
                exports[signature.symbol] = try ForeignFunction(signature: signature, address: address)
            } catch {
                throw LoaderError(.invalid, plugin: manifest.id, error.message)
            }
        }
        return (table, exports)
    }

    var pluginID: String { manifest.id }

    /// What the host needs from the handshake.
    var handshake: WorkerHandshake {
        var handshake = WorkerHandshake(abi: table.abi, tableSize: UInt32(table.size), pluginID: manifest.id,
                                        functions: table.handshake.functions, workerProcessID: ProcessInfo.processInfo.processIdentifier)
        handshake.tableAddress = UInt64(table.handshake.tableAddress)
        return handshake
    }

    /// Calls an export through its prepared libffi interface.
    func call(_ symbol: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        guard !isUnloaded else { throw FFIError(.unknownSymbol, "\(pluginID) is unloaded; nothing is called") }
        guard let function = exports[symbol] else {
            let known = manifest.exports.map(\.symbol).joined(separator: ", ")
            throw FFIError(.unknownSymbol, "\(pluginID) has no export '\(symbol)' (exports: \(known.isEmpty ? "none" : known))")
        }
        return try function.call(arguments)
    }

    /// The plugin's `unload`; afterwards the plugin is never called again.
    func unload() {
        guard !isUnloaded else { return }
        isUnloaded = true
        exports.removeAll()
        if let unload = table.table.unload { HostCall.run { unload() } }
    }
}

/// What a `berth_plugin_handle *` points to in a worker: which of the worker's plugins is
/// calling. Immutable, so `log` reads it from any thread; retained for the worker's life.
final class WorkerPluginHandle: Sendable {
    /// The hello's `member`.
    let member: UInt64
    let pluginID: String

    init(member: UInt64, pluginID: String) {
        self.member = member
        self.pluginID = pluginID
    }

    static func from(_ handle: OpaquePointer?) -> WorkerPluginHandle? {
        guard let handle else { return nil }
        return Unmanaged<WorkerPluginHandle>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }
}
