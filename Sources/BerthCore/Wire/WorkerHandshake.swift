/// The worker's answer to a hello that loaded: what the handshake read from the plugin's
/// table, so the host can treat the worker like an in-process generation.
package struct WorkerHandshake: Sendable, Equatable {
    /// The ABI version the plugin reported.
    package var abi: ABIVersion
    /// The plugin table's `struct_size`.
    package var tableSize: UInt32
    /// The table's `plugin_id` (equal to the manifest's id; the handshake checked it).
    package var pluginID: String
    /// Which table functions are non-NULL.
    package var functions: PluginHandshake.Functions
    /// The worker's own process id, as it sees itself.
    package var workerProcessID: Int32
    /// Whether the worker confined itself before it opened the library.
    package var sandbox: SandboxStatus = .off
    /// Where the table lives in the worker (each generation's image has its own, also when
    /// a group's worker hosts several generations of one plugin).
    package var tableAddress: UInt64 = 0

    /// A handshake result as the worker read it.
    package init(abi: ABIVersion, tableSize: UInt32, pluginID: String, functions: PluginHandshake.Functions, workerProcessID: Int32) {
        self.abi = abi
        self.tableSize = tableSize
        self.pluginID = pluginID
        self.functions = functions
        self.workerProcessID = workerProcessID
    }

    package func write(to writer: inout WireWriter) {
        writer.u32(abi.packed)
        writer.u32(tableSize)
        writer.string(pluginID)
        writer.u32(functions.rawValue)
        writer.i32(workerProcessID)
        sandbox.write(to: &writer)
        writer.u64(tableAddress)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> WorkerHandshake {
        var handshake = WorkerHandshake(abi: ABIVersion(packed: try reader.u32()), tableSize: try reader.u32(), pluginID: try reader.string(),
                                        functions: PluginHandshake.Functions(rawValue: try reader.u32()), workerProcessID: try reader.i32())
        handshake.sandbox = try SandboxStatus.read(from: &reader)
        handshake.tableAddress = try reader.u64()
        return handshake
    }
}
