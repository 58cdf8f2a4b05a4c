internal import Glibc
package import CBerth

/// A plugin's image opened in this process and the `berth_plugin_v1` it returned: the one
/// core that calls a plugin, wherever it runs. In process the host drives it
/// (`InProcessPlugin`); in a worker the worker's session does (`WorkerPlugin`), and the host
/// only forwards. So a plugin behaves the same in both modes.
///
/// Opening it is berth.h's load, stopping at the first failure with a `LoaderError` naming
/// the path and the symbol: `dlopen`, `dlsym` the entry, call it, the handshake
/// (`PluginTable`), a prepared libffi call per declared export. Each table function has one
/// method (`PluginImage+Calls.swift`) with berth.h's rule for a NULL optional function.
@MainActor
package final class PluginImage {
    /// What becomes of the image when its load fails after `dlopen`, and when it ends.
    package enum Disposal {
        /// Mapped for the life of the process: a Swift image (the Swift runtime keeps
        /// pointers into it), and any image in a worker (whose exit gives the memory back).
        case retire
        /// `dlclose`d and proven unmapped (`close()`): a C image in the host's process.
        case close
    }

    package let manifest: PluginManifest
    /// The file the image was opened from.
    package let path: String
    /// The table as the handshake read it. Immutable after the handshake, so its function
    /// pointers are read from the plugin's lane too (`actionOnLane`).
    package nonisolated(unsafe) let table: PluginTable
    /// `dlopen` and the entry's `dlsym`.
    package let openDuration: Duration
    /// The entry call, the handshake and the exports' preparation.
    package let handshakeDuration: Duration
    /// Held only while a `.close` image may still be closed.
    /// `nonisolated(unsafe)`: set by the nonisolated `init` (on the lane that opens the image,
    /// before anything else can see it), then only used on the main actor.
    nonisolated(unsafe) private var library: DynamicLibrary?
    /// The same: set by `init`, then only used on the main actor.
    nonisolated(unsafe) private var exports: [String: ForeignFunction]
    /// Set once the plugin's `unload` ran; no export is called after it.
    package private(set) var isUnloaded = false

    /// Opens `path` and calls its entry with `hostTable` and `handle` (the plugin's
    /// `berth_plugin_handle *`). On failure nothing of it is left in use: the image is closed
    /// or retired by `disposal` (`onRetiredAfterFailure` is told of a retired one).
    /// Nonisolated: a new generation is opened on its own lane (`InProcessPlugin.open`), and
    /// nothing else holds the image until it is handed back to the main actor.
    package nonisolated init(path: String, manifest: PluginManifest, disposal: Disposal, hostTable: UnsafePointer<berth_host_v1>, handle: OpaquePointer,
         onRetiredAfterFailure: () -> Void = {}) throws(LoaderError) {
        let plugin = manifest.id
        var phase = ContinuousClock.now
        var flags = RTLD_NOW | RTLD_LOCAL
        if manifest.runtime == .swift { flags |= RTLD_NODELETE }
        let image = try DynamicLibrary(path: path, flags: flags, plugin: plugin)
        let opened: (table: PluginTable, exports: [String: ForeignFunction])
        do throws(LoaderError) {
            guard let entryAddress = image.symbol(manifest.entry) else {
                throw LoaderError(.symbolMissing, plugin: plugin, path: path, symbol: manifest.entry)
            }
            openDuration = phase.elapsed
            phase = .now
            let entry = unsafeBitCast(entryAddress, to: berth_entry_v1.self)
            let table = try PluginTable.handshake(HostCall.run { entry(hostTable, handle) }, manifest: manifest, entry: manifest.entry)
            opened = (table, try Self.prepareExports(of: image, manifest: manifest, path: path))
        } catch {
            switch disposal {
            case .retire:
                image.retire()
                onRetiredAfterFailure()
            case .close:
                try? image.close(path: path, plugin: plugin)
            }
            throw error
        }
        handshakeDuration = phase.elapsed
        self.manifest = manifest
        self.path = path
        table = opened.table
        exports = opened.exports
        switch disposal {
        case .retire: image.retire()
        case .close: library = consume image
        }
    }

    /// A prepared libffi call per declared export.
    private nonisolated static func prepareExports(
        of image: borrowing DynamicLibrary, manifest: PluginManifest, path: String
    ) throws(LoaderError) -> [String: ForeignFunction] {
        var exports: [String: ForeignFunction] = [:]
        exports.reserveCapacity(manifest.exports.count)
        for signature in manifest.exports {
            guard let address = image.symbol(signature.symbol) else {
                throw LoaderError(.symbolMissing, plugin: manifest.id, path: path, symbol: signature.symbol)
            }
            do {
                exports[signature.symbol] = try ForeignFunction(signature: signature, address: address)
            } catch {
                throw LoaderError(.invalid, plugin: manifest.id, symbol: signature.symbol, detail: error.message)
            }
        }
        return exports
    }

    package nonisolated var pluginID: String { manifest.id }

    /// The optional functions the table has.
    package nonisolated var functions: PluginHandshake.Functions { table.handshake.functions }

    /// The export's prepared libffi call; nil once unloaded or when the manifest has none.
    package func exportFunction(_ symbol: String) -> ForeignFunction? { exports[symbol] }

    /// Calls an export through its prepared libffi interface.
    package func callExport(_ symbol: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        guard !isUnloaded else { throw FFIError(.unknownSymbol, "\(pluginID) is unloaded; nothing is called") }
        guard let function = exports[symbol] else {
            let known = manifest.exports.map(\.symbol).joined(separator: ", ")
            throw FFIError(.unknownSymbol, "\(pluginID) has no export '\(symbol)' (exports: \(known.isEmpty ? "none" : known))")
        }
        return try function.call(arguments)
    }

    /// The plugin's `unload` (once; a NULL `unload` does nothing); afterwards no export is
    /// called.
    package func unload() {
        guard !isUnloaded else { return }
        isUnloaded = true
        exports.removeAll()
        if let unload = table.table.unload { HostCall.run { unload() } }
    }

    /// Closes a `.close` image and proves it unmapped (after `unload`); a retired image
    /// stays mapped.
    package func close() throws(LoaderError) {
        guard let image = library.take() else { return }
        try image.close(path: path, plugin: pluginID)
    }
}
