internal import CBerth
import Logging

/// What a `berth_plugin_handle *` points to: the identity of one loaded generation, safe to
/// use from any thread (a plugin may log from a worker thread).
final class PluginContext: Sendable {
    let pluginID: String
    let generation: Int
    let logger: Logger
    /// The host, for plugin-wide services (registration, sessions); used on the main actor.
    weak let host: (any PluginFacingHost)?
    /// What the generation's manifest grants.
    let grant: CapabilityGrant
    /// How long and how many of its log lines the host prints.
    let logBudget: LogBudget
    /// The plugin's lane, where its contracts answer calls (nil for a trial load).
    let lane: LaneState?

    init(pluginID: String, generation: Int, logger: Logger, host: (any PluginFacingHost)?, grant: CapabilityGrant, limits: PluginLimits = PluginLimits(),
         lane: LaneState? = nil) {
        self.pluginID = pluginID
        self.lane = lane
        logBudget = LogBudget(limits: limits)
        self.grant = grant
        self.generation = generation
        self.host = host
        var logger = logger
        logger[metadataKey: "plugin"] = "\(pluginID)#\(generation)"
        self.logger = logger
    }

    /// The opaque handle given to the plugin. Retained until `releaseHandle`.
    func retainedHandle() -> OpaquePointer {
        OpaquePointer(Unmanaged.passRetained(self).toOpaque())
    }

    static func from(handle: OpaquePointer?) -> PluginContext? {
        guard let handle else { return nil }
        return Unmanaged<PluginContext>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }

    static func releaseHandle(_ handle: OpaquePointer) {
        Unmanaged<PluginContext>.fromOpaque(UnsafeRawPointer(handle)).release()
    }
}

/// The `berth_host_v1` table every plugin in this process receives (in the host, and in
/// a worker): one table, allocated once, never freed (plugins may keep the pointer until
/// they unload). Its functions are `HostAdapter`'s.
enum HostTable {
    /// The table's address, stable for the life of the process.
    static var pointer: UnsafePointer<berth_host_v1> { storage.pointer }

    private static let storage = HostFunctionTable(HostAdapter.fill)

    /// A `BERTH_LOG_*` level as swift-log's.
    static func logLevel(_ level: Int32) -> Logger.Level {
        switch Int(level) {
        case Int(BERTH_LOG_TRACE): .trace
        case Int(BERTH_LOG_DEBUG): .debug
        case Int(BERTH_LOG_INFO): .info
        case Int(BERTH_LOG_NOTICE): .notice
        case Int(BERTH_LOG_WARNING): .warning
        default: .error
        }
    }
}

/// A `berth_host_v1` allocated once and never freed, its header set and its functions
/// filled by its owner: the host's table in process, the worker's in a worker. Safe to
/// share: the table is written once, in the initializer (run once by Swift's lazy global
/// initialization of the owner's `static let`), then only read.
struct HostFunctionTable: @unchecked Sendable {
    let pointer: UnsafePointer<berth_host_v1>

    init(_ fill: (UnsafeMutablePointer<berth_host_v1>) -> Void) {
        let table = UnsafeMutablePointer<berth_host_v1>.allocate(capacity: 1)
        table.initialize(to: berth_host_v1())
        table.pointee.struct_size = UInt32(MemoryLayout<berth_host_v1>.size)
        table.pointee.abi_version = HostABI.version.packed
        fill(table)
        pointer = UnsafePointer(table)
    }

    /// `task_is_cancelled` and `task_sleep`: a managed task asks its own handle, from its
    /// thread, wherever the task runs.
    static func fillTaskChecks(_ table: UnsafeMutablePointer<berth_host_v1>) {
        table.pointee.task_is_cancelled = { task in (ManagedTask.from(handle: task)?.isCancelled ?? true) ? 1 : 0 }
        table.pointee.task_sleep = { task, milliseconds in
            guard let task = ManagedTask.from(handle: task) else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
            return berth_status(task.sleep(milliseconds: milliseconds) ? BERTH_OK : BERTH_ERR_CANCELLED)
        }
    }
}

/// Reading and writing `berth_error` buffers.
enum BerthErrorBuffer {
    /// Writes `message` (truncated to fit) and `code` into a caller-provided error.
    @discardableResult
    static func fill(_ error: UnsafeMutablePointer<berth_error>?, code: berth_status, message: String) -> berth_status {
        guard let error else { return code }
        error.pointee.code = code
        withUnsafeMutableBytes(of: &error.pointee.message) { buffer in
            let utf8 = Array(message.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: utf8)
            buffer[utf8.count] = 0
        }
        return code
    }

    /// A zeroed error for a call into a plugin.
    static func make() -> berth_error {
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        return error
    }

    /// The message a plugin wrote, or a fallback naming the status.
    static func message(of error: berth_error, status: berth_status) -> String {
        var copy = error
        let text = withUnsafeBytes(of: &copy.message) { buffer -> String in
            let bytes = buffer.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        return text.isEmpty ? "failed with status \(status) and no message" : text
    }
}
