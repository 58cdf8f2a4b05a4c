internal import CBerth

/// `service_register` and `service_resolve` in a worker: the declaration stays here, the
/// host registers its key and owns the scopes; a resolve asks the host which instance the
/// current scope holds (made here, by a nested request, when it holds none yet), once per
/// screen and key while that instance lives (`WorkerServices` remembers the answer).
extension WorkerHostCalls {
    static func serviceRegister(_ plugin: OpaquePointer?, _ service: UnsafePointer<berth_service_v1>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((plugin, service, error), error: error) { arguments, session in
            let (plugin, service, error) = arguments
            guard let member = WorkerPluginHandle.from(plugin)?.member else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "service_register: the plugin handle is not a loaded plugin")
            }
            let declaration: ServiceDeclaration
            switch ServiceDeclaration.read(service) {
            case .success(let read): declaration = read
            case .failure(let refusal): return HostServices.refuse(refusal, error)
            }
            let token = session.services.declare(declaration, by: member)
            let request = IsolationRequest.serviceRegister(plugin: member, key: declaration.key, kind: declaration.kind.code, service: token,
                                                           answersCalls: declaration.answersCalls)
            guard let reply = forward(request, in: session, error: error) else {
                session.services.forget(service: token)
                return berth_status(BERTH_ERR_FAILED)
            }
            if !reply.status.isOK { session.services.forget(service: token) }
            return finish(reply.status, error)
        }
    }

    static func serviceResolve(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               _ error: ErrorPointer) -> berth_status {
        guard let key else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_resolve: key is NULL") }
        let name = String(cString: key)
        // The host's scopes are reached over the channel, which only the thread the host is
        // calling may use.
        guard HostCall.isInside else {
            return HostServices.fill(error, BERTH_ERR_STATE, "service_resolve \(name): an isolated plugin resolves on the thread the host calls it on; resolve there and hand the pointer to your thread")
        }
        return onMainThread((handle, out, error), error: error) { arguments, session in
            let (handle, out, error) = arguments
            guard let screen = WorkerScreen.from(handle) else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "service_resolve \(name): the screen handle is not an open screen")
            }
            if let pointer = session.services.remembered(screen: screen.hostScreenID, key: name) {
                out?.pointee = pointer
                return berth_status(BERTH_OK)
            }
            guard let reply = forward(.serviceResolve(screen: screen.hostScreenID, key: name), in: session, error: error) else {
                return berth_status(BERTH_ERR_FAILED)
            }
            guard case .created(let status, let instance) = reply, status.isOK else { return finish(reply.status, error) }
            guard let pointer = session.services.answer(screen: screen.hostScreenID, key: name, instance: instance) else {
                return HostServices.fill(error, BERTH_ERR_STATE, "service_resolve \(name): the host named instance \(instance), which this worker does not hold")
            }
            out?.pointee = pointer
            return berth_status(BERTH_OK)
        }
    }

    /// `service_call`: the request goes to the host, which calls the provider (in this worker,
    /// another, or the host's process) and answers with its reply or a status naming it.
    static func serviceCall(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ request: berth_bytes, _ reply: UnsafePointer<berth_sink>?,
                            _ error: ErrorPointer) -> berth_status {
        guard let key else { return HostServices.fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_call: key is NULL") }
        let name = String(cString: key)
        guard HostCall.isInside else {
            return HostServices.fill(error, BERTH_ERR_STATE, "service_call \(name): call it on the thread the host calls your plugin on")
        }
        let bytes = request.copied
        return onMainThread((handle, reply, error), error: error) { arguments, session in
            let (handle, reply, error) = arguments
            guard let screen = WorkerScreen.from(handle) else {
                return HostServices.fill(error, BERTH_ERR_NOT_FOUND, "service_call \(name): the screen handle is not an open screen")
            }
            guard let answer = forward(.serviceCall(screen: screen.hostScreenID, key: name, request: bytes), in: session, error: error) else {
                return berth_status(BERTH_ERR_FAILED)
            }
            guard case .bytes(let status, let result) = answer, status.isOK else { return finish(answer.status, error) }
            return SinkBuffer.write(result, to: reply)
        }
    }
}
