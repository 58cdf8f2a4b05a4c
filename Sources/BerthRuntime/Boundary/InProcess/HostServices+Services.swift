internal import CBerth

/// `service_register`, `service_resolve` and the session functions of the in-process host
/// table: C arguments in, `HostCallbackHandler+Services` (shared with workers) does the rest.
extension HostServices {
    static func serviceRegister(_ handle: OpaquePointer?, _ service: UnsafePointer<berth_service_v1>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, service, error), error: error) { handle, service, error in
            guard let context = PluginContext.from(handle: handle), let host = context.host else {
                return fill(error, BERTH_ERR_NOT_FOUND, "service_register: the plugin handle is not a loaded plugin")
            }
            let declaration: ServiceDeclaration
            switch ServiceDeclaration.read(service) {
            case .success(let read): declaration = read
            case .failure(let refusal): return refuse(refusal, error)
            }
            let registration = declaration.answersCalls
                ? contractRegistration(declaration, context: context)
                : ScopeRegistry.Registration(
                    key: declaration.key, kind: declaration.kind, plugin: context.pluginID, generation: context.generation,
                    providerGrant: context.grant, make: .sync { .pointer(try declaration.make()) },
                    release: { value in
                        if let pointer = value.pointer { declaration.release(pointer) }
                    }
                )
            return answer(callbacks.serviceRegister(registration, host: host), error)
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

    /// `service_call`: the call waits on this (the plugin's) thread; the host's main actor
    /// only resolves the instance (`ContractCalls`).
    static func serviceCall(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ request: berth_bytes, _ reply: UnsafePointer<berth_sink>?,
                            _ error: ErrorPointer) -> berth_status {
        guard let key else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_call: key is NULL") }
        let name = String(cString: key)
        guard HostCall.isInside else {
            return fill(error, BERTH_ERR_STATE, "service_call \(name): call it on the thread the host calls your plugin on")
        }
        guard let screen = ScreenHandle.from(handle) else {
            return fill(error, BERTH_ERR_NOT_FOUND, "service_call \(name): the screen handle is not an open screen")
        }
        let bytes = request.copied
        let result = ContractCalls.call(key: name, request: bytes, from: screen, consumer: screen.grant.pluginID) {
            HostCallbackHandler.contractTarget(screen, key: name, for: ServiceConsumer(grant: screen.grant, place: .host))
        }
        switch result {
        case .success(let answer): return SinkBuffer.write(answer, to: reply)
        case .failure(let failure): return BerthErrorBuffer.fill(error, code: failure.status, message: failure.message)
        }
    }

    /// Thread: any. The screen scope comes from the handle; the request scope is the one of
    /// the call the host is making (a worker thread has none).
    static func serviceResolve(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               _ error: ErrorPointer) -> berth_status {
        guard let key else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_resolve: key is NULL") }
        let name = String(cString: key)
        guard let screen = ScreenHandle.from(handle) else {
            return fill(error, BERTH_ERR_NOT_FOUND, "service_resolve \(name): the screen handle is not an open screen")
        }
        switch HostCallbackHandler.serviceResolve(screen, key: name, for: ServiceConsumer(grant: screen.grant, place: .host)) {
        case .success(let value):
            out?.pointee = value.pointer
            return berth_status(BERTH_OK)
        case .failure(let refusal):
            return refuse(refusal, error)
        }
    }

    static func sessionBegin(_ handle: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, id, error), error: error) { handle, id, error in
            guard let context = PluginContext.from(handle: handle), let host = context.host else {
                return fill(error, BERTH_ERR_NOT_FOUND, "session_begin: the plugin handle is not a loaded plugin")
            }
            return answer(callbacks.sessionBegin(context.grant, host: host, id: id.map { String(cString: $0) } ?? ""), error)
        }
    }

    static func sessionEnd(_ handle: OpaquePointer?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, error), error: error) { handle, error in
            guard let context = PluginContext.from(handle: handle), let host = context.host else {
                return fill(error, BERTH_ERR_NOT_FOUND, "session_end: the plugin handle is not a loaded plugin")
            }
            return answer(callbacks.sessionEnd(context.grant, host: host), error)
        }
    }
}
