import BerthCore
internal import CBerth

/// The worker's instance bookkeeping around the core's calls (`PluginImage+Calls`, the same
/// code the host runs in process): which instances exist, which are active, their tasks,
/// and each `PluginCallError` as the wire's `IsolationStatus`.
extension WorkerSession {
    /// `create` for `route`, on a new screen handle naming the host's `screen`.
    func create(screen: UInt64, route: String, argument: [UInt8], plugin: WorkerPlugin) -> IsolationReply {
        guard plugin.manifest.routes.contains(route) else {
            let routes = plugin.manifest.routes.joined(separator: ", ")
            return .created(.failure(Int(BERTH_ERR_NOT_FOUND), "\(plugin.pluginID) has no route '\(route)' (routes: \(routes))"), instance: 0)
        }
        let handle = WorkerScreen(hostScreenID: screen)
        let created: UnsafeMutableRawPointer
        do {
            created = try plugin.image.create(route: route, argument: argument, screen: handle.opaque)
        } catch {
            services.forget(screen: screen)
            return .created(Self.status(of: error), instance: 0)
        }
        let instance = WorkerInstance(token: takeInstanceToken(), route: route, plugin: plugin, screen: handle, pointer: created, shared: shared)
        handle.instance = instance
        instances[instance.token] = instance
        return .created(.ok, instance: instance.token)
    }

    /// The requests about one existing instance, served with its plugin's image.
    func serveInstance(_ request: IsolationRequest) -> IsolationReply {
        let token = Self.instanceToken(of: request)
        guard let instance = instances[token] else { return notServed(request, token: token) }
        let image = instance.plugin.image
        guard !image.isUnloaded else {
            return .status(.failure(Int(BERTH_ERR_STATE), "\(request.name): \(image.pluginID) is unloaded; nothing is called"))
        }
        switch request {
        case .destroy:
            if instance.isActive { _ = deactivate(instance) }
            instance.cancelAllTasks()
            image.destroy(instance.pointer)
            instance.screen.instance = nil
            instances[token] = nil
            services.forget(screen: instance.screen.hostScreenID)
            return .status(.ok)
        case .activate:
            guard !instance.isActive else {
                return .status(.failure(Int(BERTH_ERR_STATE), "screen \(instance.screen.hostScreenID) is already active"))
            }
            // Active during the call: the plugin starts its tasks from activate.
            instance.isActive = true
            let status = Self.status { () throws(PluginCallError) in try image.activate(instance.pointer) }
            // As in process: a failed activate is still followed by deactivate (the host's
            // own deactivate request then finds the instance inactive).
            if !status.isOK { _ = deactivate(instance) }
            return .status(status)
        case .deactivate:
            guard instance.isActive else { return .status(.ok) }
            return .status(deactivate(instance))
        case .screenEvent(_, let event, let flag):
            image.screenEvent(instance.pointer, code: event, flag: flag)
            return .status(.ok)
        case .action(_, let name, let payload):
            return .status(act(instance, name: name, payload: payload))
        case .actionThenRender(_, let name, let payload, let slots):
            let callsBefore = hostCallsMade
            let status = act(instance, name: name, payload: payload)
            // Only when the action left the host's side untouched (no navigation, no state
            // written, nothing asked): then this render sees what the host's would.
            guard status.isOK, hostCallsMade == callsBefore, instance.isActive, image.functions.contains(.renderTree) else {
                return .acted(status, render: nil)
            }
            return .acted(status, render: renderTree(instance, slots: slots))
        case .delegateReceived(_, let child, let name, let payload):
            guard instance.isActive else { return .status(.ok) }
            return .status(Self.status { () throws(PluginCallError) in
                try image.delegateReceived(instance.pointer, from: child, action: name, payload: payload)
            })
        case .contextReceived(_, let type, let payload):
            guard instance.isActive else { return .status(.ok) }
            return .status(Self.status { () throws(PluginCallError) in try image.contextReceived(instance.pointer, type: type, payload: payload) })
        case .render(_, let slots):
            return .rendered(render(instance, slots: slots))
        case .renderTree(_, let slots):
            return .rendered(renderTree(instance, slots: slots))
        case .saveState:
            do {
                return .bytes(.ok, try image.saveState(instance.pointer))
            } catch {
                return .bytes(Self.status(of: error), [])
            }
        case .restoreState(_, let state):
            return .status(Self.status { () throws(PluginCallError) in try image.restoreState(instance.pointer, state) })
        default:
            preconditionFailure("serveInstance handles instance requests only, not \(request.name)")
        }
    }

