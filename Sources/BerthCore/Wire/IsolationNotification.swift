/// A one-way message: no reply, sendable from any thread. All go worker → host today.
package enum IsolationNotification: Sendable, Equatable {
    /// `berth_host_v1.log`: a line attributed to plugin `plugin` (its hello's `member`; 0
    /// for a NULL handle), from any thread.
    case log(plugin: UInt64 = 1, level: Int32, message: String)
    /// A managed task started in the worker. `task` is unique for the worker's life.
    case taskStarted(screen: UInt64, key: String, task: UInt64)
    /// A managed task's body returned; `cancelled` when it was asked to stop first.
    case taskFinished(screen: UInt64, key: String, task: UInt64, cancelled: Bool)
    /// `task_post`: deliver `action` to the task's screen as if sent by the user (the host
    /// drops it when the screen is no longer active, or when `task` has finished since).
    case taskPost(screen: UInt64, task: UInt64, action: String, payload: [UInt8])
    /// `state_write` outside a render. One-way: the frame is ordered before the reply of the
    /// call it was made in, so the host stores it before that call returns, one round trip
    /// fewer per `@State` change in an action. The worker checks the handle itself; the host
    /// drops a write for a screen that closed meanwhile.
    case stateWrite(screen: UInt64, slot: IsolationStateSlot)
    /// The worker refused one of the plugin's calls it serves itself (`task_start`) for
    /// want of `capability`; the host checks its own grant and reports it.
    case denied(screen: UInt64, capability: String, call: String)
    /// The worker's system-call filter refused `call` ("execve", "socket(AF_UNIX)") with
    /// EPERM, `count` times so far (sent at 1, 10, 100, …; `RefusedCallReporter`).
    case refusedSystemCall(call: String, count: UInt64)

    package var op: UInt16 {
        switch self {
        case .log: 200
        case .taskStarted: 201
        case .taskFinished: 202
        case .taskPost: 203
        case .denied: 204
        case .stateWrite: 205
        case .refusedSystemCall: 206
        }
    }

    package func write(to writer: inout WireWriter) {
        switch self {
        case .log(let plugin, let level, let message):
            writer.u64(plugin); writer.i32(level); writer.string(message)
        case .taskStarted(let screen, let key, let task):
            writer.u64(screen); writer.string(key); writer.u64(task)
        case .taskFinished(let screen, let key, let task, let cancelled):
            writer.u64(screen); writer.string(key); writer.u64(task); writer.bool(cancelled)
        case .taskPost(let screen, let task, let action, let payload):
            writer.u64(screen); writer.u64(task); writer.string(action); writer.data(payload)
        case .stateWrite(let screen, let slot):
            writer.u64(screen); slot.write(to: &writer)
        case .denied(let screen, let capability, let call):
            writer.u64(screen); writer.string(capability); writer.string(call)
        case .refusedSystemCall(let call, let count):
            writer.string(call); writer.u64(count)
        }
    }

    /// Decodes a notification; nil for an op this side does not know (ignored).
    package static func read(op: UInt16, from reader: inout WireReader) throws(WireDecodingError) -> IsolationNotification? {
        let notification: IsolationNotification
        switch op {
        case 200: notification = .log(plugin: try reader.u64(), level: try reader.i32(), message: try reader.string())
        case 201: notification = .taskStarted(screen: try reader.u64(), key: try reader.string(), task: try reader.u64())
        case 202:
            notification = .taskFinished(screen: try reader.u64(), key: try reader.string(), task: try reader.u64(), cancelled: try reader.bool())
        case 203: notification = .taskPost(screen: try reader.u64(), task: try reader.u64(), action: try reader.string(), payload: try reader.data())
        case 204: notification = .denied(screen: try reader.u64(), capability: try reader.string(), call: try reader.string())
        case 205: notification = .stateWrite(screen: try reader.u64(), slot: try IsolationStateSlot.read(from: &reader))
        case 206: notification = .refusedSystemCall(call: try reader.string(), count: try reader.u64())
        default: return nil
        }
        try reader.finish()
        return notification
    }
}
