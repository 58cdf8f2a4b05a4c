internal import CBerth

extension WorkerSession {
    /// `create` for `route`, on a new screen handle naming the host's `screen`.
    func create(screen: UInt64, route: String, argument: [UInt8], plugin: WorkerPlugin) -> IsolationReply {
        guard plugin.manifest.routes.contains(route) else {
            let routes = plugin.manifest.routes.joined(separator: ", ")
            return .created(.failure(Int(BERTH_ERR_NOT_FOUND), "\(plugin.pluginID) has no route '\(route)' (routes: \(routes))"), instance: 0)
        }
        guard let create = plugin.table.table.create else {
            return .created(.failure(Int(BERTH_ERR_UNSUPPORTED), "\(plugin.pluginID) has no create"), instance: 0)
        }
        let handle = WorkerScreen(hostScreenID: screen)
        var error = BerthErrorBuffer.make()
        var created: UnsafeMutableRawPointer?
        let status = HostCall.run {
            argument.withUnsafeBufferPointer { buffer in
                create(handle.opaque, route, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &created, &error)
            }
        }
        guard status == BERTH_OK, let created else {
            return .created(Self.status(status, error), instance: 0)
        }
        let instance = WorkerInstance(token: takeInstanceToken(), route: route, plugin: plugin, screen: handle, pointer: created, shared: shared)
        handle.instance = instance
        instances[instance.token] = instance
        return .created(.ok, instance: instance.token)
    }

    /// The requests about one existing instance, served with its plugin's table.
    func serveInstance(_ request: IsolationRequest) -> IsolationReply {
        let token = Self.instanceToken(of: request)
        guard let plugin = instances[token]?.plugin else { return notServed(request, token: token) }
        guard !plugin.isUnloaded else {
            return .status(.failure(Int(BERTH_ERR_STATE), "\(request.name): \(plugin.pluginID) is unloaded; nothing is called"))
        }
        let table = plugin.table.table
        switch request {
        case .destroy(let token):
            guard let instance = instances[token] else { return .status(missing(token, request)) }
            if instance.isActive { _ = deactivate(instance, table: table) }
            instance.cancelAllTasks()
            if let destroy = table.destroy { HostCall.run { destroy(instance.pointer) } }
            instance.screen.instance = nil
            instances[token] = nil
            return .status(.ok)
        case .activate(let token):
            guard let instance = instances[token] else { return .status(missing(token, request)) }
            guard !instance.isActive else {
                return .status(.failure(Int(BERTH_ERR_STATE), "screen \(instance.screen.hostScreenID) is already active"))
            }
            // Active during the call: the plugin starts its tasks from activate.
            instance.isActive = true
            guard let activate = table.activate else { return .status(.ok) }
            var error = BerthErrorBuffer.make()
            let status = HostCall.run { activate(instance.pointer, &error) }
            guard status == BERTH_OK else {
                // As in process: a failed activate is still followed by deactivate (the
                // host's own deactivate request then finds the instance inactive).
                _ = deactivate(instance, table: table)
                return .status(Self.status(status, error))
            }
            return .status(.ok)
        case .deactivate(let token):
            guard let instance = instances[token] else { return .status(missing(token, request)) }
            guard instance.isActive else { return .status(.ok) }
            return .status(deactivate(instance, table: table))
        case .screenEvent(let token, let event, let flag):
            guard let instance = instances[token] else { return .status(missing(token, request)) }
            if let screenEvent = table.screen_event { HostCall.run { screenEvent(instance.pointer, event, flag ? 1 : 0) } }
            return .status(.ok)
        case .action(let token, let name, let payload):
            return .status(act(token, name: name, payload: payload, request: request, table: table, plugin: plugin).status)
        case .actionThenRender(let token, let name, let payload, let slots):
            let callsBefore = hostCallsMade
            let (status, instance) = act(token, name: name, payload: payload, request: request, table: table, plugin: plugin)
            // Only when the action left the host's side untouched (no navigation, no state
            // written, nothing asked): then this render sees what the host's would.
            guard status.isOK, hostCallsMade == callsBefore, let instance, instance.isActive, let renderTree = table.render_tree else {
                return .acted(status, render: nil)
            }
            return .acted(status, render: render(instance, slots: slots, renderTree))
        case .delegateReceived(let token, let child, let name, let payload):
            guard let instance = instances[token] else { return .status(missing(token, request)) }
            guard instance.isActive else { return .status(.ok) }
            // An optional function left NULL does nothing, as in process.
            guard let receive = table.delegate_received else { return .status(.ok) }
            return .status(deliver(payload) { bytes, error in receive(instance.pointer, child, name, bytes, error) })
        case .contextReceived(let token, let type, let payload):
            guard let instance = instances[token] else { return .status(missing(token, request)) }
            guard instance.isActive else { return .status(.ok) }
            guard let receive = table.context_received else { return .status(.ok) }
            return .status(deliver(payload) { bytes, error in receive(instance.pointer, type, bytes, error) })
        case .render(let token, let slots):
            guard let instance = instances[token] else { return .rendered(IsolationRenderResult(status: missing(token, request))) }
            return .rendered(render(instance, slots: slots, table: table, plugin: plugin))
        case .renderTree(let token, let slots):
            guard let instance = instances[token] else { return .rendered(IsolationRenderResult(status: missing(token, request))) }
            guard let renderTree = table.render_tree else {
                return .rendered(IsolationRenderResult(status: unsupported(plugin, instance, "has no render_tree")))
            }
            return .rendered(render(instance, slots: slots, renderTree))
        case .saveState(let token):
            guard let instance = instances[token] else { return .bytes(missing(token, request), []) }
            guard let save = table.save_state else { return .bytes(.ok, []) }
            var error = BerthErrorBuffer.make()
            let collected = SinkBuffer()
            let status = HostCall.run { collected.withSink { save(instance.pointer, $0, &error) } }
            return status == BERTH_OK ? .bytes(.ok, collected.bytes) : .bytes(Self.status(status, error), [])
        case .restoreState(let token, let state):
            guard let instance = instances[token] else { return .status(missing(token, request)) }
            guard let restore = table.restore_state else { return .status(.ok) }
            return .status(deliver(state) { bytes, error in restore(instance.pointer, bytes, error) })
        default:
            preconditionFailure("serveInstance handles instance requests only, not \(request.name)")
        }
    }

