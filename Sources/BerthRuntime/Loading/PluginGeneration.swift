import Foundation
import Logging
internal import CBerth

/// One loaded generation of a plugin: its shadow-copied image, the handshake's table, and
/// the prepared export calls. A reload makes a new generation; the old one is retired
/// (Swift) or closed (C).
@MainActor
public final class PluginGeneration {
    /// The plugin's id.
    public let pluginID: String
    /// 1 for the first load in this host process, then +1 for every reload.
    public let number: Int
    public let manifest: PluginManifest
    /// The validated plugin folder this generation came from.
    public let source: ValidatedPlugin
    /// Where the image was loaded from (the shadow copy).
    public let shadowPath: String
    /// Bytes of the image file (what a retired Swift generation keeps mapped).
    public var imageBytes: Int { source.librarySize }

    private var library: DynamicLibrary?
    private var lifecycle: GenerationLifecycle
    private let context: PluginContext
    private let handle: OpaquePointer
    let table: PluginTable
    private var exports: [String: ForeignFunction]
    private let runtimeDirectory: RuntimeDirectory

    /// `loaded`, `retired` or `unloaded`.
    public var state: String { lifecycle.name }
    public var isLoaded: Bool { lifecycle.isLoaded }

    /// Copies, opens, handshakes and prepares a new generation. On any failure nothing of
    /// it stays loaded (a Swift image that was already mapped is retired and counted).
    init(
        plugin: ValidatedPlugin, number: Int, runtimeDirectory: RuntimeDirectory, logger: Logger,
        host: BerthHost?, onRetire: (Int) -> Void
    ) throws(LoaderError) {
        let manifest = plugin.manifest
        let id = manifest.id
        self.pluginID = id
        self.number = number
        self.manifest = manifest
        self.source = plugin
        self.runtimeDirectory = runtimeDirectory
        self.lifecycle = GenerationLifecycle(runtime: manifest.runtime, subject: "generation \(id)#\(number)")

        let shadow = try runtimeDirectory.shadowCopy(of: plugin.libraryPath, id: id, generation: number)
        self.shadowPath = shadow
        // The file may have changed since it was validated: load only the bytes checked.
        guard RuntimeDirectory.sha256(of: shadow) == plugin.librarySHA256 else {
            runtimeDirectory.discard(shadowCopy: shadow)
            throw LoaderError(.invalid, plugin: id, "\(plugin.libraryPath) changed after it was validated; run discover (or reload) to check it again")
        }
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
            throw abandon(image, LoaderError(.symbolMissing, plugin: id, "entry symbol '\(manifest.entry)' not found in \(shadow)"))
        }
        let context = PluginContext(pluginID: id, generation: number, logger: logger, host: host)
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
        for signature in manifest.exports {
            guard let address = image.symbol(signature.symbol) else {
                PluginContext.releaseHandle(handle)
                throw abandon(image, LoaderError(.symbolMissing, plugin: id, "export '\(signature.symbol)' not found in \(shadow)"))
            }
            do {
                exports[signature.symbol] = try ForeignFunction(signature: signature, address: address)
            } catch {
                PluginContext.releaseHandle(handle)
                throw abandon(image, LoaderError(.invalid, plugin: id, error.message))
            }
        }
        self.library = consume image
        self.context = context
        self.handle = handle
        self.table = table
        self.exports = exports
    }

    /// Where the plugin's table lives (conformance: a second generation must have its own).
    package var tableAddress: UnsafeRawPointer? { table.address }
    /// The ABI version the plugin reported and its table's size, as read at the handshake.
    package var handshake: (abi: ABIVersion, tableSize: Int) { (table.abi, table.size) }
    /// Whether the plugin implements save_state and restore_state.
    package var savesState: Bool { table.table.save_state != nil && table.table.restore_state != nil }

    /// Calls an export through its prepared libffi interface.
    public func call(_ symbol: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        guard lifecycle.isLoaded else {
            throw FFIError(.unknownSymbol, "\(pluginID)#\(number) is \(lifecycle.name); nothing is called")
        }
        guard let function = exports[symbol] else {
            let known = manifest.exports.map(\.symbol).joined(separator: ", ")
            throw FFIError(.unknownSymbol, "\(pluginID) has no export '\(symbol)' (exports: \(known.isEmpty ? "none" : known))")
        }
        return try function.call(arguments)
    }

    /// Calls an export with arguments given as text, converted by the manifest's signature.
    public func call(_ symbol: String, textArguments: [String]) throws(FFIError) -> FFIValue {
        guard let signature = manifest.export(named: symbol) else {
            return try call(symbol, arguments: []) // reports the unknown symbol
        }
        return try call(symbol, arguments: signature.parseArguments(textArguments))
    }

    /// Ends this generation: tells the plugin to let go, then closes a C image (proving it
    /// is unmapped) or retires a Swift image. Returns the bytes retired (0 for C).
    func end() throws(LoaderError) -> Int {
        let action: GenerationLifecycle.EndAction
        do {
            action = try lifecycle.end()
        } catch {
            throw LoaderError(.lifecycle, plugin: pluginID, error.description)
        }
        if let unload = table.table.unload { HostCall.run { unload() } }
        exports.removeAll()
        guard let image = library.take() else { preconditionFailure("a loaded generation holds its image") }
        switch action {
        case .retireImage:
            image.retire()
            runtimeDirectory.discard(shadowCopy: shadowPath)
            // A retired image's code may still run (a leaked thread could log), so its
            // handle stays valid for the life of the process.
            return imageBytes
        case .closeImage:
            defer { runtimeDirectory.discard(shadowCopy: shadowPath) }
            try image.close(path: shadowPath, plugin: pluginID)
            PluginContext.releaseHandle(handle)
            return 0
        }
    }
}
