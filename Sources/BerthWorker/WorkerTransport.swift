import BerthCore
internal import CBerth

/// The worker's transport of the seam: a plugin's call goes to the host over the channel
/// as `IsolationRequest.host`, on the current stack (the plugin's thread is the one the
/// worker is serving the host on), and the reply comes back as a `HostAnswer`. During a
/// render, state is served from the render's batch; outside one a `state_write` is
/// one-way. Managed tasks run here, `log` and `task_post` are notifications, and a
/// service's instances are made and kept here while the host's scopes decide their
/// lifetime (`WorkerServices`).
struct WorkerTransport: HostTransport {
    /// Runs `body` with the worker's session; the thread rule was checked (`HostAdapter`),
    /// so this is the thread the worker serves the host on.
    private func inSession(_ body: @MainActor (WorkerSession) -> HostAnswer) -> HostAnswer {
        MainActor.assumeIsolated {
            guard let session = WorkerSession.current else { return .refused(HostRefusal(.state, "the worker is not serving a host")) }
            return body(session)
        }
    }

    /// Sends `call` for `caller` to the host; a dead host is BERTH_ERR_FAILED.
    @MainActor
    private func forward(_ call: PluginToHost, caller: UInt64, in session: WorkerSession) -> HostAnswer {
        do {
            return HostAnswer(try session.forward(.host(call, caller: caller)))
        } catch let failure {
            return .refused(HostRefusal(.failed, "\(call.name): the host did not answer: \(failure.message)"))
        }
    }

    func ask(_ call: PluginToHost, from handle: OpaquePointer) -> HostAnswer {
        let handle = MainThreadArguments(value: handle)
        return inSession { session in
            if call.isPluginWide {
                guard let member = WorkerPluginHandle.from(handle.value)?.member else { return call.whenNotOpen }
                return forward(call, caller: member, in: session)
            }
            guard let screen = WorkerScreen.from(handle.value)?.hostScreenID else { return call.whenNotOpen }
            switch call {
            case .stateRead(let key, let fingerprint):
                // During a render: from the batch that came with the request, no round trip.
                // Between renders the host's storage answers: the worker keeps no copy of it,
                // so a slot the host dropped is never read here.
                if let batch = session.renderBatches[screen] { return .bytes(batch.read(key, fingerprint: fingerprint)) }
            case .stateWrite(let slot):
                if let batch = session.renderBatches[screen] {
                    batch.write(slot)
                    return .done
                }
                session.hostCallsMade += 1
                do throws(ChannelError) {
                    try session.channel.notify(.stateWrite(screen: screen, slot: slot))
                    return .done
                } catch {
                    return .refused(HostRefusal(.failed, "state_write: the host is gone (\(error.message))"))
                }
            default:
                break
            }
            return forward(call, caller: screen, in: session)
        }
    }

    func log(_ handle: OpaquePointer?, level: Int32, message: String) {
        guard let shared = WorkerShared.current.withLock({ $0 }) else { return }
        shared.notify(.log(plugin: WorkerPluginHandle.from(handle)?.member ?? 0, level: level, message: message))
    }

    /// The declaration stays here; the host registers its key and owns the scopes.
    func register(_ declaration: ServiceDeclaration, plugin handle: OpaquePointer) -> HostAnswer {
        let arguments = MainThreadArguments(value: (handle, declaration))
        return inSession { session in
            let (handle, declaration) = arguments.value
            let call = PluginToHost.serviceRegister(key: declaration.key, kind: declaration.kind.code, service: 0, answersCalls: declaration.answersCalls)
            guard let member = WorkerPluginHandle.from(handle)?.member else { return call.whenNotOpen }
            let token = session.services.declare(declaration, by: member)
            let answer = forward(.serviceRegister(key: declaration.key, kind: declaration.kind.code, service: token, answersCalls: declaration.answersCalls),
                                 caller: member, in: session)
            if answer.refusal != nil { session.services.forget(service: token) }
            return answer
        }
    }

