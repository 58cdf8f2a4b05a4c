internal import CBerth

/// `service_register`, `service_resolve` and the session functions of the in-process host
/// table. A service hands the host C function pointers (its factory and release), so these
/// stay on this side of the seam: an isolated plugin cannot share an instance pointer.
extension HostServices {
    static func serviceRegister(_ handle: OpaquePointer?, _ service: UnsafePointer<berth_service_v1>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, service, error), error: error) { handle, service, error in
            guard let context = PluginContext.from(handle: handle), let host = context.host else {
                return fill(error, BERTH_ERR_NOT_FOUND, "service_register: the plugin handle is not a loaded plugin")
            }
            if let denied = refusal(context.grant, host: host, .servicesProvide, "service_register", error) { return denied }
            guard let service else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_register: service is NULL") }
            var copy = berth_service_v1()
            withUnsafeMutableBytes(of: &copy) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(start: service, count: min(Int(service.pointee.struct_size), target.count)))
            }
            guard let key = copy.key.map({ String(cString: $0) }), !key.isEmpty else {
                return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_register: the key is empty")
            }
            guard let kind = ScopeKind(code: copy.scope) else {
                return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_register \(key): unknown scope \(copy.scope)")
            }
            guard let create = copy.create, let release = copy.release else {
                return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_register \(key): create and release are required")
            }
            let factoryContext = ServiceContext(pointer: copy.context)
            let registration = ScopeRegistry.Registration(
                key: key, kind: kind, plugin: context.pluginID, generation: context.generation,
                make: .sync {
                    var made: UnsafeMutableRawPointer?
                    var failure = BerthErrorBuffer.make()
                    let status = create(factoryContext.pointer, &made, &failure)
                    guard status == BERTH_OK, let made else {
                        throw ScopeError(.factoryFailed, key: key, BerthErrorBuffer.message(of: failure, status: status))
                    }
                    return .pointer(made)
                },
                release: { value in
                    if let pointer = value.pointer { release(factoryContext.pointer, pointer) }
                }
            )
            do throws(ScopeError) {
                try host.scopes.register(registration)
            } catch let refusal {
                return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_register: \(refusal.description)")
            }
            host.emit(.event, context.pluginID, "provides \(key) (\(kind))")
            return berth_status(BERTH_OK)
        }
    }

    /// Thread: any. The screen scope comes from the handle; the request scope is the one of
    /// the call the host is making (a worker thread has none).
    static func serviceResolve(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               _ error: ErrorPointer) -> berth_status {
        guard let key else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "service_resolve: key is NULL") }
        let name = String(cString: key)
        guard let screen = ScreenHandle.from(handle), let (registry, screenScope) = screen.services else {
            return fill(error, BERTH_ERR_NOT_FOUND, "service_resolve \(name): the screen handle is not an open screen")
        }
        // Any thread: the grant is immutable; the event is emitted on the main actor.
        if let denial = screen.grant.check(.servicesConsume, call: "service_resolve") {
            Task { @MainActor in screen.host?.report(denial) }
            return fill(error, Int(BERTH_ERR_DENIED), denial.message)
        }
        do throws(ScopeError) {
            let value = try registry.resolve(key: name, screen: screenScope)
            out?.pointee = value.pointer
            return berth_status(BERTH_OK)
        } catch let failure {
            let code = failure.code == .notRegistered || failure.code == .providerUnloaded ? BERTH_ERR_NOT_FOUND : BERTH_ERR_STATE
            return fill(error, code, "service_resolve \(failure.description)")
        }
    }

    static func sessionBegin(_ handle: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, id, error), error: error) { handle, id, error in
            guard let context = PluginContext.from(handle: handle), let host = context.host else {
                return fill(error, BERTH_ERR_NOT_FOUND, "session_begin: the plugin handle is not a loaded plugin")
            }
            if let denied = refusal(context.grant, host: host, .session, "session_begin", error) { return denied }
            guard let id, !String(cString: id).isEmpty else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "session_begin: empty id") }
            host.beginSession(String(cString: id))
            return berth_status(BERTH_OK)
        }
    }

    static func sessionEnd(_ handle: OpaquePointer?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, error), error: error) { handle, error in
            guard let context = PluginContext.from(handle: handle), let host = context.host else {
                return fill(error, BERTH_ERR_NOT_FOUND, "session_end: the plugin handle is not a loaded plugin")
            }
            if let denied = refusal(context.grant, host: host, .session, "session_end", error) { return denied }
            host.endSession()
            return berth_status(BERTH_OK)
        }
    }
}

/// A C factory's context pointer, carried into the registry's Sendable closures.
/// `@unchecked Sendable`: the provider plugin owns the pointer and documents (berth.h)
/// that its create and release may be called from any thread.
struct ServiceContext: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
}
