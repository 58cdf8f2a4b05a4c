import BerthCore
internal import Glibc
internal import CBerth

/// One plugin generation a worker hosts (a group's worker hosts several): its image and
/// table (`PluginImage`, the core the host uses in process), what its hello granted, and
/// the handle it names itself by in its calls to the host.
///
/// The image is never closed: the worker's exit is what gives the memory back (a Swift
/// image must not be `dlclose`d anyway).
@MainActor
final class WorkerPlugin {
    let image: PluginImage
    /// What the hello's manifest grants (the worker's own host functions check it).
    let grant: CapabilityGrant
    /// The `berth_plugin_handle *` it was given: names it in its calls to the host.
    let handle: WorkerPluginHandle

    /// Opens the library, calls the entry with the worker's host table, checks the table
    /// against the manifest and prepares the exports.
    init(hello: WorkerHello) throws(LoaderError) {
        let manifest = hello.manifest
        let handle = WorkerPluginHandle(member: hello.member, pluginID: manifest.id)
        // Never freed, even when the load fails: the entry may have kept the pointer, and a
        // thread of the plugin may still log with it.
        let pluginHandle = OpaquePointer(Unmanaged.passRetained(handle).toOpaque())
        // Retired whatever happens: the entry may have run, and code of a Swift image must
        // never be unmapped under the runtime.
        image = try PluginImage(path: hello.libraryPath, manifest: manifest, disposal: .retire,
                                hostTable: HostTable.pointer, handle: pluginHandle)
        self.handle = handle
        grant = CapabilityGrant(pluginID: hello.pluginID, capabilities: hello.capabilities, runtime: hello.runtime)
    }

    var manifest: PluginManifest { image.manifest }
    var pluginID: String { image.pluginID }
    /// Set once the plugin's `unload` ran; nothing is called after it.
    var isUnloaded: Bool { image.isUnloaded }

    /// What the host needs from the handshake.
    var handshake: WorkerHandshake {
        let table = image.table
        var handshake = WorkerHandshake(abi: table.abi, tableSize: UInt32(table.size), pluginID: manifest.id,
                                        functions: table.handshake.functions, workerProcessID: getpid())
        handshake.tableAddress = UInt64(table.handshake.tableAddress)
        return handshake
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
