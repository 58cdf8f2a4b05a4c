package import CBerth

/// How a plugin's call reaches the host: `InProcessTransport` (this process's main actor,
/// through the plugin's lane hop) or `WorkerTransport` (the host across a worker's channel).
/// `HostAdapter` has checked the thread rule and the handle and converted the C arguments;
/// a transport carries the value and brings the answer back to the calling thread.
package protocol HostTransport: Sendable {
    /// Answers `call` for the screen (or, `call.isPluginWide`, the plugin) a non-NULL
    /// `handle` names, on the thread the host is calling the plugin on, which waits.
    func ask(_ call: PluginToHost, from handle: OpaquePointer) -> HostAnswer

    // What stays in the plugin's process: its log lines, its services' C function pointers
    // and its managed tasks, served where the plugin runs.

    /// A line of plugin `handle` (any thread).
    func log(_ handle: OpaquePointer?, level: Int32, message: String)
    /// Registers a service read from the plugin's `berth_service_v1` (the thread rule holds).
    func register(_ declaration: ServiceDeclaration, plugin handle: OpaquePointer) -> HostAnswer
    /// `service_resolve` of `key` (any thread in process; a worker checks its own rule).
    func resolve(_ key: String, screen handle: OpaquePointer?) -> Result<UnsafeMutableRawPointer?, HostRefusal>
    /// Starts a managed task (the thread rule holds); releases `descriptor` when it refuses
    /// ("task_start: the screen is not open" for a NULL key or handle).
    func startTask(key: String?, descriptor: berth_task_v1, screen handle: OpaquePointer?) -> HostAnswer
    func cancelTask(key: String, screen handle: OpaquePointer?)
    /// A running task's `task_post`, from its own thread.
    func post(from task: ManagedTask, action: String, payload: [UInt8]) -> berth_status
}

