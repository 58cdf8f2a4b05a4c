@_spi(Engine) import BerthCore
internal import CBerth

/// The in-process transport of the seam: a plugin's call, made on its lane, is answered by
/// `HostCallbackHandler` on the main actor while the lane waits (`LaneHop`); a contract
/// call waits on the lane itself, and a log line, a resolve and a `persist_read` about the
/// call's own screen are served on the calling thread. Services and managed tasks keep the plugin's C function
/// pointers, so they are registered and started here (BerthHost+Scopes, Interactor).
struct InProcessTransport: HostTransport {
    func ask(_ call: PluginToHost, from handle: OpaquePointer) -> HostAnswer {
        if case .serviceCall(let key, let request) = call, let screen = ScreenHandle.from(handle) {
            return HostCallbackHandler.callService(key, request: request, from: screen, consumer: ServiceConsumer(grant: screen.grant, place: .host))
        }
        if case .persistRead(let key) = call, let context = LaneCallContext.current, let screen = ScreenHandle.from(handle),
           let answer = HostCallbackHandler.persistReadOnLane(screen, key: key, during: context) {
            // A render's `@Persisted` read needs no main actor (P14 in Docs/benchmarks.md).
            return answer.map { HostAnswer.bytes($0) }.answer
        }
        let handle = MainThreadArguments(value: handle)
        return LaneHop.toMain {
            guard call.isPluginWide else { return HostCallbackHandler().answer(call, screen: ScreenHandle.from(handle.value)) }
            guard let context = PluginContext.from(handle: handle.value), let host = context.host else { return call.whenNotOpen }
            return HostCallbackHandler().answer(call, plugin: context.grant, host: host)
        }
    }

    func log(_ handle: OpaquePointer?, level: Int32, message: String) {
        guard let context = PluginContext.from(handle: handle) else { return }
        context.logBudget.log(message, level: HostTable.logLevel(level), to: context.logger)
    }

    func register(_ declaration: ServiceDeclaration, plugin handle: OpaquePointer) -> HostAnswer {
        let arguments = MainThreadArguments(value: (handle, declaration))
        return LaneHop.toMain {
            let (handle, declaration) = arguments.value
            guard let context = PluginContext.from(handle: handle), let host = context.host else {
                return PluginToHost.serviceRegister(key: declaration.key, kind: 0, service: 0, answersCalls: false).whenNotOpen
            }
            let registration = declaration.answersCalls
                ? Self.contractRegistration(declaration, context: context)
                : ScopeRegistry.Registration(
                    key: declaration.key, kind: declaration.kind, plugin: context.pluginID, generation: context.generation,
                    providerGrant: context.grant, make: .sync { .pointer(try declaration.make()) },
                    release: { value in
                        if let pointer = value.pointer { declaration.release(pointer) }
                    }
                )
            return HostAnswer(HostCallbackHandler().serviceRegister(registration, host: host))
        }
    }

    /// A contract's registration: its instances answer calls on the plugin's lane, from
    /// consumers in any process.
    private static func contractRegistration(_ declaration: ServiceDeclaration, context: PluginContext) -> ScopeRegistry.Registration {
        let provider = "\(context.pluginID)#\(context.generation)"
        let lane = context.lane
        return ScopeRegistry.Registration(
            key: declaration.key, kind: declaration.kind, plugin: context.pluginID, generation: context.generation,
            providerGrant: context.grant,
            call: { instance, request, _ in
                guard let lane else { return .failed(ContractCalls.unavailable(declaration.key, "its provider \(provider) was loaded for a trial only")) }
                return ContractCalls.route(to: lane, provider: provider, contract: declaration.key) {
                    ContractCalls.invoke(instance, key: declaration.key, request: request)
                }
            },
            make: .sync { .object(ContractInstance(pointer: try declaration.make(), declaration: declaration)) },
            release: { value in
                if case .object(let object) = value, let contract = object as? ContractInstance { contract.release() }
            }
        )
    }

    /// Thread: any. The screen scope comes from the handle; the request scope is the one of
    /// the call the host is making (a plugin's own thread has none).
    func resolve(_ key: String, screen handle: OpaquePointer?) -> Result<UnsafeMutableRawPointer?, HostRefusal> {
        guard let screen = ScreenHandle.from(handle) else { return .failure(PluginToHost.serviceResolve(key: key).notOpen) }
        return HostCallbackHandler.serviceResolve(screen, key: key, for: ServiceConsumer(grant: screen.grant, place: .host)).map(\.pointer)
    }

    func startTask(key: String?, descriptor: berth_task_v1, screen handle: OpaquePointer?) -> HostAnswer {
        let arguments = MainThreadArguments(value: (handle, descriptor))
        return LaneHop.toMain {
            let (handle, descriptor) = arguments.value
            guard let key, let screen = ScreenHandle.from(handle), let module = screen.module, let router = module.router, let host = screen.host,
                  let interactor = router.interactor else {
                ManagedTask.releaseUnstarted(descriptor)
                return .refused(HostRefusal(.state, "task_start: the screen is not open"))
            }
            if case .failure(let refusal) = HostCallbackHandler().permit(screen.grant, host: host, .tasks, call: "task_start") {
                ManagedTask.releaseUnstarted(descriptor)
                return .refused(refusal)
            }
            do throws(ScreenError) {
                try interactor.startTask(key: key, descriptor: descriptor)
                host.emit(.event, .screen(router.id), "task '\(key)' started")
                return .done
            } catch {
                return .refused(HostRefusal(.state, error.message))
            }
        }
    }

    func cancelTask(key: String, screen handle: OpaquePointer?) {
        let handle = MainThreadArguments(value: handle)
        LaneHop.toMain {
            guard let interactor = ScreenHandle.from(handle.value)?.module?.router?.interactor else { return }
            interactor.cancelTask(key: key)
        }
    }

    func post(from task: ManagedTask, action: String, payload: [UInt8]) -> berth_status {
        task.hops?.post {
            // Dropped when the task was cancelled since (deactivation, cancelEffect, a
            // restart under the same key) or the screen is no longer active.
            guard !task.isCancelled else { return }
            task.owner?.taskPosted(task, action: action, payload: payload)
        }
        return berth_status(BERTH_OK)
    }
}
