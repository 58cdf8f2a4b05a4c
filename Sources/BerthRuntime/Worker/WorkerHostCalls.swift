internal import CBerth

/// The worker's host functions that need more than a forward: main-thread checks as
/// in-process (`HostServices.onMainThread`), replies written into the plugin's sinks and
/// out-parameters, state served from a render's batch, and managed tasks.
enum WorkerHostCalls {
    typealias ErrorPointer = UnsafeMutablePointer<berth_error>?

    /// Runs a main-thread host function in the worker. Like in-process, a call from any
    /// thread but the one the worker is calling the plugin from gets BERTH_ERR_STATE.
    static func onMainThread<Arguments>(
        _ arguments: Arguments, error: ErrorPointer, _ body: @MainActor (Arguments, WorkerSession) -> berth_status
    ) -> berth_status {
        guard HostCall.isInside else {
            return HostServices.fill(error, BERTH_ERR_STATE, "this host function may only be called on the main thread, during a call from the host")
        }
        let box = MainThreadArguments(value: (arguments, error))
        return MainActor.assumeIsolated {
            guard let session = WorkerSession.current else {
                return HostServices.fill(box.value.1, BERTH_ERR_STATE, "the worker is not serving a host")
            }
            return body(box.value.0, session)
        }
    }

    /// Sends `request` to the host on the current stack; a dead host becomes BERTH_ERR_FAILED.
    @MainActor
    static func forward(_ request: IsolationRequest, in session: WorkerSession, error: ErrorPointer) -> IsolationReply? {
        do {
            return try session.forward(request)
        } catch let failure {
            _ = HostServices.fill(error, BERTH_ERR_FAILED, "\(request.name): the host did not answer: \(failure.message)")
            return nil
        }
    }

    /// Writes a failed status into the plugin's error buffer; returns the code.
    static func finish(_ status: IsolationStatus, _ error: ErrorPointer) -> berth_status {
        guard !status.isOK else { return berth_status(BERTH_OK) }
        return BerthErrorBuffer.fill(error, code: status.code, message: status.message)
    }