    /// berth.h's order, as in-process: every task cancelled and awaited, the instance
    /// inactive (so no new task starts), then the plugin's `deactivate`; anything still
    /// running after it is cancelled and awaited before the reply.
    private func deactivate(_ instance: WorkerInstance) -> IsolationStatus {
        instance.cancelAllTasks()
        instance.isActive = false
        let status = Self.status { () throws(PluginCallError) in try instance.plugin.image.deactivate(instance.pointer) }
        instance.cancelAllTasks()
        return status
    }

    /// Delivers an action to an active instance.
    private func act(_ instance: WorkerInstance, name: String, payload: [UInt8]) -> IsolationStatus {
        guard instance.isActive else {
            return .failure(Int(BERTH_ERR_STATE), "screen \(instance.screen.hostScreenID) is not active; actions go to active screens only")
        }
        return Self.status { () throws(PluginCallError) in try instance.plugin.image.action(instance.pointer, name: name, payload: payload) }
    }

    /// One `render_tree` pass over the screen's `slots`. The plugin reads its slots from the
    /// batch; a state_read or state_write it still makes goes to the host like any other
    /// call (so the host marks it for the GC).
    private func renderTree(_ instance: WorkerInstance, slots: [RenderSlot]) -> IsolationRenderResult {
        do {
            return IsolationRenderResult(status: .ok, tree: try instance.plugin.image.renderTree(instance.pointer, slots: slots))
        } catch {
            return IsolationRenderResult(status: Self.status(of: error))
        }
    }

    /// One v1.0 render pass, its `state_read`s served from `slots`.
    private func render(_ instance: WorkerInstance, slots: [IsolationStateSlot]) -> IsolationRenderResult {
        let batch = RenderBatch(slots: slots)
        let screen = instance.screen.hostScreenID
        let outer = renderBatches[screen]
        renderBatches[screen] = batch
        defer { renderBatches[screen] = outer }
        do {
            return batch.result(status: .ok, tree: try instance.plugin.image.render(instance.pointer))
        } catch {
            return batch.result(status: Self.status(of: error), tree: [])
        }
    }

    /// A plugin call's outcome as the wire carries it.
    private static func status(_ call: () throws(PluginCallError) -> Void) -> IsolationStatus {
        do {
            try call()
            return .ok
        } catch {
            return status(of: error)
        }
    }

    private static func status(of error: PluginCallError) -> IsolationStatus {
        IsolationStatus(code: error.status, message: error.message)
    }

    /// The instance token an instance request names.
    private static func instanceToken(of request: IsolationRequest) -> UInt64 {
        switch request {
        case .destroy(let token), .activate(let token), .deactivate(let token), .screenEvent(let token, _, _), .action(let token, _, _),
             .actionThenRender(let token, _, _, _), .delegateReceived(let token, _, _, _), .contextReceived(let token, _, _),
             .render(let token, _), .renderTree(let token, _), .saveState(let token), .restoreState(let token, _):
            token
        default:
            preconditionFailure("serveInstance handles instance requests only, not \(request.name)")
        }
    }

    /// The reply to an instance request for an instance the worker does not have.
    private func notServed(_ request: IsolationRequest, token: UInt64) -> IsolationReply {
        let status = missing(token, request)
        switch request {
        case .render, .renderTree: return .rendered(IsolationRenderResult(status: status))
        case .saveState: return .bytes(status, [])
        case .actionThenRender: return .acted(status, render: nil)
        default: return .status(status)
        }
    }

    private func missing(_ token: UInt64, _ request: IsolationRequest) -> IsolationStatus {
        .failure(Int(BERTH_ERR_NOT_FOUND), "\(request.name): no instance \(token) in this worker (never created, or destroyed)")
    }
}
