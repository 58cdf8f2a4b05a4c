@_spi(Engine) import BerthCore
internal import CBerth

/// Services and sessions as the host serves them to a plugin in either mode: the
/// in-process transport (`InProcessTransport`) and a worker's requests
/// (`IsolatedCallRouter`) both end here, so the checks and messages are the same.
extension HostCallbackHandler {
    /// Registers a plugin's service; logs `provides KEY (KIND)`. No capability is needed:
    /// `services.provide` decides only whether other plugins may resolve it (checked there).
    func serviceRegister(_ registration: ScopeRegistry.Registration, host: any PluginFacingHost) -> Result<Void, HostRefusal> {
        do throws(ScopeError) {
            try host.scopes.register(registration)
        } catch {
            return .failure(HostRefusal(.invalidArgument, "service_register: \(error.description)"))
        }
        host.emit(.event, .plugin(registration.plugin), "provides \(registration.key) (\(registration.kind))")
        return .success(())
    }

    /// The instance of `key` in the scope current for `handle`'s screen. Thread: any (the
    /// grants are immutable; a denial is reported on the main actor). The plugin's own keys
    /// need no capability; another provider's need `services.consume` (and a providing
    /// plugin's `services.provide`), the same in process and in a worker.
    nonisolated static func serviceResolve(_ handle: ScreenHandle, key: String, for consumer: ServiceConsumer) -> Result<ScopedValue, HostRefusal> {
        guard let (registry, screenScope) = handle.services else {
            return .failure(HostRefusal(.notFound, "service_resolve \(key): the screen handle is not an open screen"))
        }
        do throws(ScopeError) {
            return .success(try registry.resolve(key: key, screen: screenScope, for: consumer))
        } catch {
            if let denial = error.denial {
                handle.hops.post { handle.host?.report(denial) }
                return .failure(denial.refusal)
            }
            return .failure(HostRefusal(error.resolveStatus, "service_resolve \(error.description)"))
        }
    }

    /// A contract call from `handle`'s screen: it waits on the calling thread (a plugin's lane,
    /// or the thread reading a worker's channel) for the provider; the main actor only
    /// resolves the instance (`ContractCalls`).
    nonisolated static func callService(_ key: String, request: [UInt8], from handle: ScreenHandle, consumer: ServiceConsumer) -> HostAnswer {
        let result = ContractCalls.call(key: key, request: request, from: handle, consumer: consumer.plugin) {
            HostCallbackHandler.contractTarget(handle, key: key, for: consumer)
        }
        switch result {
        case .success(let reply): return .bytes(reply)
        case .failure(let failure): return .refused(HostRefusal(HostRefusal.Code(rawValue: failure.status) ?? .failed, failure.message))
        }
    }

    /// The instance a contract call from `handle`'s screen goes to (made on first use in the
    /// current scope of its kind, as a resolve), the way to it and its provider; or the
    /// refusal, as `BERTH_ERR_*` and one line. A denial is reported as a resolve's is.
    @MainActor
    static func contractTarget(_ handle: ScreenHandle, key: String, for consumer: ServiceConsumer)
        -> Result<(ScopedValue, ContractCall, provider: String, timeout: Duration), PluginCallError> {
        guard let (registry, screenScope) = handle.services else {
            return .failure(PluginCallError(status: Int32(BERTH_ERR_NOT_FOUND), message: "service_call \(key): the screen handle is not an open screen"))
        }
        do throws(ScopeError) {
            let resolved: (ScopedValue, ContractCall, provider: String)
            do {
                resolved = try registry.resolveForCall(key: key, screen: screenScope, for: consumer)
            } catch where error.code == .providerUnloaded {
                // A provider whose worker crashed starts again on its next use, as an `open`
                // would start it; one past its crash budget, or unloaded, fails the call.
                guard let provider = registry.unloadedProvider(of: key), let host = handle.host else { throw error }
                switch host.startAgainAfterCrash(provider) {
                case .notCrashed: throw error
                case .refused(let why): throw ScopeError(.providerUnloaded, key: key, "its provider \(provider) crashed and does not start again: \(why)")
                case .started: resolved = try registry.resolveForCall(key: key, screen: screenScope, for: consumer)
                }
            }
            let (instance, call, provider) = resolved
            registry.noteCaller(consumer.plugin, of: key)
            return .success((instance, call, provider, registry.contractTimeout.withLock { $0 }))
        } catch {
            if let denial = error.denial {
                handle.host?.report(denial)
                return .failure(PluginCallError(status: denial.refusal.code.rawValue, message: denial.refusal.message))
            }
            let status: Int32 = switch error.code {
            case .providerUnloaded: Int32(BERTH_ERR_UNAVAILABLE)
            case .notRegistered: Int32(BERTH_ERR_NOT_FOUND)
            default: error.resolveStatus.rawValue
            }
            return .failure(PluginCallError(status: status, message: "service_call \(error.description)"))
        }
    }

    func sessionBegin(_ grant: CapabilityGrant, host: any PluginFacingHost, id: String) -> Result<Void, HostRefusal> {
        if case .failure(let refusal) = permit(grant, host: host, .session, call: "session_begin") { return .failure(refusal) }
        guard !id.isEmpty else { return .failure(HostRefusal(.invalidArgument, "session_begin: empty id")) }
        host.beginSession(id)
        return .success(())
    }

    func sessionEnd(_ grant: CapabilityGrant, host: any PluginFacingHost) -> Result<Void, HostRefusal> {
        if case .failure(let refusal) = permit(grant, host: host, .session, call: "session_end") { return .failure(refusal) }
        host.endSession()
        return .success(())
    }
}
