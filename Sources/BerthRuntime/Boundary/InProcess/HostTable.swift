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

/// The `berth_host_v1` table every plugin generation receives: one table for the process,
/// allocated once, never freed (plugins may keep the pointer until they unload).
enum HostTable {
    /// The table's address, stable for the life of the process.
    static var pointer: UnsafePointer<berth_host_v1> { storage.pointer }

    private static let storage = HostFunctionTable(fill)

    /// Every entry but logging and a task's sleep and cancel check is counted first
    /// (`HostCallbackCount`): those cannot change what a screen renders.
    private static func fill(_ table: UnsafeMutablePointer<berth_host_v1>) {
        table.pointee.log = { handle, level, message in
            guard let context = PluginContext.from(handle: handle), let message else { return }
            context.logBudget.log(message, level: HostTable.logLevel(level), to: context.logger)
        }
        table.pointee.navigate = { HostCallbackCount.record(); return HostServices.navigate($0, $1, $2, $3, $4, $5) }
        table.pointee.observe_delegate = { HostCallbackCount.record(); return HostServices.observeDelegate($0, $1, $2) }
        table.pointee.send_delegate = { HostCallbackCount.record(); return HostServices.sendDelegate($0, $1, $2, $3) }
        table.pointee.context_observe = { HostCallbackCount.record(); return HostServices.contextObserve($0, $1, $2) }
        table.pointee.context_unobserve = { HostCallbackCount.record(); return HostServices.contextUnobserve($0, $1, $2) }
        table.pointee.context_send = { HostCallbackCount.record(); return HostServices.contextSend($0, $1, $2, $3, $4) }
        table.pointee.context_can_terminate = { HostCallbackCount.record(); return HostServices.contextCanTerminate($0, $1) }
        table.pointee.state_read = { HostCallbackCount.record(); return HostServices.stateRead($0, $1, $2, $3, $4, $5) }
        table.pointee.state_write = { HostCallbackCount.record(); return HostServices.stateWrite($0, $1, $2, $3, $4, $5) }
        table.pointee.persist_read = { HostCallbackCount.record(); return HostServices.persistRead($0, $1, $2, $3) }
        table.pointee.persist_write = { HostCallbackCount.record(); return HostServices.persistWrite($0, $1, $2, $3) }
        table.pointee.service_register = { HostCallbackCount.record(); return HostServices.serviceRegister($0, $1, $2) }
        table.pointee.service_resolve = { HostCallbackCount.record(); return HostServices.serviceResolve($0, $1, $2, $3) }
        table.pointee.session_begin = { HostCallbackCount.record(); return HostServices.sessionBegin($0, $1, $2) }
        table.pointee.session_end = { HostCallbackCount.record(); return HostServices.sessionEnd($0, $1) }
        table.pointee.task_start = { HostCallbackCount.record(); return HostServices.taskStart($0, $1, $2, $3) }
        table.pointee.task_cancel = { HostCallbackCount.record(); return HostServices.taskCancel($0, $1) }
        HostFunctionTable.fillTaskChecks(table)
        table.pointee.task_post = { HostCallbackCount.record(); return HostServices.taskPost($0, $1, $2) }
        table.pointee.service_call = { HostCallbackCount.record(); return HostServices.serviceCall($0, $1, $2, $3, $4) }
    }

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