/// The one C adapter of `berth_host_v1`: each function checks the thread rule (berth.h:
/// main-thread functions only during a call from the host), looks at the handle, turns the
/// C arguments into a `PluginToHost`, hands it to the process's transport, and writes the
/// `HostAnswer` into the plugin's out-parameters, sinks and error buffer. Adding a host
/// function is its line in `fill`, its case in `PluginToHost` and in
/// `HostCallbackHandler.answer`, and berth.h.
package enum HostAdapter {
    package typealias ErrorPointer = UnsafeMutablePointer<berth_error>?

    /// The process's transport, set once before any plugin is loaded (the host's
    /// `HostTable.inProcess`, a worker's `IsolationWorker.run`); then only read.
    package nonisolated(unsafe) private(set) static var transport: any HostTransport = UnsetTransport()

    /// Called once per process, before it loads a plugin.
    package static func use(_ transport: any HostTransport) {
        self.transport = transport
    }

    /// The table handed to every plugin in this process; its entries but logging and a
    /// task's sleep and cancel check are counted (`HostCallbackCount`): those cannot change
    /// what a screen renders.
    package static func fill(_ table: UnsafeMutablePointer<berth_host_v1>) {
        table.pointee.log = { plugin, level, message in
            guard let message else { return }
            HostAdapter.transport.log(plugin, level: level, message: String(cString: message))
        }
        table.pointee.navigate = { screen, kind, route, argument, outID, error in
            HostAdapter.ask("navigate", screen, error, { .navigate(kind: kind, route: route.map { String(cString: $0) }, argument: argument.copied) }) { answer in
                if case .screen(let id?) = answer { outID?.pointee = id }
            }
        }
        table.pointee.observe_delegate = { screen, child, error in HostAdapter.ask("observe_delegate", screen, error, { .observeDelegate(child: child) }) }
        table.pointee.send_delegate = { screen, action, payload, error in
            HostAdapter.ask("send_delegate", screen, error, { .sendDelegate(action: try HostAdapter.required(action, "send_delegate: action"), payload: payload.copied) })
        }
        table.pointee.context_observe = { screen, type, error in
            HostAdapter.ask("context_observe", screen, error, { .contextObserve(type: type.map { String(cString: $0) } ?? "") })
        }
        table.pointee.context_unobserve = { screen, type, error in
            HostAdapter.ask("context_unobserve", screen, error, closed: .done, { type.map { .contextUnobserve(type: String(cString: $0)) } })
        }
        table.pointee.context_send = { screen, type, payload, mode, error in
            HostAdapter.ask("context_send", screen, error, { .contextSend(type: type.map { String(cString: $0) } ?? "", payload: payload.copied, mode: mode) })
        }
        table.pointee.context_can_terminate = { screen, type in
            // A boolean answer: off the host's thread, or refused, it is "no".
            HostCallbackCount.record()
            guard HostCall.isInside, let screen, let type else { return 0 }
            return HostAdapter.transport.ask(.contextCanTerminate(type: String(cString: type)), from: screen) == .flag(true) ? 1 : 0
        }
        table.pointee.state_read = { screen, identity, index, fingerprint, out, error in
            HostAdapter.ask("state_read", screen, error, { .stateRead(key: IsolationSlotKey(identity: try HostAdapter.required(identity, "state_read: identity"), index: index),
                                                        fingerprint: fingerprint) }, sink: out)
        }
        table.pointee.state_write = { screen, identity, index, fingerprint, value, error in
            HostAdapter.ask("state_write", screen, error, {
                .stateWrite(slot: IsolationStateSlot(identity: try HostAdapter.required(identity, "state_write: identity"), index: index, fingerprint: fingerprint,
                                                     bytes: value.copied))
            })
        }
        table.pointee.persist_read = { screen, key, out, error in
            HostAdapter.ask("persist_read", screen, error, { .persistRead(key: try HostAdapter.required(key, "persist_read: key")) }, sink: out)
        }
        table.pointee.persist_write = { screen, key, value, error in
            HostAdapter.ask("persist_write", screen, error, { .persistWrite(key: try HostAdapter.required(key, "persist_write: key"), value: value.copied) })
        }
        table.pointee.session_begin = { plugin, id, error in
            HostAdapter.ask(plugin: plugin, error, .sessionBegin(id: id.map { String(cString: $0) } ?? ""))
        }
        table.pointee.session_end = { plugin, error in HostAdapter.ask(plugin: plugin, error, .sessionEnd) }
        table.pointee.service_register = { HostAdapter.serviceRegister($0, $1, $2) }
        table.pointee.service_resolve = { HostAdapter.serviceResolve($0, $1, $2, $3) }
        table.pointee.service_call = { HostAdapter.serviceCall($0, $1, $2, $3, $4) }
        table.pointee.task_start = { HostAdapter.taskStart($0, $1, $2, $3) }
        table.pointee.task_cancel = { screen, key in
            HostCallbackCount.record()
            guard HostCall.isInside else { return HostAdapter.threadRule(nil) }
            if let key { HostAdapter.transport.cancelTask(key: String(cString: key), screen: screen) }
            return berth_status(BERTH_OK)
        }
        HostFunctionTable.fillTaskChecks(table)
        table.pointee.task_post = { task, action, payload in
            HostCallbackCount.record()
            guard let task = ManagedTask.from(handle: task), let action else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
            guard !task.isCancelled else { return berth_status(BERTH_ERR_CANCELLED) }
            return HostAdapter.transport.post(from: task, action: String(cString: action), payload: payload.copied)
        }
    }

    // MARK: The path of a call

    package static func fill(_ error: ErrorPointer, _ code: Int, _ message: String) -> berth_status {
        BerthErrorBuffer.fill(error, code: berth_status(code), message: message)
    }

    /// A plugin that breaks the thread rule gets an error, not a crashed host.
    package static func threadRule(_ error: ErrorPointer) -> berth_status {
        fill(error, BERTH_ERR_STATE, "this host function may only be called on the main thread, during a call from the host")
    }

    /// Writes `answer` into the plugin's error buffer and returns its status.
    package static func status(_ answer: HostAnswer, _ error: ErrorPointer) -> berth_status {
        switch answer {
        case .refused(let refusal): BerthErrorBuffer.fill(error, code: berth_status(refusal.code.rawValue), message: refusal.message)
        case .bytes(nil): berth_status(BERTH_ERR_NOT_FOUND)
        default: berth_status(BERTH_OK)
        }
    }

    /// A C string argument the call requires: "persist_write: key is NULL" when missing.
    package static func required(_ pointer: UnsafePointer<CChar>?, _ what: String) throws(HostRefusal) -> String {
        guard let pointer else { throw HostRefusal(.invalidArgument, "\(what) is NULL") }
        return String(cString: pointer)
    }

    /// A screen's call `name`: the thread rule, the handle (unknown: `closed`, by default
    /// "NAME: the screen handle is not an open screen"), then `make` (nil: nothing to ask,
    /// as `context_unobserve` of a NULL type), then the transport; `use` reads the answer's
    /// out-parameter, `sink` takes its bytes.
    private static func ask(
        _ name: String, _ screen: OpaquePointer?, _ error: ErrorPointer, closed: HostAnswer? = nil, _ make: () throws -> PluginToHost?,
        sink: UnsafePointer<berth_sink>? = nil, _ use: (HostAnswer) -> Void = { _ in }
    ) -> berth_status {
        HostCallbackCount.record()
        guard HostCall.isInside else { return threadRule(error) }
        guard let screen else { return status(closed ?? .refused(HostRefusal(.notFound, "\(name): the screen handle is not an open screen")), error) }
        let call: PluginToHost
        do {
            guard let made = try make() else { return berth_status(BERTH_OK) }
            call = made
        } catch let refusal as HostRefusal {
            return status(.refused(refusal), error)
        } catch let other {
            return status(.refused(HostRefusal(.invalidArgument, "\(name): \(other)")), error)
        }
        let answer = transport.ask(call, from: screen)
        if case .bytes(let bytes?) = answer { return SinkBuffer.write(bytes, to: sink) }
        use(answer)
        return status(answer, error)
    }

    /// A plugin-wide call (sessions): the thread rule, the plugin handle, the transport.
    private static func ask(plugin: OpaquePointer?, _ error: ErrorPointer, _ call: PluginToHost) -> berth_status {
        HostCallbackCount.record()
        guard HostCall.isInside else { return threadRule(error) }
        guard let plugin else { return status(call.whenNotOpen, error) }
        return status(transport.ask(call, from: plugin), error)
    }

    // MARK: Services and managed tasks

    private static func serviceRegister(_ plugin: OpaquePointer?, _ service: UnsafePointer<berth_service_v1>?, _ error: ErrorPointer) -> berth_status {
        HostCallbackCount.record()
        guard HostCall.isInside else { return threadRule(error) }
        guard let plugin else { return status(PluginToHost.serviceRegister(key: "", kind: 0, service: 0, answersCalls: false).whenNotOpen, error) }
        switch ServiceDeclaration.read(service) {
        case .success(let declaration): return status(transport.register(declaration, plugin: plugin), error)
        case .failure(let refusal): return status(.refused(refusal), error)
        }
    }

    private static func serviceResolve(_ screen: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                       _ error: ErrorPointer) -> berth_status {
        HostCallbackCount.record()
        guard let key else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_resolve: key is NULL") }
        switch transport.resolve(String(cString: key), screen: screen) {
        case .success(let pointer):
            out?.pointee = pointer
            return berth_status(BERTH_OK)
        case .failure(let refusal):
            return status(.refused(refusal), error)
        }
    }

    /// `service_call`: the call waits on the plugin's thread for the provider's reply.
    private static func serviceCall(_ screen: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ request: berth_bytes, _ reply: UnsafePointer<berth_sink>?,
                                    _ error: ErrorPointer) -> berth_status {
        HostCallbackCount.record()
        guard let key else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_call: key is NULL") }
        let name = String(cString: key)
        guard HostCall.isInside else {
            return fill(error, BERTH_ERR_STATE, "service_call \(name): call it on the thread the host calls your plugin on")
        }
        let call = PluginToHost.serviceCall(key: name, request: request.copied)
        guard let screen else { return status(call.whenNotOpen, error) }
        let answer = transport.ask(call, from: screen)
        if case .bytes(let bytes?) = answer { return SinkBuffer.write(bytes, to: reply) }
        return status(answer, error)
    }

    private static func taskStart(_ screen: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ task: UnsafePointer<berth_task_v1>?,
                                  _ error: ErrorPointer) -> berth_status {
        HostCallbackCount.record()
        guard HostCall.isInside else { return threadRule(error) }
        guard let task else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "task_start: task is NULL") }
        var descriptor = berth_task_v1()
        withUnsafeMutableBytes(of: &descriptor) { target in
            let size = min(Int(task.pointee.struct_size), target.count)
            target.copyMemory(from: UnsafeRawBufferPointer(start: task, count: size))
        }
        return status(transport.startTask(key: key.map { String(cString: $0) }, descriptor: descriptor, screen: screen), error)
    }
}

/// The transport before the process chose one: every call is refused (no plugin is loaded
/// yet, so none can call).
private struct UnsetTransport: HostTransport {
    private static let refusal = HostRefusal(.unavailable, "no host transport is set in this process")

    func ask(_ call: PluginToHost, from handle: OpaquePointer) -> HostAnswer { .refused(Self.refusal) }
    func log(_ handle: OpaquePointer?, level: Int32, message: String) {}
    func register(_ declaration: ServiceDeclaration, plugin handle: OpaquePointer) -> HostAnswer { .refused(Self.refusal) }
    func resolve(_ key: String, screen handle: OpaquePointer?) -> Result<UnsafeMutableRawPointer?, HostRefusal> { .failure(Self.refusal) }
    func startTask(key: String?, descriptor: berth_task_v1, screen handle: OpaquePointer?) -> HostAnswer { .refused(Self.refusal) }
    func cancelTask(key: String, screen handle: OpaquePointer?) {}
    func post(from task: ManagedTask, action: String, payload: [UInt8]) -> berth_status { berth_status(BERTH_ERR_STATE) }
}

extension berth_bytes {
    /// A copy of the borrowed bytes.
    package var copied: [UInt8] {
        guard let data, length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(length)))
    }
}
