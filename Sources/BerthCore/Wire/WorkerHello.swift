/// The first request a host sends a worker: which library to open and what its manifest
/// promises (the handshake checks the table against it; exports get a libffi interface).
package struct WorkerHello: Sendable, Equatable {
    /// `IsolationWire.version` of the host; a worker speaking another version refuses.
    public var wireVersion: UInt32
    /// The manifest's id; the table's `plugin_id` must equal it.
    public var pluginID: String
    /// The library to `dlopen` (the host's shadow copy, already validated).
    public var libraryPath: String
    /// The entry symbol returning the `berth_plugin_v1` table.
    public var entry: String
    /// The language runtime of the image.
    public var runtime: PluginRuntimeKind
    /// The ABI the manifest declares; the table must report the same.
    public var abi: ABIVersion
    /// The manifest's routes (the handshake requires create/destroy when there are some).
    public var routes: [String]
    /// The manifest's exports, prepared for libffi calls in the worker.
    public var exports: [ExportSignature]
    /// What the manifest grants (the worker refuses `task_start` without `tasks`).
    public var capabilities: Set<Capability> = Capability.undeclaredDefault
    /// The OS sandbox to enter before the library is opened; nil for none (a canary load).
    /// A worker confines itself once, at its first hello: a group's is the union of its
    /// members' (`WorkerGroup`).
    public var sandbox: SandboxPolicy? = nil
    /// The host's number for this plugin generation in its worker (a group's worker hosts
    /// several); requests about the plugin and the plugin's own calls name it.
    public var member: UInt64 = 1

    /// A hello spelled out field by field (tests, fixtures); hosts use `init(manifest:libraryPath:)`.
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
    public init(manifest: PluginManifest, libraryPath: String, sandbox: SandboxPolicy? = nil) {
        self.init(pluginID: manifest.id, libraryPath: libraryPath, entry: manifest.entry, runtime: manifest.runtime,
                  abi: manifest.abi, routes: manifest.routes, exports: manifest.exports)
        self.capabilities = manifest.grantedCapabilities
        self.sandbox = sandbox
    }

    /// The manifest fields the worker's handshake and libffi preparation read.
    package var manifest: PluginManifest {
        PluginManifest(
            id: pluginID, name: pluginID, version: SemanticVersion(major: 0, minor: 0, patch: 0), abi: abi,
            library: libraryPath, entry: entry, runtime: runtime, exports: exports, routes: routes,
            requires: [], persist: [], sha256: nil, description: nil, capabilities: capabilities
        )
    }

    package func write(to writer: inout WireWriter) {
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
        writer.list(capabilities.sorted()) { $0.string($1.rawValue) }
        writer.bool(sandbox != nil)
        sandbox?.write(to: &writer)
        writer.u64(member)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> WorkerHello {
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
        var hello = WorkerHello(pluginID: pluginID, libraryPath: libraryPath, entry: entry, runtime: runtime, abi: abi,
                                routes: routes, exports: exports, wireVersion: wireVersion)
        let names = try reader.list(minimumElementSize: 4) { reader throws(WireDecodingError) in try reader.string() }
        hello.capabilities = Set(names.compactMap(Capability.init(rawValue:)))
        hello.sandbox = try reader.bool() ? try SandboxPolicy.read(from: &reader) : nil
        hello.member = try reader.u64()
        return hello
    }

    private static func valueType(_ reader: inout WireReader) throws(WireDecodingError) -> ValueType {
        let name = try reader.string()
        guard let type = ValueType(rawValue: name) else { throw WireDecodingError(detail: "unknown value type '\(name)'") }
        return type
    }
}