    /// berth.h's order, as in-process: every task cancelled and awaited, the instance
    /// inactive (so no new task starts), then the plugin's `deactivate`; anything still
    /// running after it is cancelled and awaited before the reply.
    private func deactivate(_ instance: WorkerInstance, table: berth_plugin_v1) -> IsolationStatus {
        instance.cancelAllTasks()
        instance.isActive = false
        var status = IsolationStatus.ok
        if let deactivate = table.deactivate {
            var error = BerthErrorBuffer.make()
            let code = HostCall.run { deactivate(instance.pointer, &error) }
            if code != BERTH_OK { status = Self.status(code, error) }
        }
        instance.cancelAllTasks()
        return status
    }

    typealias RenderTreeFunction = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<berth_render_input>?, UnsafePointer<berth_sink>?,
                                                   UnsafeMutablePointer<berth_error>?) -> berth_status

    /// Delivers an action to an active instance; returns the status and the instance.
    private func act(_ token: UInt64, name: String, payload: [UInt8], request: IsolationRequest, table: berth_plugin_v1,
                     plugin: WorkerPlugin) -> (status: IsolationStatus, instance: WorkerInstance?) {
        guard let instance = instances[token] else { return (missing(token, request), nil) }
        guard instance.isActive else {
            return (.failure(Int(BERTH_ERR_STATE), "screen \(instance.screen.hostScreenID) is not active; actions go to active screens only"), instance)
        }
        // No `action`: the action does nothing, as in process.
        guard let action = table.action else { return (.ok, instance) }
        return (deliver(payload) { bytes, error in action(instance.pointer, name, bytes, error) }, instance)
    }

    /// One `render_tree` pass over the screen's `slots`.
    private func render(_ instance: WorkerInstance, slots: [RenderSlot], _ renderTree: RenderTreeFunction) -> IsolationRenderResult {
        var error = BerthErrorBuffer.make()
        let collected = SinkBuffer()
        // The plugin reads its slots from the batch; a state_read or state_write it still
        // makes goes to the host like any other call (so the host marks it for the GC).
        let status = HostCall.run { RenderInput.with(slots) { input in collected.withSink { renderTree(instance.pointer, input, $0, &error) } } }
        return IsolationRenderResult(status: status == BERTH_OK ? .ok : Self.status(status, error), tree: status == BERTH_OK ? collected.bytes : [])
    }

    /// One render pass, its `state_read`s served from `slots`.
    private func render(_ instance: WorkerInstance, slots: [IsolationStateSlot], table: berth_plugin_v1, plugin: WorkerPlugin) -> IsolationRenderResult {
        // No render function at all: an empty tree (the screen draws nothing), as in process.
        guard let render = table.render else { return IsolationRenderResult(status: .ok) }
        let batch = RenderBatch(slots: slots)
        let screen = instance.screen.hostScreenID
        let outer = renderBatches[screen]
        renderBatches[screen] = batch
        defer { renderBatches[screen] = outer }
        var error = BerthErrorBuffer.make()
        let collected = SinkBuffer()
        let status = HostCall.run { collected.withSink { render(instance.pointer, $0, &error) } }
        guard status == BERTH_OK else {
            return batch.result(status: Self.status(status, error), tree: [])
        }
        return batch.result(status: .ok, tree: collected.bytes)
    }

    /// Calls a table function that takes a payload and an error buffer.
    private func deliver(_ payload: [UInt8], _ function: (berth_bytes, UnsafeMutablePointer<berth_error>) -> berth_status) -> IsolationStatus {
        var error = BerthErrorBuffer.make()
        let status = HostCall.run {
            payload.withUnsafeBufferPointer { buffer in
                function(berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &error)
            }
        }
        return status == BERTH_OK ? .ok : Self.status(status, error)
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

    private func unsupported(_ plugin: WorkerPlugin, _ instance: WorkerInstance, _ what: String) -> IsolationStatus {
        .failure(Int(BERTH_ERR_UNSUPPORTED), "\(plugin.pluginID)/\(instance.route) \(what)")
    }

    /// The status and message a plugin call returned.
    static func status(_ code: berth_status, _ error: berth_error) -> IsolationStatus {
        IsolationStatus(code: code, message: BerthErrorBuffer.message(of: error, status: code))
    }
}
