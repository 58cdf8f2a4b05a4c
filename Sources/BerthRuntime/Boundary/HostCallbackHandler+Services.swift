/// Services and sessions as the host serves them to a plugin in either mode: the
/// in-process table (`HostServices+Services`) and a worker's requests
/// (`IsolatedCallRouter`) both end here, so the checks and messages are the same.
extension HostCallbackHandler {
    /// Registers a plugin's service after its capability check; logs `provides KEY (KIND)`.
    func serviceRegister(_ registration: ScopeRegistry.Registration, grant: CapabilityGrant, host: any PluginFacingHost) -> Result<Void, HostRefusal> {
        if case .failure(let refusal) = permit(grant, host: host, .servicesProvide, call: "service_register") { return .failure(refusal) }
        do throws(ScopeError) {
            try host.scopes.register(registration)
        } catch {
            return .failure(HostRefusal(.invalidArgument, "service_register: \(error.description)"))
        }
        host.emit(.event, .plugin(registration.plugin), "provides \(registration.key) (\(registration.kind))")
        return .success(())
    }

    /// The instance of `key` in the scope current for `handle`'s screen. Thread: any (the
    /// grant is immutable; a denial is reported on the main actor).
    nonisolated static func serviceResolve(_ handle: ScreenHandle, key: String, for consumer: ServiceConsumer) -> Result<ScopedValue, HostRefusal> {
        guard let (registry, screenScope) = handle.services else {
            return .failure(HostRefusal(.notFound, "service_resolve \(key): the screen handle is not an open screen"))
        }
        if let denial = handle.grant.check(.servicesConsume, call: "service_resolve") {
            Task { @MainActor in handle.host?.report(denial) }
            return .failure(denial.refusal)
        }
        do throws(ScopeError) {
            return .success(try registry.resolve(key: key, screen: screenScope, for: consumer))
        } catch {
            return .failure(HostRefusal(error.resolveStatus, "service_resolve \(error.description)"))
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
