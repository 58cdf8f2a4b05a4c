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

    /// A handshake result as the worker read it.
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