    /// A resolve asks the host which instance the current scope holds (made here, by a
    /// nested request, when it holds none yet), once per screen and key while that
    /// instance lives (`WorkerServices` remembers the answer).
    func resolve(_ key: String, screen handle: OpaquePointer?) -> Result<UnsafeMutableRawPointer?, HostRefusal> {
        // The host's scopes are reached over the channel, which only the thread the host is
        // calling may use.
        guard HostCall.isInside else {
            return .failure(HostRefusal(.state, "service_resolve \(key): an isolated plugin resolves on the thread the host calls it on; "
                + "resolve there and hand the pointer to your thread"))
        }
        guard let handle else { return .failure(PluginToHost.serviceResolve(key: key).notOpen) }
        let arguments = MainThreadArguments(value: handle)
        return MainActor.assumeIsolated { MainThreadArguments(value: resolveHere(key, screen: arguments.value)) }.value
    }

    @MainActor
    private func resolveHere(_ key: String, screen handle: OpaquePointer) -> Result<UnsafeMutableRawPointer?, HostRefusal> {
        guard let session = WorkerSession.current else { return .failure(HostRefusal(.state, "the worker is not serving a host")) }
        guard let screen = WorkerScreen.from(handle)?.hostScreenID else { return .failure(PluginToHost.serviceResolve(key: key).notOpen) }
        if let remembered = session.services.remembered(screen: screen, key: key) { return .success(remembered) }
        let answer = forward(.serviceResolve(key: key), caller: screen, in: session)
        guard case .instance(let instance) = answer else { return .failure(answer.refusal ?? HostRefusal(.state, "service_resolve \(key): the host named no instance")) }
        guard let made = session.services.answer(screen: screen, key: key, instance: instance) else {
            return .failure(HostRefusal(.state, "service_resolve \(key): the host named instance \(instance), which this worker does not hold"))
        }
        return .success(made)
    }

    func startTask(key: String?, descriptor: berth_task_v1, screen handle: OpaquePointer?) -> HostAnswer {
        let arguments = MainThreadArguments(value: (handle, descriptor))
        return inSession { session in
            let (handle, descriptor) = arguments.value
            guard let key, let screen = WorkerScreen.from(handle), let instance = screen.instance else {
                ManagedTask.releaseUnstarted(descriptor)
                return .refused(HostRefusal(.state, "task_start: the screen is not open"))
            }
            // Checked here because the task runs in this process; the host reports the
            // refusal, and refuses what an unchecked task would post anyway.
            if let denial = instance.plugin.grant.check(.tasks, call: "task_start") {
                ManagedTask.releaseUnstarted(descriptor)
                session.shared.notify(.denied(screen: screen.hostScreenID, capability: denial.capability.rawValue, call: denial.call))
                return .refused(HostRefusal(.denied, denial.message))
            }
            let status = instance.startTask(key: key, descriptor: descriptor)
            guard status.isOK else { return .refused(HostRefusal(HostRefusal.Code(rawValue: status.code) ?? .failed, status.message)) }
            return .done
        }
    }

    func cancelTask(key: String, screen handle: OpaquePointer?) {
        let handle = MainThreadArguments(value: handle)
        MainActor.assumeIsolated {
            guard let instance = WorkerScreen.from(handle.value)?.instance else { return }
            instance.cancelTask(key: key)
        }
    }

    /// From the task's own thread: a notification, delivered by the host at top level.
    func post(from task: ManagedTask, action: String, payload: [UInt8]) -> berth_status {
        guard let shared = WorkerShared.current.withLock({ $0 }), let serial = shared.serial(of: task) else {
            return berth_status(BERTH_ERR_CANCELLED)
        }
        shared.notify(.taskPost(screen: UInt64(UInt(bitPattern: task.screenID)), task: serial, action: action, payload: payload))
        return berth_status(BERTH_OK)
    }
}
