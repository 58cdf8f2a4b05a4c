@_spi(Engine) import BerthCore
internal import CBerth

/// The host's side of the seam: it answers every `PluginToHost` (from the in-process
/// transport and from a worker's channel alike). Each call finds the screen, checks what
/// berth.h promises, and either acts or queues the work until the host is back at top
/// level (a plugin is never re-entered in the middle of its own call).
@MainActor
package struct HostCallbackHandler {
    package init() {}

    /// Answers a screen's call; `handle` nil: the caller's screen handle names no open screen.
    package func answer(_ call: PluginToHost, screen handle: ScreenHandle?) -> HostAnswer {
        guard let handle else { return call.whenNotOpen }
        switch call {
        case .navigate(let kind, let route, let argument):
            do throws(HostRefusal) {
                let request = try NavigationRequest(kind: kind, route: route)
                return navigate(handle, request, argument: argument).map { id in HostAnswer.screen(id.map { UInt64($0) }) }.answer
            } catch {
                return .refused(error)
            }
        case .observeDelegate(let child): return HostAnswer(observeDelegate(handle, child: Int(child)))
        case .sendDelegate(let action, let payload): return HostAnswer(sendDelegate(handle, action: action, payload: payload))
        case .contextObserve(let type): return HostAnswer(contextObserve(handle, type: type))
        case .contextUnobserve(let type):
            contextUnobserve(handle, type: type)
            return .done
        case .contextSend(let type, let payload, let mode):
            return HostAnswer(contextSend(handle, type: type, payload: payload, terminate: mode == BERTH_CONTEXT_TERMINATE))
        case .contextCanTerminate(let type): return .flag(contextCanTerminate(handle, type: type))
        case .stateRead(let key, let fingerprint):
            return stateRead(handle, identity: key.identity, index: key.index, fingerprint: fingerprint).map { HostAnswer.bytes($0) }.answer
        case .stateWrite(let slot):
            return HostAnswer(stateWrite(handle, identity: slot.key.identity, index: slot.key.index, fingerprint: slot.fingerprint, value: slot.bytes))
        case .persistRead(let key): return persistRead(handle, key: key).map { HostAnswer.bytes($0) }.answer
        case .persistWrite(let key, let value): return HostAnswer(persistWrite(handle, key: key, value: value))
        case .sessionBegin, .sessionEnd, .serviceRegister, .serviceResolve, .serviceCall:
            return .refused(HostRefusal(.invalidArgument, "\(call.name) is not a call about a screen"))
        }
    }

    /// Answers a plugin-wide call of the plugin holding `grant`.
    func answer(_ call: PluginToHost, plugin grant: CapabilityGrant, host: any PluginFacingHost) -> HostAnswer {
        switch call {
        case .sessionBegin(let id): HostAnswer(sessionBegin(grant, host: host, id: id))
        case .sessionEnd: HostAnswer(sessionEnd(grant, host: host))
        default: .refused(HostRefusal(.invalidArgument, "\(call.name) is not a plugin-wide call"))
        }
    }

    /// The router a handle names, also while its instance is still being created.
    private func router(_ handle: ScreenHandle) -> (router: Router, host: any PluginFacingHost)? {
        guard let router = handle.router, let host = handle.host, !router.isReleased else { return nil }
        return (router, host)
    }

    /// The screen a handle names, when it is open and its host is alive.
    private func screen(_ handle: ScreenHandle) -> (module: ModuleInstance, router: Router, host: any PluginFacingHost)? {
        guard let module = handle.module, let router = module.router, let host = handle.host else { return nil }
        return (module, router, host)
    }

    private func notOpen(_ verb: String) -> HostRefusal {
        HostRefusal(.notFound, "\(verb): the screen handle is not an open screen")
    }

    // MARK: Capabilities

    /// Every plugin → host call passes here first: a call outside the plugin's capabilities
    /// is refused with BERTH_ERR_DENIED and reported as a `denied` event. (The in-process
    /// functions that hand the host C pointers — services, sessions, task start — ask here
    /// before they act.)
    func permit(_ grant: CapabilityGrant, host: (any PluginFacingHost)?, _ capability: Capability, call: String) -> Result<Void, HostRefusal> {
        guard let denial = grant.check(capability, call: call) else { return .success(()) }
        host?.report(denial)
        return .failure(denial.refusal)
    }

    package func permit(_ handle: ScreenHandle, _ capability: Capability, call: String) -> Result<Void, HostRefusal> {
        permit(handle.grant, host: handle.host, capability, call: call)
    }

    /// `navigate` for the plugin's own routes (bare, or `ITS-ID/route`), `navigate.any` for others'.
    private func capability(for request: NavigationRequest, from module: ModuleInstance) -> Capability {
        switch request {
        case .push(let target), .present(let target):
            let manifest = module.generation.manifest
            guard target.pluginID == nil || target.pluginID == manifest.id else { return .navigateAny }
            return manifest.routes.contains(target.name) ? .navigate : .navigateAny
        case .pop, .dismiss, .popToRoot:
            return .navigate
        }
    }

    // MARK: Navigation and delegate actions

    package func navigate(_ handle: ScreenHandle, _ request: NavigationRequest, argument: [UInt8]) -> Result<Int?, HostRefusal> {
        guard let (module, router, host) = screen(handle) else { return .failure(notOpen("navigate")) }
        if case .failure(let refusal) = permit(handle, capability(for: request, from: module), call: "navigate") { return .failure(refusal) }
        guard module.isActive else {
            return .failure(HostRefusal(.state, "navigate: screen \(router.id) is \(module.state); only active screens navigate"))
        }
        switch request {
        case .push(let target), .present(let target):
            let id = host.navigator.takeRouterID()
            let present = if case .present = request { true } else { false }
            // Queued work holds its router strongly, not weakly (a weak reference gives the
            // router a side table for life): it runs before the operation ends, and skips a
            // router released meanwhile.
            // Asked during a call on the plugin's lane: the new screen opens on its own lane too,
            // and the host does not wait for it. Asked on the main actor (a blocking call),
            // it opens there, as the caller expects the result at once.
            let onLane = LaneHop.answering != nil
            host.navigator.enqueue { [weak host, router] in
                guard let host, !router.isReleased else { return }
                if onLane {
                    host.navigator.startRequestedOpen(target, argument: argument, from: router, id: id, present: present)
                } else {
                    host.navigator.performRequestedOpen(target, argument: argument, from: router, id: id, present: present)
                }
            }
            return .success(id)
        case .pop:
            guard let stack = router.stack, stack.routers.first !== router || stack.isPresented else {
                return .failure(HostRefusal(.state, "navigate: screen \(router.id) is the launch root; there is nothing to pop back to"))
            }
            host.navigator.enqueue { [weak host, router] in
                guard let host, !router.isReleased else { return }
                host.close(router)
            }
        case .dismiss:
            guard let stack = router.stack, stack.isPresented, let root = stack.routers.first else {
                return .failure(HostRefusal(.state, "navigate: screen \(router.id) is not in a presented stack; nothing to dismiss"))
            }
            host.navigator.enqueue { [weak host, root] in
                guard let host, !root.isReleased else { return }
                host.navigator.deactivateDetachAndDismiss(root)
            }
        case .popToRoot:
            guard let stack = router.stack, stack.routers.count > 1 else {
                return .failure(HostRefusal(.state, "navigate: screen \(router.id)'s stack has nothing above its root"))
            }
            let above = stack.routers[1]
            host.navigator.enqueue { [weak host, above] in
                guard let host, !above.isReleased else { return }
                host.navigator.deactivateDetachAndPop(above)
            }
        }
        return .success(nil)
    }

    package func observeDelegate(_ handle: ScreenHandle, child: Int) -> Result<Void, HostRefusal> {
        guard let (module, router, host) = screen(handle) else { return .failure(notOpen("observe_delegate")) }
        if case .failure(let refusal) = permit(handle, .delegate, call: "observe_delegate") { return .failure(refusal) }
        guard module.isActive else { return .failure(HostRefusal(.state, "observe_delegate: screen \(router.id) is \(module.state)")) }
        // The child may still be queued (a push requested in this same call).
        let observe = { [weak host, router] in
            guard let host, !router.isReleased else { return }
            do throws(ScreenError) {
                try host.navigator.observeDelegate(of: child, by: router)
            } catch {
                host.emit(.failed, .screen(router.id), error.message)
            }
        }
        // A child still opening on its lane is observed once it is pushed.
        host.navigator.enqueue { [weak host] in
            guard let host, !host.navigator.holdUntilOpened(screen: child, observe) else { return }
            observe()
        }
        return .success(())
    }

    package func sendDelegate(_ handle: ScreenHandle, action: String, payload: [UInt8]) -> Result<Void, HostRefusal> {
        guard let (module, router, host) = screen(handle) else { return .failure(notOpen("send_delegate")) }
        if case .failure(let refusal) = permit(handle, .delegate, call: "send_delegate") { return .failure(refusal) }
        guard module.isActive else { return .failure(HostRefusal(.state, "send_delegate: screen \(router.id) is \(module.state)")) }
        // Sent during a call on a lane: delivered on each observer's lane too.
        let onLanes = LaneHop.answering != nil
        host.navigator.enqueue { [weak host, router] in
            guard let host, !router.isReleased else { return }
            host.navigator.deliverDelegate(from: router, action: action, payload: payload, onLanes: onLanes)
        }
        return .success(())
    }

    // MARK: Route context

    package func contextObserve(_ handle: ScreenHandle, type: String) -> Result<Void, HostRefusal> {
        guard let (router, host) = router(handle) else { return .failure(notOpen("context_observe")) }
        if case .failure(let refusal) = permit(handle, .context, call: "context_observe") { return .failure(refusal) }
        guard !type.isEmpty else { return .failure(HostRefusal(.invalidArgument, "context_observe: the context type is empty")) }
        host.routeContext.addScreenObserver(type, on: router)
        return .success(())
    }

    package func contextUnobserve(_ handle: ScreenHandle, type: String) {
        guard let (router, host) = router(handle), handle.grant.capabilities.contains(.context) else { return }
        host.routeContext.removeScreenObserver(type, on: router)
    }

    package func contextSend(_ handle: ScreenHandle, type: String, payload: [UInt8], terminate: Bool) -> Result<Void, HostRefusal> {
        guard let (module, router, host) = screen(handle) else { return .failure(notOpen("context_send")) }
        if case .failure(let refusal) = permit(handle, .context, call: "context_send") { return .failure(refusal) }
        guard !type.isEmpty else { return .failure(HostRefusal(.invalidArgument, "context_send: the context type is empty")) }
        guard module.isActive else {
            host.emit(.failed, .screen(router.id), "context \(type) not sent: the sending screen is \(module.state)")
            return .failure(HostRefusal(.state, "context_send: screen \(router.id) is \(module.state); \(type) was not sent"))
        }
        // Sent during a call on a lane: delivered on each observer's lane too.
        let onLanes = LaneHop.answering != nil
        host.navigator.enqueue { [weak host, router] in
            guard let host, !router.isReleased else { return }
            host.sendContext(type, payload: payload, from: router, terminating: terminate, onLanes: onLanes)
        }
        return .success(())
    }

    package func contextCanTerminate(_ handle: ScreenHandle, type: String) -> Bool {
        guard let (_, router, host) = screen(handle) else { return false }
        // A boolean answer: without the capability it is "no" (and the refusal is reported).
        guard case .success = permit(handle, .context, call: "context_can_terminate") else { return false }
        return host.canTerminate(type, from: router)
    }

    // MARK: State storage

    package func stateRead(_ handle: ScreenHandle, identity: String, index: UInt32, fingerprint: UInt64) -> Result<[UInt8]?, HostRefusal> {
        guard let module = handle.module, !module.isReleased else { return .failure(notOpen("state_read")) }
        return .success(module.stateStorage.read(identity: identity, index: index, fingerprint: fingerprint))
    }

    package func stateWrite(_ handle: ScreenHandle, identity: String, index: UInt32, fingerprint: UInt64, value: [UInt8]) -> Result<Void, HostRefusal> {
        guard let module = handle.module, !module.isReleased else { return .failure(notOpen("state_write")) }
        guard module.stateStorage.write(identity: identity, index: index, fingerprint: fingerprint, bytes: value) else {
            let budget = module.generation.stateBudget
            let message = budget.refusal(identity: identity, value: value.count)
            // One event when the plugin first hits its budget; every refused write fails.
            if budget.refused() { handle.host?.emit(.denied, .plugin(module.pluginID), message) }
            return .failure(HostRefusal(.denied, message))
        }
        return .success(())
    }

    package func persistRead(_ handle: ScreenHandle, key: String) -> Result<[UInt8]?, HostRefusal> {
        persistTarget(handle, key, verb: "persist_read").flatMap { store, plugin in Self.read(store, plugin: plugin, key: key) }
    }

    /// `persist_read` answered where the plugin asks, without the main actor: during a call
    /// the host makes about `handle`'s screen (open, or closed during the call, whose close
    /// sequence waits for it), for a key the grant allows,
    /// with persistence on. The store is thread-safe and the grant immutable. Nil when any
    /// of that does not hold: the main actor answers (and reports a refusal).
    nonisolated static func persistReadOnLane(_ handle: ScreenHandle, key: String, during call: LaneCallContext) -> Result<[UInt8]?, HostRefusal>? {
        guard let store = handle.persistentStore, let screen = handle.services?.screen, call.screen === screen,
              handle.grant.check(.statePersist, call: "persist_read") == nil, handle.grant.persistKeys.contains(key) else { return nil }
        return read(store, plugin: handle.grant.pluginID, key: key)
    }

    private nonisolated static func read(_ store: PersistentStore, plugin: String, key: String) -> Result<[UInt8]?, HostRefusal> {
        do {
            return .success(try store.read(plugin: plugin, key: key))
        } catch {
            return .failure(HostRefusal(.failed, "persist_read \(plugin)/\(key): \(error)"))
        }
    }

    package func persistWrite(_ handle: ScreenHandle, key: String, value: [UInt8]) -> Result<Void, HostRefusal> {
        persistTarget(handle, key, verb: "persist_write").flatMap { store, plugin in
            do {
                try store.write(plugin: plugin, key: key, value: value)
                return .success(())
            } catch {
                return .failure(HostRefusal(.failed, "persist_write \(plugin)/\(key) failed, nothing was saved: \(error)"))
            }
        }
    }

    /// The store and plugin of a persist call, after the checks: an open screen, a key the
    /// manifest's `persist` list declares, persistence on.
    private func persistTarget(_ handle: ScreenHandle, _ key: String, verb: String) -> Result<(PersistentStore, String), HostRefusal> {
        // A screen closed during its plugin's call still writes from its deferred deactivate.
        if router(handle) == nil, verb == "persist_write", handle.closesAfterCall, let host = handle.host {
            return persistTarget(handle, key, verb: verb, plugin: handle.grant.pluginID, host: host)
        }
        guard let (router, host) = router(handle) else { return .failure(notOpen(verb)) }
        return persistTarget(handle, key, verb: verb, plugin: router.pluginID, host: host)
    }

    private func persistTarget(_ handle: ScreenHandle, _ key: String, verb: String, plugin: String,
                               host: any PluginFacingHost) -> Result<(PersistentStore, String), HostRefusal> {
        if let denial = handle.grant.check(.statePersist, call: verb) {
            // The event names the key; a read runs on every render, so its refusal is
            // reported once per generation and key.
            var reported = denial
            reported.call = "\(verb) \(key)"
            if verb != "persist_read" || handle.grant.reportedRepeats.isFirst(reported.call) { host.report(reported) }
            return .failure(denial.refusal)
        }
        // The screen's own generation's list (a reload's new list applies to its screens).
        guard handle.grant.persistKeys.contains(key) else {
            let fix = handle.grant.runtime == .swift ? " (berth pack lists every @Persisted(\"…\") literal of the code: pack again)" : ""
            return .failure(HostRefusal(.invalidArgument, "\(verb): key '\(key)' is not in \(plugin)'s manifest persist list\(fix)"))
        }
        guard let store = host.persistentStore else {
            let off: String
            switch host.persistenceStatus {
            case .failed(let path, let error): off = "persistence is off (\(path): \(error))"
            case .disabled, .on: off = "persistence is off (no state folder)"
            }
            return .failure(HostRefusal(.failed, "\(verb) \(plugin)/\(key): \(off)"))
        }
        return .success((store, plugin))
    }

    // MARK: Managed tasks

    package func taskPost(_ handle: ScreenHandle, action: String, payload: [UInt8]) {
        guard let module = handle.module, module.isActive, let host = handle.host else { return }
        // A worker's tasks run in its own process: the host refuses what they post.
        guard case .success = permit(handle, .tasks, call: "task_post") else { return }
        // The screen is still opening on its lane (`BerthHost.open`): the post runs once it
        // is pushed, as it would after `push`, and is dropped when the open fails.
        if let router = module.router, host.navigator.holdUntilOpened(router, { [self] in taskPost(handle, action: action, payload: payload) }) {
            return
        }
        // The plugin is in another call on its lane: the post waits for it, in order.
        let connection = module.generation.connection
        guard connection.isFreeForHostCall else {
            connection.afterCall { [self] in taskPost(handle, action: action, payload: payload) }
            return
        }
        // On the lane: the host goes on while the plugin's code runs.
        host.navigator.post(to: module, action: action, payload: payload)
    }
}
