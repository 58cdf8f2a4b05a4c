/// The first request a host sends a worker: which library to open and what its manifest
/// promises (the handshake checks the table against it; exports get a libffi interface).
public struct WorkerHello: Sendable, Equatable {
    /// `IsolationWire.version` of the host; a worker speaking another version refuses.
    public var wireVersion: UInt32
    public var pluginID: String
    /// The library to `dlopen` (the host's shadow copy, already validated).
    public var libraryPath: String
    /// The entry symbol returning the `berth_plugin_v1` table.
    public var entry: String
    public var runtime: PluginRuntimeKind
    /// The ABI the manifest declares; the table must report the same.
    public var abi: ABIVersion
    /// The manifest's routes (the handshake requires create/destroy when there are some).
    public var routes: [String]
    /// The manifest's exports, prepared for libffi calls in the worker.
    public var exports: [ExportSignature]

    public init(pluginID: String, libraryPath: String, entry: String, runtime: PluginRuntimeKind, abi: ABIVersion,
                routes: [String], exports: [ExportSignature], wireVersion: UInt32 = IsolationWire.version) {
        self.wireVersion = wireVersion
        self.pluginID = pluginID
        self.libraryPath = libraryPath
        self.entry = entry
        self.runtime = runtime
        self.abi = abi
        self.routes = routes
        self.exports = exports
    }

    /// The hello for a validated manifest whose library was copied to `libraryPath`.
    public init(manifest: PluginManifest, libraryPath: String) {
        self.init(pluginID: manifest.id, libraryPath: libraryPath, entry: manifest.entry, runtime: manifest.runtime,
                  abi: manifest.abi, routes: manifest.routes, exports: manifest.exports)
    }

    /// The manifest fields the worker's handshake and libffi preparation read.
    var manifest: PluginManifest {
        PluginManifest(
            id: pluginID, name: pluginID, version: SemanticVersion(major: 0, minor: 0, patch: 0), abi: abi,
            library: libraryPath, entry: entry, runtime: runtime, exports: exports, routes: routes,
            requires: [], persist: [], sha256: nil, description: nil
        )
    }

    func write(to writer: inout WireWriter) {
        writer.u32(wireVersion)
        writer.string(pluginID)
        writer.string(libraryPath)
        writer.string(entry)
        writer.string(runtime.rawValue)
        writer.u32(abi.packed)
        writer.list(routes) { $0.string($1) }
        writer.list(exports) { writer, export in
            writer.string(export.symbol)
            writer.list(export.params) { $0.string($1.rawValue) }
            writer.string(export.returns.rawValue)
        }
    }

    static func read(from reader: inout WireReader) throws(WireDecodingError) -> WorkerHello {
        let wireVersion = try reader.u32()
        let pluginID = try reader.string()
        let libraryPath = try reader.string()
        let entry = try reader.string()
        let runtimeName = try reader.string()
        guard let runtime = PluginRuntimeKind(rawValue: runtimeName) else {
            throw WireDecodingError(detail: "unknown runtime '\(runtimeName)'")
        }
        let abi = ABIVersion(packed: try reader.u32())
        let routes = try reader.list(minimumElementSize: 4) { reader throws(WireDecodingError) in try reader.string() }
        let exports = try reader.list(minimumElementSize: 12) { reader throws(WireDecodingError) -> ExportSignature in
            let symbol = try reader.string()
            let params = try reader.list(minimumElementSize: 4) { reader throws(WireDecodingError) in try valueType(&reader) }
            return ExportSignature(symbol: symbol, params: params, returns: try valueType(&reader))
        }
        return WorkerHello(pluginID: pluginID, libraryPath: libraryPath, entry: entry, runtime: runtime, abi: abi,
                           routes: routes, exports: exports, wireVersion: wireVersion)
    }

    private static func valueType(_ reader: inout WireReader) throws(WireDecodingError) -> ValueType {
        let name = try reader.string()
        guard let type = ValueType(rawValue: name) else { throw WireDecodingError(detail: "unknown value type '\(name)'") }
        return type
    }
}

/// The worker's answer to a hello that loaded: what the handshake read from the plugin's
/// table, so the host can treat the worker like an in-process generation.
public struct WorkerHandshake: Sendable, Equatable {
    /// The ABI version the plugin reported.
    public var abi: ABIVersion
    /// The plugin table's `struct_size`.
    public var tableSize: UInt32
    /// The table's `plugin_id` (equal to the manifest's id; the handshake checked it).
    public var pluginID: String
    /// Which table functions are non-NULL.
    public var functions: PluginFunctions
    /// The worker's own process id, as it sees itself.
    public var workerProcessID: Int32

    public init(abi: ABIVersion, tableSize: UInt32, pluginID: String, functions: PluginFunctions, workerProcessID: Int32) {
        self.abi = abi
        self.tableSize = tableSize
        self.pluginID = pluginID
        self.functions = functions
        self.workerProcessID = workerProcessID
    }

    func write(to writer: inout WireWriter) {
        writer.u32(abi.packed)
        writer.u32(tableSize)
        writer.string(pluginID)
        writer.u32(functions.rawValue)
        writer.i32(workerProcessID)
    }

    static func read(from reader: inout WireReader) throws(WireDecodingError) -> WorkerHandshake {
        WorkerHandshake(abi: ABIVersion(packed: try reader.u32()), tableSize: try reader.u32(), pluginID: try reader.string(),
                        functions: PluginFunctions(rawValue: try reader.u32()), workerProcessID: try reader.i32())
    }
}

/// The optional functions of a `berth_plugin_v1` table that are present (non-NULL).
public struct PluginFunctions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let create = PluginFunctions(rawValue: 1 << 0)
    public static let destroy = PluginFunctions(rawValue: 1 << 1)
    public static let activate = PluginFunctions(rawValue: 1 << 2)
    public static let deactivate = PluginFunctions(rawValue: 1 << 3)
    public static let screenEvent = PluginFunctions(rawValue: 1 << 4)
    public static let action = PluginFunctions(rawValue: 1 << 5)
    public static let render = PluginFunctions(rawValue: 1 << 6)
    public static let saveState = PluginFunctions(rawValue: 1 << 7)
    public static let restoreState = PluginFunctions(rawValue: 1 << 8)
    public static let contextReceived = PluginFunctions(rawValue: 1 << 9)
    public static let delegateReceived = PluginFunctions(rawValue: 1 << 10)
    public static let unload = PluginFunctions(rawValue: 1 << 11)
}
