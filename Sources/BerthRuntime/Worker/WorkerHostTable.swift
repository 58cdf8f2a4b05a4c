internal import CBerth

/// The `berth_host_v1` a worker hands its plugin: the same table as in-process, but each
/// main-thread function forwards to the host over the channel (on the current stack),
/// state reads during a render are served from the render's slot batch, managed tasks run
/// in the worker, `log` and `task_post` are notifications, and a service's instances are
/// made and kept here while the host's scopes decide their lifetime (`WorkerServices`).
enum WorkerHostTable {
    /// The table's address, stable for the life of the process.
    static var pointer: UnsafePointer<berth_host_v1> { storage.pointer }

    private static let storage = HostFunctionTable(fill)

    private static func fill(_ table: UnsafeMutablePointer<berth_host_v1>) {
        table.pointee.log = { plugin, level, message in
            guard let message, let shared = WorkerShared.current.withLock({ $0 }) else { return }
            shared.notify(.log(plugin: WorkerPluginHandle.from(plugin)?.member ?? 0, level: level, message: String(cString: message)))
        }
        table.pointee.navigate = { WorkerHostCalls.navigate($0, $1, $2, $3, $4, $5) }
        table.pointee.observe_delegate = { screen, child, error in
            WorkerHostCalls.forwardStatus(screen, error, "observe_delegate") { .observeDelegate(screen: $0, child: child) }
        }
        table.pointee.send_delegate = { screen, action, payload, error in
            guard let action else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "send_delegate: action is NULL") }
            let name = String(cString: action)
            let bytes = payload.copied
            return WorkerHostCalls.forwardStatus(screen, error, "send_delegate") { .sendDelegate(screen: $0, action: name, payload: bytes) }
        }
        table.pointee.context_observe = { screen, type, error in
            let name = type.map { String(cString: $0) } ?? ""
            return WorkerHostCalls.forwardStatus(screen, error, "context_observe") { .contextObserve(screen: $0, type: name) }
        }
        table.pointee.context_unobserve = { screen, type, error in
            guard let type else { return berth_status(BERTH_OK) }
            let name = String(cString: type)
            return WorkerHostCalls.forwardStatus(screen, error, "context_unobserve") { .contextUnobserve(screen: $0, type: name) }
        }
        table.pointee.context_send = { screen, type, payload, mode, error in
            let name = type.map { String(cString: $0) } ?? ""
            let bytes = payload.copied
            return WorkerHostCalls.forwardStatus(screen, error, "context_send") { .contextSend(screen: $0, type: name, payload: bytes, mode: mode) }
        }
        table.pointee.context_can_terminate = { WorkerHostCalls.contextCanTerminate($0, $1) }
        table.pointee.state_read = { WorkerHostCalls.stateRead($0, $1, $2, $3, $4, $5) }
        table.pointee.state_write = { WorkerHostCalls.stateWrite($0, $1, $2, $3, $4, $5) }
        table.pointee.persist_read = { WorkerHostCalls.persistRead($0, $1, $2, $3) }
        table.pointee.persist_write = { screen, key, value, error in
            guard let key else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "persist_write: key is NULL") }
            let name = String(cString: key)
            let bytes = value.copied
            return WorkerHostCalls.forwardStatus(screen, error, "persist_write") { .persistWrite(screen: $0, key: name, value: bytes) }
        }
        table.pointee.service_register = { WorkerHostCalls.serviceRegister($0, $1, $2) }
        table.pointee.service_resolve = { WorkerHostCalls.serviceResolve($0, $1, $2, $3) }
        table.pointee.session_begin = { plugin, session, error in
            guard let session else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "session_begin: session_id is NULL") }
            let id = String(cString: session)
            return WorkerHostCalls.forwardPluginStatus(plugin, error, "session_begin") { .sessionBegin(plugin: $0, id: id) }
        }
        table.pointee.session_end = { plugin, error in
            WorkerHostCalls.forwardPluginStatus(plugin, error, "session_end") { .sessionEnd(plugin: $0) }
        }
        table.pointee.task_start = { WorkerHostCalls.taskStart($0, $1, $2, $3) }
        table.pointee.task_cancel = { WorkerHostCalls.taskCancel($0, $1) }
        HostFunctionTable.fillTaskChecks(table)
        table.pointee.task_post = { WorkerHostCalls.taskPost($0, $1, $2) }
        table.pointee.service_call = { WorkerHostCalls.serviceCall($0, $1, $2, $3, $4) }
    }
}
