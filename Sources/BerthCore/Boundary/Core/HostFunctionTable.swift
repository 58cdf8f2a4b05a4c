package import CBerth

/// The `berth_host_v1` table every plugin in this process receives (in the host, and in
/// a worker): one table, allocated once, never freed (plugins may keep the pointer until
/// they unload). Its functions are `HostAdapter`'s.
package enum HostTable {
    /// The table's address, stable for the life of the process.
    package static var pointer: UnsafePointer<berth_host_v1> { storage.pointer }

    private static let storage = HostFunctionTable(HostAdapter.fill)
}

/// A `berth_host_v1` allocated once and never freed, its header set and its functions
/// filled by its owner: the host's table in process, the worker's in a worker. Safe to
/// share: the table is written once, in the initializer (run once by Swift's lazy global
/// initialization of the owner's `static let`), then only read.
package struct HostFunctionTable: @unchecked Sendable {
    package let pointer: UnsafePointer<berth_host_v1>

    package init(_ fill: (UnsafeMutablePointer<berth_host_v1>) -> Void) {
        let table = UnsafeMutablePointer<berth_host_v1>.allocate(capacity: 1)
        table.initialize(to: berth_host_v1())
        table.pointee.struct_size = UInt32(MemoryLayout<berth_host_v1>.size)
        table.pointee.abi_version = HostABI.version.packed
        fill(table)
        pointer = UnsafePointer(table)
    }

    /// `task_is_cancelled` and `task_sleep`: a managed task asks its own handle, from its
    /// thread, wherever the task runs.
    package static func fillTaskChecks(_ table: UnsafeMutablePointer<berth_host_v1>) {
        table.pointee.task_is_cancelled = { task in (ManagedTask.from(handle: task)?.isCancelled ?? true) ? 1 : 0 }
        table.pointee.task_sleep = { task, milliseconds in
            guard let task = ManagedTask.from(handle: task) else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
            return berth_status(task.sleep(milliseconds: milliseconds) ? BERTH_OK : BERTH_ERR_CANCELLED)
        }
    }
}

/// Reading and writing `berth_error` buffers.
package enum BerthErrorBuffer {
    /// Writes `message` (truncated to fit) and `code` into a caller-provided error.
    @discardableResult
    package static func fill(_ error: UnsafeMutablePointer<berth_error>?, code: berth_status, message: String) -> berth_status {
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
    package static func make() -> berth_error {
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        return error
    }

    /// The message a plugin wrote, or a fallback naming the status.
    package static func message(of error: berth_error, status: berth_status) -> String {
        var copy = error
        let text = withUnsafeBytes(of: &copy.message) { buffer -> String in
            let bytes = buffer.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        return text.isEmpty ? "failed with status \(status) and no message" : text
    }
}