    /// A screen function whose reply is only a status.
    static func forwardStatus(
        _ handle: OpaquePointer?, _ error: ErrorPointer, _ name: String, _ request: @escaping (UInt64) -> IsolationRequest
    ) -> berth_status {
        onMainThread((handle, error, request), error: error) { arguments, session in
            let (handle, error, request) = arguments
            guard let screen = WorkerScreen.from(handle) else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "\(name): the screen handle is not an open screen")
            }
            guard let reply = forward(request(screen.hostScreenID), in: session, error: error) else { return berth_status(BERTH_ERR_FAILED) }
            return finish(reply.status, error)
        }
    }

    /// A plugin-wide function (sessions) whose reply is only a status; the request names the
    /// calling plugin by its member number.
    static func forwardPluginStatus(
        _ plugin: OpaquePointer?, _ error: ErrorPointer, _ name: String, _ request: @escaping (UInt64) -> IsolationRequest
    ) -> berth_status {
        onMainThread((plugin, error, request), error: error) { arguments, session in
            let (plugin, error, request) = arguments
            guard let member = WorkerPluginHandle.from(plugin)?.member else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "\(name): the plugin handle is not a loaded plugin")
            }
            guard let reply = forward(request(member), in: session, error: error) else { return berth_status(BERTH_ERR_FAILED) }
            return finish(reply.status, error)
        }
    }

    static func navigate(
        _ handle: OpaquePointer?, _ kind: Int32, _ route: UnsafePointer<CChar>?, _ argument: berth_bytes,
        _ outID: UnsafeMutablePointer<UInt64>?, _ error: ErrorPointer
    ) -> berth_status {
        onMainThread((handle, kind, route, argument, outID, error), error: error) { arguments, session in
            let (handle, kind, route, argument, outID, error) = arguments
            guard let screen = WorkerScreen.from(handle) else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "navigate: the screen handle is not an open screen")
            }
            let request = IsolationRequest.navigate(screen: screen.hostScreenID, kind: kind, route: route.map { String(cString: $0) },
                                                    argument: argument.copied)
            guard let reply = forward(request, in: session, error: error) else { return berth_status(BERTH_ERR_FAILED) }
            if case .navigated(let status, let id) = reply, status.isOK { outID?.pointee = id }
            return finish(reply.status, error)
        }
    }

    static func contextCanTerminate(_ handle: OpaquePointer?, _ type: UnsafePointer<CChar>?) -> Int32 {
        // A boolean answer: off the main thread it is "no", never the refusal status.
        guard HostCall.isInside else { return 0 }
        return onMainThread((handle, type), error: nil) { arguments, session in
            let (handle, type) = arguments
            guard let type, let screen = WorkerScreen.from(handle) else { return 0 }
            let request = IsolationRequest.contextCanTerminate(screen: screen.hostScreenID, type: String(cString: type))
            guard case .flag(let answer) = forward(request, in: session, error: nil) else { return 0 }
            return answer ? 1 : 0
        }
    }

    // MARK: State

    static func stateRead(
        _ handle: OpaquePointer?, _ identity: UnsafePointer<CChar>?, _ index: UInt32, _ fingerprint: UInt64,
        _ out: UnsafePointer<berth_sink>?, _ error: ErrorPointer
    ) -> berth_status {
        onMainThread((handle, identity, index, fingerprint, out, error), error: error) { arguments, session in
            let (handle, identity, index, fingerprint, out, error) = arguments
            guard let screen = WorkerScreen.from(handle) else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "state_read: the screen handle is not an open screen")
            }
            guard let identity else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "state_read: identity is NULL") }
            let key = IsolationSlotKey(identity: String(cString: identity), index: index)
            // During a render: from the batch that came with the request, no round trip.
            if let batch = session.renderBatches[screen.hostScreenID] {
                guard let bytes = batch.read(key, fingerprint: fingerprint) else { return berth_status(BERTH_ERR_NOT_FOUND) }
                return SinkBuffer.write(bytes, to: out)
            }
            // Between renders the host's storage answers: the worker keeps no copy of it, so a
            // slot the host dropped (render-pass GC, a branch no longer taken, a release) is
            // never read here.
            let request = IsolationRequest.stateRead(screen: screen.hostScreenID, key: key, fingerprint: fingerprint)
            guard let reply = forward(request, in: session, error: error) else { return berth_status(BERTH_ERR_FAILED) }
            guard case .bytes(let status, let bytes) = reply, status.isOK else { return finish(reply.status, error) }
            return SinkBuffer.write(bytes, to: out)
        }
    }

    static func stateWrite(
        _ handle: OpaquePointer?, _ identity: UnsafePointer<CChar>?, _ index: UInt32, _ fingerprint: UInt64,
        _ value: berth_bytes, _ error: ErrorPointer
    ) -> berth_status {
        onMainThread((handle, identity, index, fingerprint, value, error), error: error) { arguments, session in
            let (handle, identity, index, fingerprint, value, error) = arguments
            guard let screen = WorkerScreen.from(handle) else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "state_write: the screen handle is not an open screen")
            }
            guard let identity else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "state_write: identity is NULL") }
            let slot = IsolationStateSlot(identity: String(cString: identity), index: index, fingerprint: fingerprint, bytes: value.copied)
            if let batch = session.renderBatches[screen.hostScreenID] {
                batch.write(slot)
                return berth_status(BERTH_OK)
            }
            session.hostCallsMade += 1
            do throws(ChannelError) {
                try session.channel.notify(.stateWrite(screen: screen.hostScreenID, slot: slot))
                return berth_status(BERTH_OK)
            } catch let failure {
                return HostServices.fill(error, BERTH_ERR_FAILED, "state_write: the host is gone (\(failure.message))")
            }
        }
    }

    static func persistRead(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafePointer<berth_sink>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, key, out, error), error: error) { arguments, session in
            let (handle, key, out, error) = arguments
            guard let screen = WorkerScreen.from(handle) else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "persist_read: the screen handle is not an open screen")
            }
            guard let key else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "persist_read: key is NULL") }
            let request = IsolationRequest.persistRead(screen: screen.hostScreenID, key: String(cString: key))
            guard let reply = forward(request, in: session, error: error) else { return berth_status(BERTH_ERR_FAILED) }
            guard case .bytes(let status, let bytes) = reply, status.isOK else { return finish(reply.status, error) }
            return SinkBuffer.write(bytes, to: out)
        }
    }

    // MARK: Managed tasks

    static func taskStart(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ task: UnsafePointer<berth_task_v1>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, key, task, error), error: error) { arguments, session in
            let (handle, key, task, error) = arguments
            guard let task else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "task_start: task is NULL") }
            var descriptor = berth_task_v1()
            withUnsafeMutableBytes(of: &descriptor) { target in
                let size = min(Int(task.pointee.struct_size), target.count)
                target.copyMemory(from: UnsafeRawBufferPointer(start: task, count: size))
            }
            guard let key, let screen = WorkerScreen.from(handle), let instance = screen.instance else {
                ManagedTask.releaseUnstarted(descriptor)
                return HostServices.fill(error, BERTH_ERR_STATE, "task_start: the screen is not open")
            }
            // Checked here because the task runs in this process; the host reports the
            // refusal, and refuses what an unchecked task would post anyway.
            if let denial = instance.plugin.grant.check(.tasks, call: "task_start") {
                ManagedTask.releaseUnstarted(descriptor)
                session.shared.notify(.denied(screen: screen.hostScreenID, capability: denial.capability.rawValue, call: denial.call))
                return HostServices.fill(error, Int(BERTH_ERR_DENIED), denial.message)
            }
            return finish(instance.startTask(key: String(cString: key), descriptor: descriptor), error)
        }
    }

    static func taskCancel(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> berth_status {
        onMainThread((handle, key), error: nil) { arguments, _ in
            let (handle, key) = arguments
            guard let key, let instance = WorkerScreen.from(handle)?.instance else { return berth_status(BERTH_OK) }
            instance.cancelTask(key: String(cString: key))
            return berth_status(BERTH_OK)
        }
    }

    /// From the task's own thread: a notification, delivered by the host at top level.
    static func taskPost(_ handle: OpaquePointer?, _ action: UnsafePointer<CChar>?, _ payload: berth_bytes) -> berth_status {
        guard let task = ManagedTask.from(handle: handle), let action else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
        guard !task.isCancelled else { return berth_status(BERTH_ERR_CANCELLED) }
        guard let shared = WorkerShared.current.withLock({ $0 }), let serial = shared.serial(of: task) else {
            return berth_status(BERTH_ERR_CANCELLED)
        }
        shared.notify(.taskPost(screen: UInt64(UInt(bitPattern: task.screenID)), task: serial, action: String(cString: action),
                                payload: payload.copied))
        return berth_status(BERTH_OK)
    }
}
